"""``toolcall-spec ingest FILE [--jsonl]``: the answer an ingest endpoint gives, as JSON.

FILE is a batch (``{"events": [...]}``, JSON) or a JSONL file of events (``.jsonl``/``.ndjson``,
or ``--jsonl``); ``-`` reads stdin. The answer has ``status`` (the HTTP code: 200, 207, 400,
413) first, then ``accepted``, ``rejected`` and ``errors`` (``index``, for JSONL also ``line``,
and ``issues``; ``warnings`` when ingest repaired events). A JSONL file is read line by line in
constant memory, its rejections and warnings spooled to temporary files; the answer is written
once the whole input is read, so an interrupted run leaves no half-written JSON. On a terminal,
progress is shown on stderr. ``--workers N`` checks a JSONL file with N processes (stdin is read
by one); the answer is the same as with one.

Exit 0 when every event was accepted, 1 when anything was rejected (or the batch refused), 2 when
the file cannot be read.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Iterable
from typing import IO, Any, BinaryIO

import orjson

from toolcall_spec.analytics.ingest import (
    MAX_BODY_BYTES,
    ingest_body,
    jsonl_answer,
)
from toolcall_spec.cli.console import (
    JSONL_HINT,
    add_jsonl_option,
    fail,
    open_input,
    print_json,
    reads_as_jsonl,
)
from toolcall_spec.cli.progress import TerminalProgress
from toolcall_spec.typed import EventWarning, IngestAnswer


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "ingest",
        help="validate a batch or a JSONL file of tool_call events as an ingest endpoint would",
        description="Prints the ingest answer as JSON (status, accepted, rejected, errors). "
        "Exit codes: 0 all accepted, 1 anything rejected or the batch refused, 2 unreadable "
        "file.",
    )
    parser.add_argument("file", metavar="FILE", help="batch JSON or JSONL file; - for stdin")
    add_jsonl_option(parser)
    parser.add_argument(
        "--workers",
        type=_worker_count,
        default=1,
        metavar="N",
        help="check a JSONL file with N processes (same answer as one; default 1)",
    )
    return "ingest"


def _worker_count(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"expected a number of processes from 1 to 256: {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    try:
        jsonl = reads_as_jsonl(args.file, jsonl=args.jsonl)
        with open_input(args.file) as handle:
            if jsonl:
                answer = _stream_jsonl(handle, args.workers)
            else:
                answer = ingest_body(handle.read(MAX_BODY_BYTES + 1))  # enough to tell 413
                print_json(answer)
                _hint_at_jsonl(args.file, answer)
    except BrokenPipeError:
        raise  # the reader left (| head): not a read error; the CLI's guard ends quietly
    except OSError as exc:
        fail(f"{args.file}: cannot read: {exc.strerror or exc}")
        return 2
    return 0 if answer["status"] == 200 else 1


def _hint_at_jsonl(name: str, answer: IngestAnswer) -> None:
    """A file of several JSON documents was read as one batch: say how to read it as JSONL."""
    error = answer.get("error")
    if error is not None and "unexpected content after document" in error["message"]:
        fail(f"{name}: {error['message']}{JSONL_HINT}")


class WarningSpool(list[EventWarning]):
    """Where the checkers put warnings (they extend a list with ``+=``): each one is written to
    ``spool`` as a JSON array item and counted, none is kept, so memory stays flat however many
    events are repaired."""

    def __init__(self, spool: IO[str]) -> None:
        super().__init__()
        self.spool = spool
        self.written = 0

    def __iadd__(self, warnings: Iterable[EventWarning]) -> WarningSpool:  # type: ignore[override,misc]
        for warning in warnings:
            self.spool.write(_ITEM_SEPARATOR if self.written else _FIRST_ITEM)
            self.spool.write(orjson.dumps(warning).decode())
            self.written += 1
        return self


_FIRST_ITEM = "\n    "
_ITEM_SEPARATOR = ",\n    "


def _stream_jsonl(handle: BinaryIO, workers: int = 1) -> IngestAnswer:
    """Check every line, spooling the rejections and the warnings to temporary files (memory
    stays flat however many there are), then write the answer, ``status`` first, in one pass at
    the end."""
    # imported here: the worker machinery is only needed once a JSONL file is being read
    from toolcall_spec.analytics.ingest_parallel import (  # noqa: PLC0415
        iter_jsonl_rejections_parallel,
    )

    counts = [0, 0]
    progress = TerminalProgress.for_stderr(handle)
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8") as spool,
        tempfile.TemporaryFile("w+", encoding="utf-8") as warning_spool,
    ):
        warnings = WarningSpool(warning_spool)
        separator = _FIRST_ITEM
        for rejection in iter_jsonl_rejections_parallel(
            handle, workers, counts, progress, warnings
        ):
            spool.write(separator + orjson.dumps(rejection).decode())
            separator = _ITEM_SEPARATOR
        if progress is not None:
            progress.done()
        answer = jsonl_answer(counts[0], counts[1])  # the warnings were spooled: written below
        head = {key: value for key, value in answer.items() if key != "errors"}
        out = sys.stdout
        out.write(orjson.dumps(head, option=orjson.OPT_INDENT_2).decode()[:-2])
        _write_array(out, "errors", spool, counts[1])
        if warnings.written:
            _write_array(out, "warnings", warning_spool, warnings.written)
        out.write("\n}\n")
    return answer


def _write_array(out: IO[str], name: str, spool: IO[str], count: int) -> None:
    """``, "name": [...]`` with the items spooled (each written as ``_FIRST_ITEM`` or
    ``_ITEM_SEPARATOR`` then the item), indented as ``OPT_INDENT_2`` would."""
    out.write(f',\n  "{name}": [')
    spool.seek(0)
    shutil.copyfileobj(spool, out)
    out.write("\n  ]" if count else "]")
