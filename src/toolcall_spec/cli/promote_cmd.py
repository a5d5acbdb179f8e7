"""``toolcall-spec promote RUNLOG``: turn a recorded run's event log into a suite whose fixtures
reproduce every call (failed calls as ``isError: true`` entries), printed as JSON.

RUNLOG is JSONL (one run event per line; ``.jsonl``/``.ndjson``), a JSON array of events, or the
output of ``toolcall-spec replay`` (an object with ``events``); ``-`` reads standard input. Exit 0
with the suite (warnings on stderr), 1 when the log has problems (each on stderr as
``RUNLOG: path: message``), 2 when the file cannot be read.

``--from mcp-recorder|agent-vcr|mcp-vcr|mcp-cassette|mcp-rec|cassette`` reads a cassette of
another MCP recorder instead (one JSON document, or JSON lines: mcp-vcr's NDJSON transcript,
mcp-rec's JSONL; ``cassette`` recognizes
the format): each recorded ``tools/call`` becomes an entry, failures kept
(``toolcall_spec.mcp.cassettes``).

RUNLOG may also be the journal ``toolcall-spec record`` keeps beside its suite
(``SUITE.journal``, left behind when the recorder was killed): the suite it holds is printed,
built as the recorder builds it at exit (``toolcall_spec.replay.journal``).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from toolcall_spec.cli.console import add_jsonl_option, fail, print_json
from toolcall_spec.loading import (
    MAX_DOCUMENT_BYTES,
    DocumentError,
    is_jsonl_path,
    parse_json,
    parse_jsonl_line,
)

T = TypeVar("T")

if TYPE_CHECKING:
    from toolcall_spec.replay.promote import Promotion


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "promote", help="promote a recorded run's event log into a replayable suite"
    )
    parser.add_argument(
        "runlog",
        metavar="RUNLOG",
        help="the event log (JSONL or JSON), or a recording's journal; - for stdin",
    )
    parser.add_argument(
        "--from",
        dest="source_format",
        choices=("log", "cassette", *CASSETTE_FORMATS),
        default="log",
        help="what RUNLOG is: an OpenWOP event log (log, the default), or a cassette of "
        "mcp-recorder, agent-vcr, mcp-vcr, mcp-cassette or mcp-rec (cassette: recognize which)",
    )
    parser.add_argument(
        "--suite-id", metavar="ID", help="the suite id (default: recorded.evals.<RUNLOG's name>)"
    )
    parser.add_argument(
        "--keep-secrets",
        action="store_true",
        help="with a cassette: keep its secrets; by default they are [SECRET_REDACTED], as "
        "record writes them",
    )
    add_jsonl_option(parser)
    return "promote"


CASSETTE_FORMATS = ("mcp-recorder", "agent-vcr", "mcp-vcr", "mcp-cassette", "mcp-rec")
"""The cassette formats ``--from`` names (``toolcall_spec.mcp.cassettes.FORMATS``)."""


def run(args: argparse.Namespace) -> int:
    if args.source_format != "log":
        return _import_cassette(args)
    promotion = _read_or_fail(
        args.runlog,
        lambda: _promote_source(args.runlog, jsonl=args.jsonl, suite_id=args.suite_id),
    )
    if promotion is None:
        return 2
    for problem in promotion.problems:
        print(f"{args.runlog}: {problem}", file=sys.stderr)
    if promotion.suite is None:
        return 1
    print_json(promotion.suite)
    return 0


def _promote_source(source: str, *, jsonl: bool = False, suite_id: str | None = None) -> Promotion:
    from toolcall_spec.replay.journal import is_journal  # noqa: PLC0415
    from toolcall_spec.replay.promote import promote, promote_jsonl  # noqa: PLC0415

    raw = _read_all(source)
    if not raw.strip():
        raise DocumentError("the log is empty: nothing to promote")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DocumentError("the log is not UTF-8 text (a binary file?)") from None
    if is_journal(raw):
        return _journal_suite(raw, suite_id)
    if jsonl or is_jsonl_path(source):
        return promote_jsonl(io.BytesIO(raw), suite_id=suite_id)
    try:
        document = parse_json(raw)
    except DocumentError:
        return promote_jsonl(io.BytesIO(raw), suite_id=suite_id)  # not one JSON text: JSONL
    if isinstance(document, list):
        return promote(document, suite_id=suite_id)
    if isinstance(document, dict) and isinstance(document.get("events"), list):
        return promote(document["events"], at=["events"], suite_id=suite_id)
    return promote_jsonl(io.BytesIO(raw), suite_id=suite_id)  # a one-line JSONL log


def _journal_suite(raw: bytes, suite_id: str | None) -> Promotion:
    """A recording's journal: the suite it holds; skipped lines are warnings."""
    from toolcall_spec.problems import Problem  # noqa: PLC0415
    from toolcall_spec.replay.journal import read_journal  # noqa: PLC0415
    from toolcall_spec.replay.promote import Promotion  # noqa: PLC0415

    read = read_journal(raw)
    where = [line.partition(": ") for line in read.skipped]
    warnings = [Problem(place, message, "warning") for place, _, message in where]
    if read.torn:
        cut = "the last line was cut short (the recorder was killed): ignored"
        warnings.append(Problem("last line", cut, "warning"))
    suite = {**read.suite, "suiteId": suite_id} if suite_id else read.suite
    return Promotion(suite, warnings)


def _read_all(source: str) -> bytes:
    handle = sys.stdin.buffer if source == "-" else Path(source).open("rb")  # noqa: SIM115
    with handle:
        raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise DocumentError(f"log is over the limit of {MAX_DOCUMENT_BYTES:,} bytes; use JSONL")
    return raw


def _import_cassette(args: argparse.Namespace) -> int:
    from toolcall_spec.mcp.cassettes import import_cassette  # noqa: PLC0415
    from toolcall_spec.replay.promote import recorded_suite_id  # noqa: PLC0415

    yaml_hint = args.source_format in ("mcp-vcr", "cassette")
    document = _read_or_fail(
        args.runlog, lambda: _parse_cassette(_read_all(args.runlog), yaml_hint=yaml_hint)
    )
    if document is None:
        return 2
    label = "stdin" if args.runlog == "-" else Path(args.runlog).stem
    result = import_cassette(
        document,
        fmt=None if args.source_format == "cassette" else args.source_format,
        suite_id=args.suite_id or recorded_suite_id(label),
        keep_secrets=args.keep_secrets,
    )
    for problem in [*result.problems, *result.warnings]:
        print(f"{args.runlog}: {problem}", file=sys.stderr)
    if result.suite is None:
        return 1
    print_json(result.suite)
    return 0


def _parse_cassette(raw: bytes, *, yaml_hint: bool) -> Any:
    """One JSON document, or JSON lines (mcp-vcr's NDJSON transcript) as the list of the lines'
    values; when it is neither, the error the document got (and, for mcp-vcr, what to do with its
    default YAML transcript, which is not read as such: this package has no YAML parser)."""
    try:
        return parse_json(raw)
    except DocumentError as exc:
        lines = [parse_jsonl_line(line) for line in raw.split(b"\n")]
        values = [line for line in lines if line is not None]
        if values and all(error is None for _, error in values):
            return [value for value, _ in values]
        if not yaml_hint:
            raise
        hint = "mcp-vcr's YAML transcript is read once converted to JSON, or record --format ndjson"
        raise DocumentError(f"{exc}; {hint}") from None


def _read_or_fail(source: str, read: Callable[[], T]) -> T | None:
    """What ``read`` returns, or ``None`` after one line on stderr naming ``source`` and why it
    could not be read."""
    try:
        return read()
    except DocumentError as exc:
        fail(f"{source}: {exc}")
    except OSError as exc:
        fail(f"{source}: cannot read: {exc.strerror or exc}")
    return None
