"""``toolcall-spec promote RUNLOG``: turn a recorded run's event log into a suite whose fixtures
reproduce every call (failed calls as ``isError: true`` entries), printed as JSON.

RUNLOG is JSONL (one run event per line; ``.jsonl``/``.ndjson``), a JSON array of events, or the
output of ``toolcall-spec replay`` (an object with ``events``); ``-`` reads standard input. Exit 0
with the suite (warnings on stderr), 1 when the log has problems (each on stderr as
``RUNLOG: path: message``), 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_spec.cli.console import add_jsonl_option, fail, print_json
from toolcall_spec.loading import MAX_DOCUMENT_BYTES, DocumentError, is_jsonl_path, parse_json

if TYPE_CHECKING:
    from toolcall_spec.replay.promote import Promotion


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "promote", help="promote a recorded run's event log into a replayable suite"
    )
    parser.add_argument(
        "runlog", metavar="RUNLOG", help="the event log (JSONL or JSON); - for stdin"
    )
    add_jsonl_option(parser)
    return "promote"


def run(args: argparse.Namespace) -> int:
    try:
        promotion = _promote_source(args.runlog, jsonl=args.jsonl)
    except DocumentError as exc:
        fail(f"{args.runlog}: {exc}")
        return 2
    except OSError as exc:
        fail(f"{args.runlog}: cannot read: {exc.strerror or exc}")
        return 2
    for problem in promotion.problems:
        print(f"{args.runlog}: {problem}", file=sys.stderr)
    if promotion.suite is None:
        return 1
    print_json(promotion.suite)
    return 0


def _promote_source(source: str, *, jsonl: bool = False) -> Promotion:
    from toolcall_spec.replay.promote import promote, promote_jsonl  # noqa: PLC0415

    raw = _read_all(source)
    if not raw.strip():
        raise DocumentError("the log is empty: nothing to promote")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentError("the log is not UTF-8 text (a binary file?)") from None
    if jsonl or is_jsonl_path(source):
        return promote_jsonl(io.BytesIO(raw))
    try:
        document = parse_json(raw)
    except DocumentError:
        return promote_jsonl(io.BytesIO(raw))  # not one JSON text: read it as JSONL
    if isinstance(document, list):
        return promote(document)
    if isinstance(document, dict) and isinstance(document.get("events"), list):
        return promote(document["events"], at=["events"])
    return promote_jsonl(io.BytesIO(raw))  # a one-line JSONL log is one JSON object


def _read_all(source: str) -> bytes:
    handle = sys.stdin.buffer if source == "-" else Path(source).open("rb")  # noqa: SIM115
    with handle:
        raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"log is over the limit of {MAX_DOCUMENT_BYTES:,} bytes; use JSONL")
    return raw
