"""``toolcall-spec diff OLD NEW [--format text|json]``: classify the changes between two versions
of the schemas, as spec/compatibility.md states the policy.

OLD and NEW are two schema files, or two folders of them (an older release's ``schemas/`` and the
current one). Text output prints ``LEVEL KIND PATH: message`` per change (``FILE:PATH`` for
folders), major changes first, then the verdict: the release the changes need.

Exit 0 when no change is major, 1 when one is, 2 when an input cannot be read or is not a schema.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolcall_spec.cli.console import fail, print_json
from toolcall_spec.compat import (
    RELEASE,
    Change,
    compare,
    compare_trees,
    counts,
    read_schema,
    verdict,
)
from toolcall_spec.loading import DocumentError


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "diff",
        help="classify the changes between two versions of the schemas (major, minor, patch)",
        description="Compare two schema files or two folders of schema files and classify each "
        "change: major (a document valid before may be invalid now), minor (additive) or patch "
        "(what validates is unchanged). Exit codes: 0 nothing major, 1 a major change, 2 "
        "unreadable input.",
    )
    parser.add_argument("old", metavar="OLD", help="the older schema file or folder")
    parser.add_argument("new", metavar="NEW", help="the newer schema file or folder")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return "diff"


def run(args: argparse.Namespace) -> int:
    try:
        changes = _compare(Path(args.old), Path(args.new))
    except DocumentError as exc:
        fail(str(exc))
        return 2
    if args.format == "json":
        print_json(
            {
                "verdict": verdict(changes),
                "counts": counts(changes),
                "changes": [change.as_dict() for change in changes],
            }
        )
    else:
        _print_text(changes)
    return 1 if verdict(changes) == "major" else 0


def _compare(old: Path, new: Path) -> list[Change]:
    for path in (old, new):
        if not path.exists():
            raise DocumentError(f"{path}: no such file or folder")
    if old.is_dir() and new.is_dir():
        return compare_trees(old, new)
    if old.is_dir() or new.is_dir():
        raise DocumentError(
            f"{old} and {new}: give two schema files or two folders, not one of each"
        )
    return compare(read_schema(old), read_schema(new))


def _print_text(changes: list[Change]) -> None:
    for change in changes:
        print(change)
    level = verdict(changes)
    tally = ", ".join(f"{n} {name}" for name, n in counts(changes).items())
    print(f"verdict: {level or 'none'} ({tally}): {RELEASE[level]}")
