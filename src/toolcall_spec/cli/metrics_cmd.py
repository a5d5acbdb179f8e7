"""``toolcall-spec metrics FILE [--format text|json]``: error rate and category breakdown of the
``tool_call`` events in a JSONL file (read line by line) or a batch JSON file.

``error_rate = count(status = error) / count(tool_call)``; the breakdown groups errors by
``coalesce(error_category, 'unknown')``. Events recorded as successes whose captured output has
``isError: true`` (from SDKs before the rule) are counted as ``reclassified`` and included in the
corrected rate. Exit 0 when every line was a valid event, 1 when some were skipped as invalid, 2
when the file cannot be read.

``metrics --store URL [--project ID]`` computes the same figures inside a store's engine (a
DuckDB file or ``clickhouse://host:port/db``), plus the breakdowns by tool and by day.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolcall_spec.analytics.metrics import error_metrics, jsonl_error_metrics
from toolcall_spec.cli.console import (
    DocumentError,
    add_jsonl_option,
    fail,
    open_input,
    print_json,
    read_document,
    reads_as_jsonl,
)
from toolcall_spec.cli.metrics_text import render_text


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "metrics",
        help="error rate and error categories of the tool_call events in a file",
        description="Counts only schema-valid tool_call events. Exit codes: 0 every event "
        "counted, 1 some lines skipped as invalid, 2 unreadable file.",
    )
    parser.add_argument(
        "file", metavar="FILE", nargs="?", help="JSONL or batch JSON file; - for stdin"
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="compute inside a store instead (events.duckdb or clickhouse://host:port/db)",
    )
    parser.add_argument("--project", help="with --store: only this project's events")
    add_jsonl_option(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")
    return "metrics"


def run(args: argparse.Namespace) -> int:
    if (args.store is None) == (args.file is None):
        fail("give either FILE or --store URL")
        return 2
    if args.project is not None and args.store is None:
        fail("--project needs --store (a file's events are counted whatever their project)")
        return 2
    if args.store is not None:
        from toolcall_spec.cli.store_metrics import run_store_metrics  # noqa: PLC0415

        return run_store_metrics(args.store, args.project, args.format)
    try:
        if reads_as_jsonl(args.file, jsonl=args.jsonl):
            with open_input(args.file) as handle:
                metrics = jsonl_error_metrics(handle)
        else:
            document = read_document(args.file)
            events = document.get("events") if isinstance(document, dict) else None
            metrics = error_metrics(events if isinstance(events, list) else [document])
    except (DocumentError, OSError) as exc:
        fail(f"{args.file}: {exc}")
        return 2
    if args.format == "json":
        print_json(metrics.as_dict())
    else:
        print(render_text(metrics))
    return 1 if metrics.skipped or metrics.unreadable else 0
