"""``toolcall-spec new suite [-o FILE]``: a starter suite to edit, from the packaged template
(data/templates/suite.json; examples/templates/suite.json is an identical copy): one task whose
first tool call is answered by a recorded failure (``isError: true``) and whose second by a
success. The "write your first suite" tutorial starts here."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolcall_spec.cli.console import fail
from toolcall_spec.filesystem import write_file_atomically
from toolcall_spec.package_data import read_text

TEMPLATES = {"suite": "data/templates/suite.json"}
"""Each kind of document ``new`` can start, and its packaged template."""


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser("new", help="start a document from a template (a suite)")
    parser.add_argument("what", choices=tuple(TEMPLATES), help="what to start: suite")
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write it to FILE (refused when FILE exists) instead of standard output",
    )
    return "new"


def run(args: argparse.Namespace) -> int:
    text = read_text(TEMPLATES[args.what])
    if args.output is None:
        sys.stdout.write(text)
        return 0
    target = Path(args.output)
    if target.exists():
        fail(f"{target}: exists; choose another name or remove it")
        return 2
    write_file_atomically(target, text.encode())
    print(f"wrote {target}: edit it, then `toolcall-spec validate {target}`", file=sys.stderr)
    return 0
