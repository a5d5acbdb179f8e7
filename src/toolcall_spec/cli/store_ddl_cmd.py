"""``toolcall-spec store-ddl [--cluster NAME] [--database DB] [--second-times]``: the ClickHouse
DDL of the store, printed: what the store runs itself when it opens
``clickhouse://host:port/DB`` (``?cluster=NAME``), for an operator who creates the tables with
another user, or reviews them first. The text comes from the store's own DDL
(``toolcall_spec.analytics.store.clickhouse_ddl``); nothing connects to a server.

With ``--cluster``: the statements every node of the cluster runs (a local
``ReplacingMergeTree`` and a ``Distributed`` table sharded by ``cityHash64(project_id,
event_id)``); without: the table of a single server. ``--second-times``: ``DateTime('UTC')``
time columns, for a server without ``DateTime64`` (before 20.1, such as Debian's 18.16).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "store-ddl",
        help="print the ClickHouse DDL of the store (a single server, or a cluster's shards)",
        description="Print the statements the ClickHouse store runs when it opens "
        "clickhouse://host:port/DB (?cluster=NAME), one per line group, each ended by ';'.",
    )
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        help="a cluster of the servers' remote_servers: the statements every node runs",
    )
    parser.add_argument(
        "--database", metavar="DB", default="default", help="the database (default: default)"
    )
    parser.add_argument(
        "--second-times",
        action="store_true",
        help="DateTime('UTC') time columns, for a server without DateTime64 (18.16)",
    )
    return "store-ddl"


def run(args: argparse.Namespace) -> int:
    from toolcall_spec.analytics.store.base import StoreError  # noqa: PLC0415
    from toolcall_spec.analytics.store.clickhouse_ddl import (  # noqa: PLC0415
        MILLISECOND_TIME,
        SECOND_TIME,
        check_name,
        cluster_ddl,
        single_ddl,
    )
    from toolcall_spec.cli.console import fail  # noqa: PLC0415

    time_type = SECOND_TIME if args.second_times else MILLISECOND_TIME
    try:
        if args.cluster is None:
            statements = single_ddl(check_name("database", args.database), time_type)
            where = "the server"
        else:
            statements = cluster_ddl(args.cluster, args.database, time_type)
            where = f"every node of the cluster {args.cluster} (each shard), in this order"
    except StoreError as exc:
        fail(str(exc))
        return 2
    if not args.quiet:
        print(f"-- The toolcall-spec store's tables: run on {where}.")
        print("".join(f"{statement};\n" for statement in statements), end="")
    return 0
