"""``toolcall-spec load FILE.jsonl --store URL [--project ID]``: load an archive of ``tool_call``
events into a store (a DuckDB file, or ``clickhouse://host:port/db``).

Each line is validated as ingest would: rejected lines are reported on stderr as
``FILE:LINE: issue`` while the load goes on; an event ingest repairs (over-long text, unknown
members, ...) is stored as repaired and each change reported as ``FILE:LINE: warning: change``; a
repeated ``event_id`` is stored once. Memory stays flat whatever the file's size. Prints the
counts as JSON (``accepted``, ``rejected``, ``warnings``, ``stored``: the events the store holds
for the project afterwards). Exit 0 all loaded, 1 some lines rejected,
2 unreadable file or unusable store.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from toolcall_spec.cli.console import fail, open_input, print_json
from toolcall_spec.typed import EventRejection, EventWarning

DEFAULT_PROJECT = "default"


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "load",
        help="load a JSONL file of tool_call events into a DuckDB or ClickHouse store",
        description="Exit codes: 0 every line loaded, 1 some lines rejected, 2 unreadable "
        "file or unusable store.",
    )
    parser.add_argument("file", metavar="FILE", help="JSONL file of events; - for stdin")
    parser.add_argument(
        "--store", required=True, metavar="URL", help="events.duckdb or clickhouse://host:port/db"
    )
    parser.add_argument(
        "--project",
        default=DEFAULT_PROJECT,
        help=f"project the events are stored under (default {DEFAULT_PROJECT})",
    )
    return "load"


def run(args: argparse.Namespace) -> int:
    from toolcall_spec.analytics.store import StoreError, open_store  # noqa: PLC0415
    from toolcall_spec.analytics.store.load import load_jsonl  # noqa: PLC0415

    def report(rejection: EventRejection) -> None:
        for issue in rejection["issues"]:
            print(f"{args.file}:{rejection.get('line')}: {issue}", file=sys.stderr)

    def warn(warning: EventWarning) -> None:
        print(f"{args.file}:{warning.get('line')}: warning: {warning['message']}", file=sys.stderr)

    try:
        with open_store(args.store) as store, open_input(args.file) as handle:
            counts = load_jsonl(handle, store, args.project, report, warn)
            stored = store.count(args.project)
    except StoreError as exc:
        fail(str(exc))
        return 2
    except OSError as exc:
        fail(f"{args.file}: cannot read: {exc.strerror or exc}")
        return 2
    print_json(
        {
            "accepted": counts.accepted,
            "rejected": counts.rejected,
            "warnings": counts.warnings,
            "stored": stored,
        }
    )
    return 1 if counts.rejected else 0
