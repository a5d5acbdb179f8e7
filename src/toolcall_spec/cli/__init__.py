"""The ``toolcall-spec`` command line. Each subcommand lives in its own module with
``register(subparsers)`` and ``run(args) -> int``; this module only dispatches.

Exit codes everywhere: 0 success, 1 the input is invalid or a check failed, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType

from toolcall_spec import __version__

COMMAND_MODULES: tuple[str, ...] = (
    "validate_cmd",
    "schema_cmd",
    "replay_cmd",
    "promote_cmd",
    "serve_cmd",
    "conformance_cmd",
    "classify_cmd",
    "ingest_cmd",
    "metrics_cmd",
    "diff_cmd",
    "load_cmd",
    "serve_ingest_cmd",
)
"""Subcommand modules of this package, in the order ``--help`` lists them."""

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = argparse.ArgumentParser(
        prog="toolcall-spec",
        description="Spec-as-code for agent tool calls: a tool result is an error exactly "
        "when isError is the JSON boolean true.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    handlers: dict[str, ModuleType] = {}
    for name in COMMAND_MODULES:
        module = import_module(f"{__name__}.{name}")
        handlers[module.register(subparsers)] = module
    return parser, handlers


def main(argv: Sequence[str] | None = None) -> int:
    parser, handlers = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = handlers[args.command].run(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
