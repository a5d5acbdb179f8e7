"""Whole versions: two folders of schema files (an older release's ``schemas/`` and the current
one), or two single schemas. A schema file removed is a major change, one added is minor."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolcall_spec.compat import combinators, containers, scalars
from toolcall_spec.compat.changes import Change, ordered
from toolcall_spec.compat.keywords import Family
from toolcall_spec.compat.locations import Side
from toolcall_spec.compat.walk import walk_documents
from toolcall_spec.json_paths import ROOT
from toolcall_spec.loading import DocumentError, read_json_file
from toolcall_spec.validation import MAX_DEPTH, structure_problems

Schema = dict[str, Any] | bool

KEYWORD_FAMILIES: tuple[Family, ...] = (
    scalars.dialect,
    scalars.compare,
    containers.objects,
    containers.arrays,
    combinators.conjuncts,
    combinators.alternatives,
    combinators.conditional,
    combinators.negation,
    scalars.others,
    containers.definitions,
)
"""The keyword families the walk asks at every pair of schema bodies, in this order. Assembled
here, above both the walk and the families, so neither imports the other."""


def compare(old: Schema, new: Schema) -> list[Change]:
    """Every change from ``old`` to ``new``, two versions of one JSON Schema (draft 2020-12).

    References into other files cannot be followed here: the same reference on both sides is
    taken as unchanged, a changed one is major. ``compare_trees`` follows them."""
    return compare_documents({"": old}, {"": new})


def compare_documents(old: Mapping[str, Schema], new: Mapping[str, Schema]) -> list[Change]:
    """Every change between two versions given as schema files by relative path
    (``suites/agent-eval-suite.schema.json``), major changes first. A schema nested deeper than
    ``toolcall_spec.validation.MAX_DEPTH`` levels raises
    ``toolcall_spec.loading.DocumentError``: no verdict is better than a wrong one."""
    for version, documents in (("old", old), ("new", new)):
        for name, schema in documents.items():
            _refuse_unusable(version, name, schema)
    found: list[Change] = []
    for name in sorted(old.keys() - new.keys()):
        message = "schema file removed: documents and schemas that use it lose it"
        found.append(Change(ROOT, "schema-removed", "major", message, ROOT, name))
    for name in sorted(new.keys() - old.keys()):
        found.append(Change(ROOT, "schema-added", "minor", "schema file added", ROOT, name))
    try:
        found += walk_documents(
            Side(old), Side(new), sorted(old.keys() & new.keys()), KEYWORD_FAMILIES
        )
    except RecursionError:  # within the depth limit this is not expected; never a verdict then
        raise DocumentError(
            "the schemas are nested too deeply to compare; no verdict was reached"
        ) from None
    return ordered(found)


def _refuse_unusable(version: str, name: str, schema: Schema) -> None:
    problems = structure_problems(schema)
    if problems:
        where = f"{name}: " if name else ""
        raise DocumentError(
            f"{version} schema {where}{problems[0].path}: {problems[0].message}; too deep to "
            f"compare (the limit is {MAX_DEPTH} levels of arrays and objects)"
            if "nested deeper" in problems[0].message
            else f"{version} schema {where}{problems[0].path}: {problems[0].message}"
        )


def compare_trees(old_dir: str | Path, new_dir: str | Path) -> list[Change]:
    """``compare_documents`` over two folders of ``*.json`` schema files."""
    return compare_documents(load_tree(old_dir), load_tree(new_dir))


def load_tree(folder: str | Path) -> dict[str, Schema]:
    """Every ``*.json`` file below ``folder``, by path relative to it. Raises
    ``toolcall_spec.loading.DocumentError`` naming the file that cannot be used."""
    root = Path(folder)
    if not root.is_dir():
        raise DocumentError(f"{folder}: not a folder")
    found = {
        path.relative_to(root).as_posix(): read_schema(path)
        for path in sorted(root.rglob("*.json"))
        if path.is_file()
    }
    if not found:
        raise DocumentError(f"{folder}: no schema files (*.json) in it")
    return found


def read_schema(path: str | Path) -> Schema:
    """One schema file; ``DocumentError`` when it is not JSON or not a schema."""
    try:
        value = read_json_file(path)
    except DocumentError as exc:
        raise DocumentError(f"{path}: {exc}") from None
    if not isinstance(value, (dict, bool)):
        raise DocumentError(f"{path}: not a JSON Schema (an object or a boolean)")
    return value
