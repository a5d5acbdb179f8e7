"""``toolcall-spec replay SUITE [--capabilities FILE] [--mode M]``: run a suite on the in-process
reference host and print ``{"events": [...], "summary": {...}}``.

Exit 0 when the run completed (whatever its score), 1 when the host refused the run (the error
envelope is printed: an invalid suite is a refusal too), 2 when a file cannot be read or the
capability document is invalid.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

import orjson

from toolcall_spec.cli.console import (
    DocumentError,
    add_jsonl_option,
    fail,
    open_input,
    read_document,
    reads_as_jsonl,
)
from toolcall_spec.cli.suite_input import read_suite
from toolcall_spec.loading import iter_jsonl


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "replay", help="replay an eval suite's fixtures on the in-process reference host"
    )
    parser.add_argument(
        "suite", metavar="SUITE", help="the suite JSON file (or a recording's journal); - for stdin"
    )
    parser.add_argument(
        "--capabilities",
        metavar="FILE",
        help="the host's discovery document (default: the reference host's own)",
    )
    parser.add_argument(
        "--mode", help="the eval mode to run (default: the first mode the suite declares)"
    )
    parser.add_argument(
        "--format",
        choices=("json", "timeline"),
        default="json",
        help="json (default): events and summary; timeline: one readable line per event",
    )
    add_jsonl_option(parser)
    return "replay"


def default_mode(suite: Any) -> str:
    """The suite's first declared mode, or ``golden`` when it declares none readable."""
    modes = suite.get("modes") if isinstance(suite, Mapping) else None
    if isinstance(modes, list) and modes and isinstance(modes[0], str):
        return modes[0]
    return "golden"


def run(args: argparse.Namespace) -> int:
    from toolcall_spec.host.reference import InvalidCapabilitiesError, ReferenceHost  # noqa: PLC0415

    documents: list[Any] = []
    jsonl = reads_as_jsonl(args.suite, jsonl=args.jsonl)
    sources = (None if jsonl else args.suite, args.capabilities)
    for source, read in zip(sources, (read_suite, read_document), strict=True):
        try:
            documents.append(None if source is None else read(source))
        except DocumentError as exc:
            fail(f"{source}: {exc}")
            return 2
    suite, capabilities = documents
    try:
        host = ReferenceHost(capabilities)
    except InvalidCapabilitiesError as exc:
        fail(f"{args.capabilities}: {exc}")
        return 2
    if jsonl:
        return _replay_lines(host, args)
    code, output = _replay(host, suite, args)
    sys.stdout.write(output)
    return code


def _replay(
    host: Any, suite: Any, args: argparse.Namespace, *, compact: bool = False
) -> tuple[int, str]:
    """Exit code and output of one suite: its events and summary, or the refusal envelope."""
    from toolcall_spec.replay.refusal import RunRefused  # noqa: PLC0415

    dump = orjson.dumps if compact else partial(orjson.dumps, option=orjson.OPT_INDENT_2)
    try:
        run_id = host.create_run(suite, mode=args.mode or default_mode(suite))
    except RunRefused as refusal:
        return 1, dump(refusal.envelope).decode() + "\n"
    if args.format == "timeline":
        from toolcall_spec.cli.timeline import timeline  # noqa: PLC0415

        return 0, timeline(host.events(run_id), host.summary(run_id))
    return 0, dump({"events": host.events(run_id), "summary": host.summary(run_id)}).decode() + "\n"


def _replay_lines(host: Any, args: argparse.Namespace) -> int:
    """``--jsonl``: one suite a line; one answer a line (JSON), or a timeline per suite."""
    worst = 0
    with open_input(args.suite) as handle:
        for number, suite, error in iter_jsonl(handle):
            if error is not None:
                fail(f"{args.suite}:{number}: {error}")
                worst = 2
                continue
            code, output = _replay(host, suite, args, compact=True)
            if args.format == "timeline":
                output = f"== {args.suite}:{number}\n{output}"
            sys.stdout.write(output)
            worst = max(worst, code)
    return worst
