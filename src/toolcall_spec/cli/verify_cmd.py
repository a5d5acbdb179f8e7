"""``toolcall-spec verify SUITE [--task ID]... [--fail-on breaking|changed] [--format text|json]
-- SERVER CMD... | --upstream URL``: a recorded suite's calls against the live MCP server.

Each task's fixture entries are sent to the server as calls, in recorded order, one session per
task (``mcp.verify``). Per call: ``same``, ``content changed`` or ``isError flipped`` (the worst);
per task with a recorded tool list (``input.mcp.tools``): tools removed (breaking) or added
(compatible), and each tool's ``inputSchema`` judged by the engine of ``toolcall-spec diff``.

Exit 0 when nothing ``--fail-on`` names was found (``breaking``, the default: an ``isError``
flip, a removed tool, a breaking input schema; ``changed``: any difference), 1 when something
was, 2 on a usage or I/O error, an unreadable or invalid suite (a malformed recorded tool list
included), or a server that cannot be reached or fails during the run.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from toolcall_spec.cli.console import LiveCommandAfterDashes, fail, http_url, print_json
from toolcall_spec.cli.suite_input import valid_suite

if TYPE_CHECKING:
    from toolcall_spec.mcp.verify import ContractReport, Report

FAIL_ON = ("breaking", "changed")


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "verify",
        help="send a recorded suite's calls to the live MCP server: isError flips, changed "
        "content, tool-contract changes",
        description="Send the recorded calls of SUITE (as `toolcall-spec record` wrote it) to the "
        "live MCP server, in recorded order, one session per task, and report per call: same, "
        "content changed, or isError flipped. Where the task kept the recorded tool list, the "
        "server's tools/list is judged against it: tools removed (breaking) or added "
        "(compatible), and each inputSchema by the compatibility engine of `toolcall-spec diff`. "
        "After --: the live server's command (stdio).",
        usage="toolcall-spec verify SUITE [options] (-- SERVER CMD... | --upstream URL)",
    )
    parser.__class__ = LiveCommandAfterDashes
    parser.add_argument(
        "suite", metavar="SUITE", help="the recorded suite JSON file (or a recording's journal)"
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        type=http_url,
        help="the live MCP server over streamable HTTP (instead of -- CMD)",
    )
    parser.add_argument(
        "--task",
        metavar="ID",
        action="append",
        default=[],
        help="verify only this task (repeatable; default: every task)",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="breaking",
        help="what makes the exit status 1: breaking (the default: an isError flip, a removed "
        "tool, a breaking inputSchema change) or changed (any difference)",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--json", dest="format", action="store_const", const="json", help="--format json"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long one request may wait for its answer (default 60)",
    )
    return "verify"


def run(args: argparse.Namespace) -> int:
    if bool(args.live_command) == bool(args.upstream):
        fail("verify: give the live server once: either -- SERVER CMD... or --upstream URL")
        return 2
    try:
        from toolcall_spec.mcp.verify import verify  # noqa: PLC0415
    except ImportError as exc:
        fail(
            f"verify needs the mcp extra ({exc.name} is missing): pip install 'toolcall-spec[mcp]'"
        )
        return 2
    suite = _verifiable_suite(args)
    if isinstance(suite, int):
        return suite
    import anyio  # noqa: PLC0415

    from toolcall_spec.mcp.fixture_server import innermost  # noqa: PLC0415

    async def main() -> Report:
        return await verify(
            suite,
            command=args.live_command,
            url=args.upstream,
            task_ids=args.task,
            timeout=args.timeout,
        )

    try:
        report = anyio.run(main)
    except Exception as exc:  # a message, never a traceback (the promise of cli/guard.py)
        leaf = innermost(exc)
        fail(f"verify: the live server failed: {type(leaf).__name__}: {leaf}")
        return 2
    if args.format == "json":
        print_json(report.as_dict())
    else:
        _print_text(report)
    failing = report.verdict == "breaking" or (
        args.fail_on == "changed" and report.verdict != "same"
    )
    return 1 if failing else 0


def _verifiable_suite(args: argparse.Namespace) -> Any:
    """The suite, or exit status 2: unreadable, invalid, a malformed recorded tool list (the
    contract cannot be judged against it), or a ``--task`` it does not have."""
    from toolcall_spec.validation import recorded_tool_list_problems  # noqa: PLC0415

    suite = valid_suite(args.suite, invalid=2)
    if isinstance(suite, int):
        return suite
    if any(True for _ in recorded_tool_list_problems(suite)):
        fail(f"{args.suite}: the recorded tool list is malformed (see above): cannot verify")
        return 2
    ids = [task.get("taskId") for task in suite["tasks"]]
    unknown = [task for task in args.task if task not in ids]
    if unknown:
        fail(f"{args.suite}: no task {unknown[0]!r} (its tasks: {', '.join(map(str, ids))})")
        return 2
    return suite


def _print_text(report: Report) -> None:
    for task in report.tasks:
        print(f"{task.path} {task.task_id}: {len(task.calls)} calls")
        for call in task.calls:
            print(f"  {call.path} {call.tool}: {call.verdict}{_flip_note(call)}")
        if task.contract is None:
            print(f"  {task.path}.input.mcp.tools: no recorded tool list: contract not judged")
        else:
            _print_contract(task.contract)
    counts = ", ".join(f"{n} {name}" for name, n in report.counts().items())
    print(f"verdict: {report.verdict} ({counts})")
    sys.stdout.flush()


def _flip_note(call: Any) -> str:
    if call.verdict != "isError flipped":
        return ""
    was = "an error" if call.recorded_is_error else "a success"
    now = "an error" if call.live_is_error else "a success"
    return f" (recorded {was}, now {now})"


def _print_contract(contract: ContractReport) -> None:
    for name in contract.removed:
        print(f"  {contract.path}: breaking: tool {name!r} removed")
    for name in contract.added:
        print(f"  {contract.path}: compatible: tool {name!r} added")
    for schema in contract.schemas:
        print(f"  {schema.path} ({schema.tool}): {schema.verdict}")
        for change in schema.changes:
            print(f"    {change}")
    if contract.verdict == "same":
        print(f"  {contract.path}: same")
