"""The requirement registry (spec/requirements.json) and the tests that witness each requirement.

A test witnesses a requirement by naming its id: ``@pytest.mark.requirement("<id>")``, or a
``pytest.param(..., marks=pytest.mark.requirement("<id>"))``. Witnesses are found by reading the
test sources (no test is imported or run), so the matrix is the same however tests are selected.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from toolcall_spec.loading import parse_json
from toolcall_spec.package_data import read_text

Level = Literal["MUST", "SHOULD", "MAY"]


@dataclass(frozen=True, slots=True)
class Requirement:
    id: str
    level: Level
    title: str
    source: str
    page: str


@dataclass(frozen=True, slots=True)
class Witness:
    """A test that names a requirement id: ``tests/<area>/test_x.py::test_name`` and its line."""

    requirement_id: str
    test: str
    line: int


@cache
def registry() -> dict[str, Requirement]:
    """Every requirement by id, in registry order."""
    text = read_text("spec/requirements.json")
    return {entry["id"]: Requirement(**entry) for entry in parse_json(text)["requirements"]}


def find_witnesses(tests_dir: Path) -> list[Witness]:
    """Every ``requirement("<id>")`` marker in the test sources below ``tests_dir``."""
    found: list[Witness] = []
    for path in sorted(tests_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        relative = path.relative_to(tests_dir.parent).as_posix()
        for test_name, node in _marker_calls(tree):
            for argument in node.args[:1]:
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    found.append(Witness(argument.value, f"{relative}::{test_name}", node.lineno))
    return found


def _marker_calls(tree: ast.Module) -> Iterator[tuple[str, ast.Call]]:
    """``(owner, call)`` for each ``….requirement(...)`` call; the owner is the outermost function
    whose decorators or body hold the call, or ``<module>`` (e.g. a module-level param list)."""
    owners: dict[int, tuple[str, ast.Call]] = {}
    for node in ast.walk(tree):  # breadth first: an outer function claims a call before an inner
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and _is_requirement_marker(sub.func):
                    owners.setdefault(id(sub), (node.name, sub))
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Call) and _is_requirement_marker(sub.func):
            yield owners.get(id(sub), ("<module>", sub))


def _is_requirement_marker(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "requirement") or (
        isinstance(func, ast.Name) and func.id == "requirement"
    )
