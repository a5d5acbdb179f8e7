"""``toolcall-spec schema [NAME]``: list the packaged schemas, print one, or print a kind's schema
with every ``$ref`` inlined (``--bundle KIND``)."""

from __future__ import annotations

import argparse
from typing import Any

from toolcall_spec.catalog import KINDS, SCHEMA_FILES, all_schemas, is_kind
from toolcall_spec.cli.console import fail, print_json


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser("schema", help="list the packaged schemas, or print one")
    parser.add_argument("name", nargs="?", help="a kind (e.g. suite) or a schema file path")
    parser.add_argument(
        "--bundle",
        metavar="KIND",
        choices=KINDS,
        help="print KIND's schema self-contained, every $ref inlined, for tools that cannot "
        "resolve references (e.g. check-jsonschema --schemafile). KIND: " + ", ".join(KINDS),
    )
    return "schema"


def run(args: argparse.Namespace) -> int:
    if args.bundle is not None:
        from toolcall_spec.bundling import bundle  # noqa: PLC0415

        print_json(bundle(args.bundle))
        return 0
    schemas = all_schemas()
    if args.name is None:
        kind_of = {path: kind for kind, path in SCHEMA_FILES.items()}
        for path, schema in schemas.items():
            print(f"{kind_of.get(path, '-'):<17} {path:<45} {schema['$id']}")
        return 0
    path = SCHEMA_FILES[args.name] if is_kind(args.name) else args.name
    if path not in schemas:
        fail(f"no schema named {args.name!r}; kinds: {', '.join(KINDS)}")
        return 2
    print_json(schemas[path])
    return 0
