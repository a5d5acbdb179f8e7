"""``toolcall-spec serve-ingest --store URL --keys-file FILE``: the ingest endpoint
(``POST /v1/events``, and ``POST /v1/traces`` for OTLP/HTTP trace exports of MCP ``tools/call``
spans) on uvicorn, writing accepted events into a store.

``--store`` is a DuckDB file (the default engine, created when missing) or
``clickhouse://host:port/database``. ``--keys-file`` is a JSON object mapping each project id to
its key (``{"my-project": "a-long-random-key"}``); clients send ``Authorization: Bearer <key>``
and their events are stored under that project. Loopback by default. Prints ``serving on URL``
once the socket is bound (``--port 0`` picks a free one). Exit 2 when it cannot start.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from toolcall_spec.cli.console import fail
from toolcall_spec.loading import DocumentError, read_json_file

DEFAULT_PORT = 8766


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "serve-ingest",
        help="serve POST /v1/events and OTLP POST /v1/traces into DuckDB or ClickHouse",
        description="Exit 2 when the server cannot start (bad store, bad keys file, port taken).",
    )
    parser.add_argument(
        "--store",
        required=True,
        metavar="URL",
        help="events.duckdb, clickhouse://host:port/db or chdb://DIR",
    )
    parser.add_argument(
        "--keys-file",
        required=True,
        metavar="FILE",
        help='JSON object: project id -> its bearer key, e.g. {"shop": "k-..."}',
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0: a free port"
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    return "serve-ingest"


def run(args: argparse.Namespace) -> int:
    try:
        from toolcall_spec.analytics.store import StoreError, open_store  # noqa: PLC0415
        from toolcall_spec.http.ingest_app import IngestSettings, create_ingest_app  # noqa: PLC0415
        from toolcall_spec.http.server import (  # noqa: PLC0415
            bind,
            is_loopback,
            serve_forever,
            url_of,
        )
    except ImportError as exc:
        fail(
            f"serve-ingest needs the http extra ({exc.name} is missing): pip install "
            "'toolcall-spec[http,store]'"
        )
        return 2
    keys = read_keys(args.keys_file)
    if keys is None:
        return 2
    try:
        store = open_store(args.store)
    except StoreError as exc:
        fail(str(exc))
        return 2
    with store:
        try:
            sock = bind(args.host, args.port)
        except OSError as exc:
            fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
            return 2
        if not is_loopback(args.host):
            fail(
                f"warning: {args.host} is not a loopback address: the keys travel in clear text "
                "unless a TLS proxy stands in front"
            )
        print(f"serving on {url_of(sock)}", flush=True)
        serve_forever(
            create_ingest_app(IngestSettings(store, keys)), sock, log_level=args.log_level
        )
    return 0


def read_keys(path: str) -> dict[str, str] | None:
    """Key -> project from the keys file (project -> key); ``None`` after reporting a problem."""
    try:
        document = read_json_file(Path(path))
    except DocumentError as exc:
        fail(f"{path}: {exc}")
        return None
    if not isinstance(document, dict) or not document:
        fail(f"{path}: (root): expected a non-empty object mapping project ids to keys")
        return None
    keys: dict[str, str] = {}
    for project, key in document.items():
        if not isinstance(key, str) or len(key) < 16:
            fail(f"{path}: /{project}: the key must be a string of at least 16 characters")
            return None
        if key in keys:
            fail(f"{path}: /{project}: the same key is given to {keys[key]}")
            return None
        keys[key] = project
    return keys
