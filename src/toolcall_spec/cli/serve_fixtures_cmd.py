"""``toolcall-spec serve-fixtures SUITE [--task ID] [--log FILE] [--http] [--inject SPEC]...
[--pace recorded] [-- LIVE SERVER CMD... | --upstream URL]``: an MCP server answering
``tools/call`` from a task's fixtures.

Over stdio by default (an MCP client launches it as its server command); with ``--http``, streamable
HTTP on loopback, printing ``serving on URL`` once the socket is bound (``--port 0``, the default,
picks a free port). A miss goes to the live server only under the task's ``onMiss: live``.

When the session ends (the client closes stdin, SIGTERM, Ctrl-C), ``--log FILE`` gets the run's
event log and summary as one JSON object ``{"events": [...], "summary": {...}}``, written
atomically. ``--inject SPEC`` (replay/injection.py) answers chosen calls with a tool error of its
own, or late; ``--pace recorded`` answers each entry as late as it was answered when recorded
(``record --timings``). Exit 0 after a session (the client closed stdin, SIGTERM), 1 when the
suite is invalid (each problem on stderr), 2 on a usage or I/O error (unknown task, ``onMiss:
live`` without a live server, a port taken, a bad ``--inject``, ``--pace`` without durations), 3
when the session ended so but a call missed the fixtures (``fixtureMissCount`` > 0: a CI run fails
on it), 130 after Ctrl-C (SIGINT).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from toolcall_spec.cli.console import (
    LiveCommandAfterDashes,
    fail,
    http_url,
    port_number,
)
from toolcall_spec.cli.suite_input import valid_suite
from toolcall_spec.filesystem import write_file_atomically
from toolcall_spec.replay.injection import Injection, InjectSpecError, parse_injection

if TYPE_CHECKING:
    import socket

    from toolcall_spec.mcp.fixture_server import FixtureReplay


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "serve-fixtures",
        help="serve a suite task's fixtures as an MCP server (stdio or streamable HTTP)",
        description="Answer an MCP client's tools/call from a suite task's fixtures, by the "
        "replay rules: first unconsumed matching entry, consumed once served; isError: true "
        "entries as tool errors; misses by the task's onMiss. After --: the command of the live "
        "MCP server (stdio) that answers misses under onMiss: live.",
        usage="toolcall-spec serve-fixtures SUITE [options] [-- LIVE SERVER CMD...]",
    )
    parser.__class__ = LiveCommandAfterDashes
    parser.add_argument(
        "suite", metavar="SUITE", help="the suite JSON file (or a recording's journal)"
    )
    parser.add_argument("--task", metavar="ID", help="the task to serve (default: the only one)")
    parser.add_argument(
        "--log",
        metavar="FILE",
        help='write {"events": [...], "summary": {...}} here when the session ends',
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        type=http_url,
        help="the live MCP server over streamable HTTP (instead of -- CMD)",
    )
    parser.add_argument(
        "--http", action="store_true", help="serve streamable HTTP instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1", help="--http address (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=0, help="--http port (default 0: a free one)"
    )
    parser.add_argument(
        "--agent-id",
        type=_agent_id,
        default="mcp-client",
        help="the agentId of the logged tool events (default mcp-client)",
    )
    parser.add_argument(
        "--inject",
        metavar="SPEC",
        type=_injection,
        action="append",
        default=[],
        help="answer chosen calls with an injected tool error or a delay (repeatable): "
        "KEY=VALUE joined by commas, keys tool (a name, or * for all; default *), "
        "call (N, the Nth call of that tool from 1, or * for all; default *), "
        "error (a bare error, or error=TEXT the client reads), delay (500ms, 2s, 1.5s). "
        "e.g. tool=lookup,call=1,error=upstream down; tool=*,delay=2s. An injected error "
        "consumes no fixture entry; counted as injectedErrorCount in --log",
    )
    parser.add_argument(
        "--pace",
        choices=("recorded",),
        help="recorded: answer each served entry as late as its call was answered when recorded "
        "(a suite recorded with record --timings)",
    )
    return "serve-fixtures"


MISSED = 3
"""The session ended as a success would (stdin closed, SIGTERM), but a call missed the fixtures."""


def _injection(text: str) -> Injection:
    try:
        return parse_injection(text)
    except InjectSpecError as exc:
        raise argparse.ArgumentTypeError(f"bad --inject {text!r}: {exc}") from None


AGENT_ID = re.compile(r"[A-Za-z0-9._~:-]{1,128}")
"""``ids.schema.json#/$defs/AuthorId``: what the events' ``agentId`` may be."""


def _agent_id(text: str) -> str:
    if not AGENT_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"not an agent id: {text!r} (1 to 128 of A-Z a-z 0-9 . _ ~ : -)"
        )
    return text


def run(args: argparse.Namespace) -> int:
    try:
        from toolcall_spec.mcp.fixture_server import (  # noqa: PLC0415
            FixtureReplay,
            NoTaskError,
            recorded_durations,
            select_task,
        )
    except ImportError as exc:
        fail(
            f"serve-fixtures needs the mcp extra ({exc.name} is missing): "
            "pip install 'toolcall-spec[mcp]'"
        )
        return 2
    suite = valid_suite(args.suite)
    if isinstance(suite, int):
        return suite
    try:
        task = select_task(suite, args.task)
    except NoTaskError as exc:
        fail(f"{args.suite}: {exc}")
        return 2
    if args.pace and recorded_durations(task) is None:
        fail(
            f"{args.suite}: --pace recorded: task {task.get('taskId')!r} keeps no durations "
            "(input.mcp.durationsMs): record it with toolcall-spec record --timings"
        )
        return 2
    replay = FixtureReplay(
        suite, task, agent_id=args.agent_id, injections=args.inject, pace=bool(args.pace)
    )
    problem = _live_problem(args, replay.on_miss)
    if problem is not None:
        fail(problem)
        return 2
    sock = None
    if args.http:
        sock = _bound(args.host, args.port)
        if sock is None:
            return 2
    return _serve(replay, args, sock)


def _live_problem(args: argparse.Namespace, on_miss: str) -> str | None:
    if args.live_command and args.upstream:
        return "give the live server once: either -- CMD or --upstream URL"
    has_live = bool(args.live_command or args.upstream)
    if on_miss == "live" and not has_live:
        return (
            f"task {args.task or '(the only one)'} says onMiss: live: give its live server "
            "with -- CMD (stdio) or --upstream URL"
        )
    if has_live and on_miss != "live":
        fail("warning: the task's onMiss is fail: the live server is never called")
    return None


def _bound(host: str, port: int) -> socket.socket | None:
    from toolcall_spec.http.server import bind, is_loopback  # noqa: PLC0415

    try:
        sock = bind(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        return None
    if not is_loopback(host):
        fail(
            f"warning: {host} is not a loopback address: anyone who can reach it gets the fixtures"
        )
    return sock


def _serve(replay: FixtureReplay, args: argparse.Namespace, sock: socket.socket | None) -> int:
    import anyio  # noqa: PLC0415

    from toolcall_spec.http.server import url_of  # noqa: PLC0415
    from toolcall_spec.mcp.fixture_server import (  # noqa: PLC0415
        build_server,
        innermost,
        live_upstream,
        serve_http,
        serve_stdio,
    )

    def write_log() -> None:
        if args.log is not None:
            _write_log(replay, Path(args.log))

    def end_on_signal(status: int) -> int:
        write_log()
        return _final_status(status, replay)

    live_named = bool(args.live_command or args.upstream)
    stage = ["connecting to the live server" if live_named else "serving"]

    async def main() -> int:
        async with live_upstream(args.live_command, args.upstream) as live:
            stage[0] = "serving"
            replay.live = live
            server = build_server(replay)
            if sock is None:
                with _protocol_stdout():
                    return await serve_stdio(server, on_stop=end_on_signal)
            serving = f"serving on {url_of(sock)}/mcp"
            return await serve_http(server, sock, ready=lambda: print(serving, flush=True))

    try:
        code = anyio.run(main)
    except Exception as exc:  # a message, never a traceback (the promise of cli/guard.py)
        leaf = innermost(exc)
        fail(f"{stage[0]} failed: {type(leaf).__name__}: {leaf}")
        code = 2
    finally:
        write_log()
    return _final_status(code, replay)


def _final_status(status: int, replay: FixtureReplay) -> int:
    """``MISSED`` instead of success when a call missed the fixtures (2 and 130 stay)."""
    if status != 0 or not replay.misses:
        return status
    fail(
        f"{replay.misses} of {replay.calls} calls missed the fixtures of task "
        f"{replay.task_id!r} (fixtureMissCount): exit status {MISSED}"
    )
    return MISSED


@contextmanager
def _protocol_stdout() -> Iterator[None]:
    """Standard output is the MCP wire over stdio: ``--quiet``, which points ``sys.stdout`` at
    the null device, must not take it from the protocol."""
    quiet, sys.stdout = sys.stdout, sys.__stdout__
    try:
        yield
    finally:
        sys.stdout = quiet


def _write_log(replay: FixtureReplay, target: Path) -> None:
    try:
        text = orjson.dumps(replay.report(), option=orjson.OPT_INDENT_2).decode() + "\n"
        write_file_atomically(target, text.encode())
    except OSError as exc:
        fail(f"{target}: cannot write the log: {exc.strerror or exc}")
