"""The ``toolcall-spec`` command line. Each subcommand lives in its own module with
``register(subparsers)`` and ``run(args) -> int``; this module only dispatches, and imports the
module of the subcommand being run and no other, so ``--help`` starts without the validators.

Exit codes everywhere: 0 success, 1 the input is invalid or a check failed, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType

from toolcall_spec import __version__
from toolcall_spec.cli.guard import run_guarded

COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate_cmd", "validate JSON or JSONL documents against the packaged schemas"),
    "schema": ("schema_cmd", "list the packaged schemas, or print one"),
    "replay": ("replay_cmd", "replay an eval suite's fixtures on the in-process reference host"),
    "promote": ("promote_cmd", "promote a recorded run's event log into a replayable suite"),
    "serve": ("serve_cmd", "serve the reference host over HTTP"),
    "conformance": (
        "conformance_cmd",
        "run the conformance legs against the embedded reference host or a v2 host",
    ),
    "classify": (
        "classify_cmd",
        "derive the analytics tool_call fields from a tool result or a thrown message",
    ),
    "ingest": (
        "ingest_cmd",
        "validate a batch or a JSONL file of tool_call events as an ingest endpoint would",
    ),
    "metrics": ("metrics_cmd", "error rate and error categories of the tool_call events in a file"),
    "diff": (
        "diff_cmd",
        "classify the changes between two versions of the schemas (major, minor, patch)",
    ),
    "load": ("load_cmd", "load a JSONL file of tool_call events into a DuckDB or ClickHouse store"),
    "serve-ingest": (
        "serve_ingest_cmd",
        "serve POST /v1/events and OTLP POST /v1/traces into DuckDB or ClickHouse",
    ),
    "store-ddl": (
        "store_ddl_cmd",
        "print the ClickHouse DDL of the store (a single server, or a cluster's shards)",
    ),
    "record": (
        "record_cmd",
        "record an MCP server's tool calls into a suite (a transparent stdio or HTTP proxy)",
    ),
    "serve-fixtures": (
        "serve_fixtures_cmd",
        "serve a suite task's fixtures as an MCP server (stdio or streamable HTTP)",
    ),
    "verify": (
        "verify_cmd",
        "send a recorded suite's calls to the live MCP server: isError flips, changed content, "
        "tool-contract changes",
    ),
    "new": ("new_cmd", "start a document from a template (a suite)"),
    "completion": ("completion_cmd", "print the shell completion script for bash, zsh or fish"),
}
"""Each subcommand: its module in this package and its one-line summary, in ``--help`` order."""

COMMAND_MODULES: tuple[str, ...] = tuple(module for module, _ in COMMANDS.values())

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

EXIT_1: dict[str, str] = {
    "validate": "a document is invalid",
    "schema": "(not used)",
    "replay": "the host refused the suite (the error envelope is printed) or the suite failed",
    "promote": "the event log cannot be promoted",
    "serve": "(not used)",
    "conformance": "a leg failed or was blocked",
    "classify": "(not used)",
    "ingest": "an event was rejected, or the batch or stream refused",
    "metrics": "a line could not be read as an event (it is skipped)",
    "diff": "a change is major (breaking)",
    "load": "some lines were rejected (each is reported on stderr)",
    "serve-ingest": "--workers N cannot go on (every worker ended at once, one could not be "
    "started again, more than 10 restarts in a minute)",
    "store-ddl": "(not used)",
    "record": "the MCP server ended the session before the client did",
    "serve-fixtures": "the suite is invalid (each problem is printed on stderr)",
    "verify": "what --fail-on names was found (breaking, the default: an isError flip, a removed "
    "tool, a breaking inputSchema change; changed: any difference)",
    "new": "(not used)",
    "completion": "(not used)",
}
"""What exit status 1 means for each subcommand; 0 and 2 mean the same everywhere."""

EXIT_MORE: dict[str, dict[int, str]] = {
    "serve-fixtures": {
        3: "the session ended (stdin closed, SIGTERM) but a call missed the fixtures "
        "(fixtureMissCount > 0)",
    },
}
"""The statuses a subcommand has beyond 0, 1, 2 and 130 (serve-fixtures' 3 is
``serve_fixtures_cmd.MISSED``; a test holds the two together)."""


def exit_codes(command: str) -> str:
    more = "".join(f"  {code}  {text}\n" for code, text in EXIT_MORE.get(command, {}).items())
    return (
        "exit status:\n"
        "  0  success\n"
        f"  1  {EXIT_1[command]}\n"
        "  2  usage error, unreadable or unparsable input, or an I/O error\n"
        f"{more}"
        "  130  interrupted (Ctrl-C); no partial output file is left behind"
    )


def build_parser(
    commands: Sequence[str] | None = None,
) -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    """The parser with the full options of ``commands`` (all when ``None``); every other
    subcommand is listed with its summary only, so its module is not imported."""
    parser = argparse.ArgumentParser(
        prog="toolcall-spec",
        description="Spec-as-code for agent tool calls: a tool result is an error exactly\n"
        "when isError is the JSON boolean true.",
        epilog="exit status: 0 success, 1 the input is invalid or a check failed,\n"
        "  2 usage or I/O error, 130 interrupted.\n"
        "Run `toolcall-spec COMMAND --help` for its options and what 1 means for it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    wanted = COMMANDS if commands is None else commands
    handlers: dict[str, ModuleType] = {}
    for name, (module_name, summary) in COMMANDS.items():
        if name not in wanted:
            subparsers.add_parser(name, help=summary, add_help=False)
            continue
        module = import_module(f"{__name__}.{module_name}")
        handlers[module.register(subparsers)] = module
        _add_common_options(subparsers.choices[name], name)
    return parser, handlers


def _add_common_options(subparser: argparse.ArgumentParser, name: str) -> None:
    subparser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print nothing on standard output; the exit status tells the result",
    )
    subparser.epilog = exit_codes(name)
    subparser.formatter_class = argparse.RawDescriptionHelpFormatter


def _command_in(argv: Sequence[str]) -> list[str]:
    """The subcommand named by ``argv`` (the first argument that is not an option), if known."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return [first] if first in COMMANDS else []


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None and "_ARGCOMPLETE" in os.environ:
        _complete()
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser, handlers = build_parser(_command_in(arguments))
    args = parser.parse_args(arguments)
    return run_guarded(handlers[args.command].run, args)


def _complete() -> None:
    """Called by the shell's completion script (``toolcall-spec completion SHELL``): answers with
    the candidates for the word being typed, from the full parser, and exits."""
    import argcomplete  # noqa: PLC0415  (only while completing)

    parser, _ = build_parser()
    argcomplete.autocomplete(parser)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
