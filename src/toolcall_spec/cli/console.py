"""Input and output helpers shared by the subcommands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from toolcall_spec.loading import DocumentError, read_json_file, read_json_stream


def print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def fail(message: str) -> None:
    """A one-line message on stderr, prefixed with the program name."""
    print(f"toolcall-spec: {message}", file=sys.stderr)


def read_document(source: str) -> Any:
    """One JSON document from a path, or from standard input when ``source`` is ``-``."""
    if source == "-":
        return read_json_stream(sys.stdin.buffer)
    return read_json_file(Path(source))


__all__ = ["DocumentError", "fail", "print_json", "read_document"]
