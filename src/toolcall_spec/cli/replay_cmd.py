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
from typing import Any

from toolcall_spec.cli.console import DocumentError, fail, print_json, read_document


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "replay", help="replay an eval suite's fixtures on the in-process reference host"
    )
    parser.add_argument("suite", metavar="SUITE", help="the suite JSON file; - for stdin")
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
    return "replay"


def default_mode(suite: Any) -> str:
    """The suite's first declared mode, or ``golden`` when it declares none readable."""
    modes = suite.get("modes") if isinstance(suite, Mapping) else None
    if isinstance(modes, list) and modes and isinstance(modes[0], str):
        return modes[0]
    return "golden"


def run(args: argparse.Namespace) -> int:
    from toolcall_spec.replay.host import InvalidCapabilitiesError, ReferenceHost  # noqa: PLC0415
    from toolcall_spec.replay.refusal import RunRefused  # noqa: PLC0415

    documents: list[Any] = []
    for source in (args.suite, args.capabilities):
        try:
            documents.append(None if source is None else read_document(source))
        except DocumentError as exc:
            fail(f"{source}: {exc}")
            return 2
    suite, capabilities = documents
    try:
        host = ReferenceHost(capabilities)
    except InvalidCapabilitiesError as exc:
        fail(f"{args.capabilities}: {exc}")
        return 2
    try:
        run_id = host.create_run(suite, mode=args.mode or default_mode(suite))
    except RunRefused as refusal:
        print_json(refusal.envelope)
        return 1
    if args.format == "timeline":
        from toolcall_spec.cli.timeline import timeline  # noqa: PLC0415

        sys.stdout.write(timeline(host.events(run_id), host.summary(run_id)))
        return 0
    print_json({"events": host.events(run_id), "summary": host.summary(run_id)})
    return 0
