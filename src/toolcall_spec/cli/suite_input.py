"""The suite a command reads (``replay``, ``serve-fixtures``): a suite JSON file, or the journal
of a recording (``SUITE.journal``, read in SUITE's place while it is newer, or named itself; see
``replay.journal``). Standard input (``-``) is one JSON document."""

from __future__ import annotations

from typing import Any

from toolcall_spec.cli.console import fail, read_document
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
