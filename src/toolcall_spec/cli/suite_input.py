"""The suite a command reads (``replay``, ``serve-fixtures``): a suite JSON file, or the journal
of a recording (``SUITE.journal``, read in SUITE's place while it is newer, or named itself; see
``replay.journal``). Standard input (``-``) is one JSON document."""

from __future__ import annotations

from typing import Any

from toolcall_spec.cli.console import fail, read_document
from toolcall_spec.loading import DocumentError
from toolcall_spec.replay.journal import read_suite_source


def read_suite(source: str) -> Any:
    """The suite ``source`` names; notes about a journal read in its place go to stderr.
    ``DocumentError`` when it cannot be read."""
    if source == "-":
        return read_document(source)
    try:
        suite, notes = read_suite_source(source)
    except DocumentError:
        return read_document(source)  # the message (and hints) of the one-document reader
    for note in notes:
        fail(note)
    return suite
