"""``toolcall-spec ingest FILE [--jsonl]``: the answer an ingest endpoint gives, as JSON.

FILE is a batch (``{"events": [...]}``, JSON) or a JSONL file of events (``.jsonl``/``.ndjson``,
or ``--jsonl``); ``-`` reads stdin. The answer has ``status`` (the HTTP code: 200, 207, 400,
413), ``accepted``, ``rejected`` and ``errors`` (``index``, for JSONL also ``line``, and
``issues``). A JSONL file is read line by line in constant memory, its rejections written as they
are found; on a terminal, progress is shown on stderr. ``--workers N`` checks a JSONL file with N
processes (stdin is read by one); the answer is the same as with one.

Exit 0 when every event was accepted, 1 when anything was rejected (or the batch refused), 2 when
the file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from toolcall_spec.analytics.ingest import (
    MAX_BODY_BYTES,
    IngestAnswer,
    ingest_body,
    jsonl_answer,
)
from toolcall_spec.cli.console import fail, print_json
from toolcall_spec.cli.progress import TerminalProgress
from toolcall_spec.loading import is_jsonl_path


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "ingest",
        help="validate a batch or a JSONL file of tool_call events as an ingest endpoint would",
        description="Prints the ingest answer as JSON (status, accepted, rejected, errors). "
        "Exit codes: 0 all accepted, 1 anything rejected or the batch refused, 2 unreadable "
        "file.",
    )
    parser.add_argument("file", metavar="FILE", help="batch JSON or JSONL file; - for stdin")
    parser.add_argument("--jsonl", action="store_true", help="read FILE as JSONL whatever its name")
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
        with open_input(args.file) as handle:
            if args.jsonl or is_jsonl_path(args.file):
                answer = _stream_jsonl(handle, args.workers)
            else:
                answer = ingest_body(handle.read(MAX_BODY_BYTES + 1))  # enough to tell 413
                print_json(answer.as_dict())
    except OSError as exc:
        fail(f"{args.file}: cannot read: {exc.strerror or exc}")
        return 2
    return 0 if answer.status == 200 else 1


def open_input(name: str) -> AbstractContextManager[BinaryIO]:
    """The named file, or stdin for ``-`` (left open on exit), in binary mode."""
    if name == "-":
        return nullcontext(sys.stdin.buffer)
    return Path(name).open("rb")


def _stream_jsonl(handle: BinaryIO, workers: int = 1) -> IngestAnswer:
    """Write the answer while reading: ``errors`` first, one rejection at a time, then the counts
    (JSON members have no order), so memory stays flat however many lines are rejected."""
    # imported here: the worker machinery is only needed once a JSONL file is being read
    from toolcall_spec.analytics.ingest_parallel import (  # noqa: PLC0415
        iter_jsonl_rejections_parallel,
    )

    out = sys.stdout
    counts = [0, 0]
    progress = TerminalProgress.for_stderr(handle)
    out.write('{\n  "errors": [')
    separator = "\n    "
    for rejection in iter_jsonl_rejections_parallel(handle, workers, counts, progress):
        out.write(separator + orjson.dumps(rejection.as_dict()).decode())
        separator = ",\n    "
    if progress is not None:
        progress.done()
    out.write("\n  ]," if counts[1] else "],")
    answer = jsonl_answer(counts[0], counts[1])
    tail = {key: value for key, value in answer.as_dict().items() if key != "errors"}
    out.write(orjson.dumps(tail, option=orjson.OPT_INDENT_2).decode()[1:] + "\n")
    return answer
