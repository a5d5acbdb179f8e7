"""The suite a command reads (``replay``, ``serve-fixtures``): a suite JSON file, or the journal
of a recording (``SUITE.journal``, read in SUITE's place while it is newer, or named itself; see
``replay.journal``). Standard input (``-``) is one JSON document."""

from __future__ import annotations

import sys
from typing import Any

from toolcall_spec.cli.console import DocumentError, fail, read_document
from toolcall_spec.replay.journal import journal_source


def read_suite(source: str) -> Any:
    """The suite ``source`` names; notes about a journal read in its place go to stderr.
    ``DocumentError`` when it cannot be read."""
    found = None if source == "-" else journal_source(source)
    if found is None:
        return read_document(source)
    suite, notes = found
    for note in notes:
        fail(note)
    return suite


def valid_suite(source: str, *, invalid: int = 1) -> Any:
    """The suite ``source`` names, validated; each problem goes to stderr. The exit status
    instead when it cannot be read (2) or is invalid (``invalid``)."""
    from toolcall_spec.validation import validate  # noqa: PLC0415  (the validators: only here)

    try:
        suite = read_suite(source)
    except DocumentError as exc:
        fail(f"{source}: {exc}")
        return 2
    problems = validate(suite, "suite")
    for problem in problems:
        print(f"{source}: {problem}", file=sys.stderr)
    if any(problem.severity == "error" for problem in problems):
        return invalid
    return suite
