"""``toolcall-spec record --out SUITE [--events FILE|URL] [--redact] [--keep-secrets] --
SERVER CMD...``: a recording MCP proxy. Over stdio the client launches this command as its MCP
server and it launches the real one (``-- SERVER CMD...``); with ``--upstream URL`` it serves
streamable HTTP on loopback (``--host``/``--port``) and forwards to the MCP server at URL.

Every message passes both ways unchanged; each ``tools/call`` becomes a fixture entry of SUITE
(one task per client session, failures as ``isError: true``), with its secrets recorded as
``[SECRET_REDACTED]`` unless ``--keep-secrets`` (``mcp.secrets``). As calls are answered they are
appended to ``SUITE.journal`` (durably, before the client sees the answer); at exit SUITE is
written from it (atomically, durably) and the journal removed. A recording failure (a full
disk, a result JSON cannot hold) is a warning on stderr and never ends the session; the count is
shown at exit. Standard output is the MCP channel in stdio mode: everything else goes to stderr.
Exit 0 when the client ended the session (or SIGTERM), 1 when the server ended it first, 2 on a
usage error or when the server cannot be started, 3 when the session ran but SUITE could not be
written or lacks an answered call (the journal keeps what was recorded), 130 on Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_spec.cli.console import fail

if TYPE_CHECKING:
    from toolcall_spec.analytics.sinks import Sink

DEFAULT_PORT = 8767
KEY_VARIABLE = "TOOLCALL_SPEC_INGEST_KEY"
INGEST_PATH = "/v1/events"


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "record",
        help="record an MCP server's tool calls into a suite (a transparent stdio or HTTP proxy)",
        description="Put this command where the client launches its MCP server, followed by -- "
        "and the real server's command; or give --upstream URL to proxy streamable HTTP.",
    )
    parser.add_argument(
        "--out",
        required=True,
        metavar="SUITE",
        help="the suite file to write at exit (SUITE.journal beside it while recording)",
    )
    parser.add_argument(
        "--upstream", metavar="URL", help="the MCP server's streamable HTTP endpoint"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on with --upstream")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}; 0: a free port"
    )
    parser.add_argument(
        "--events",
        metavar="FILE|URL",
        help="emit one tool_call event per call: append to a JSONL file, or POST batches to an "
        f"ingest endpoint (http(s)://host[:port], {INGEST_PATH} added when missing)",
    )
    parser.add_argument(
        "--events-key",
        metavar="KEY",
        help=f"bearer key for the ingest endpoint (default: ${KEY_VARIABLE})",
    )
    parser.add_argument(
        "--redact", action="store_true", help="strip PII from the recorded responses"
    )
    parser.add_argument(
        "--keep-secrets",
        action="store_true",
        help="record secrets as they are; by default a value under a secret's name (password, "
        "apiKey, access_token ...) and a key or Bearer credential in any string is recorded as "
        "[SECRET_REDACTED], and serve-fixtures matches the call that held it all the same",
    )
    parser.add_argument(
        "--timings",
        action="store_true",
        help="keep how long each call took (the task's input.mcp.durationsMs), for "
        "serve-fixtures --pace recorded; the suite then differs from one recording to the next",
    )
    parser.add_argument(
        "--sync",
        choices=("answer", "exit"),
        default="answer",
        help="when a recorded call is made durable: answer (the default: fdatasync before the "
        "client sees the answer; kept through kill -9 and an OS crash) or exit (written before "
        "the client sees it, kept through kill -9; synced at exit: faster on a slow disk)",
    )
    parser.add_argument(
        "--suite-id", metavar="ID", help="the suite id (default: recorded.evals.<SUITE's name>)"
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long the server gets to exit before SIGTERM, then SIGKILL (default 5)",
    )
    parser.add_argument(
        "server", nargs=argparse.REMAINDER, metavar="-- SERVER CMD...", help="the server command"
    )
    return "record"


def warn(message: str) -> None:
    print(f"toolcall-spec record: {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    command = list(args.server)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.upstream):
        fail("record: give either -- SERVER CMD... (stdio) or --upstream URL (streamable HTTP)")
        return 2
    out = Path(args.out)
    if not out.parent.is_dir():
        fail(f"record: {args.out}: the directory does not exist")
        return 2
    from toolcall_spec.filesystem import declare_role  # noqa: PLC0415

    # A fault plan for the recorder (TOOLCALL_SPEC_FAULTS, the fault tests) applies from here.
    declare_role("recorder")
    try:
        from toolcall_spec.mcp.record import Recorder  # noqa: PLC0415
        from toolcall_spec.replay.promote import recorded_suite_id  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - the core needs nothing extra
        fail(f"record: {exc}")
        return 2
    try:
        events, close_events = _events_sink(args)
    except OSError as exc:
        fail(f"record: --events {args.events}: {exc.strerror or exc}")
        return 2
    recorder = Recorder(
        out,
        suite_id=args.suite_id or recorded_suite_id(out.stem),
        redact=args.redact,
        keep_secrets=args.keep_secrets,
        timings=args.timings,
        events=events,
        warn=warn,
        sync=args.sync == "answer",
    )
    try:
        status = _run_http(args, recorder) if args.upstream else _run_stdio(command, args, recorder)
    finally:
        close_events()
    return _final_status(status, recorder)


INCOMPLETE = 3
"""The session ran, but the suite could not be written or lacks an answered call."""


def _final_status(status: int, recorder: Any) -> int:
    """The proxy's exit status, unless the recording is incomplete: then say so and exit 3
    instead of 0 or 1 (2, nothing was recorded, and 130, Ctrl-C, stay)."""
    if recorder.failures:
        warn(f"{recorder.failures} recording failures during the session (see above)")
    if status not in (0, 1):
        return status
    if recorder.suite_written is False:
        warn(f"the suite was not written: {recorder.journal} holds the recording")
        return INCOMPLETE
    if recorder.dropped:
        warn(f"{recorder.dropped} answered calls could not be recorded: the suite lacks them")
        return INCOMPLETE
    if recorder.unexpected:
        warn("the recorder failed while handling a message: the suite may lack what it held")
        return INCOMPLETE
    return status


def _run_stdio(command: list[str], args: argparse.Namespace, recorder: Any) -> int:
    from toolcall_spec.mcp.stdio_proxy import StdioProxy  # noqa: PLC0415

    proxy = StdioProxy(command, recorder, log=warn, shutdown_timeout=args.shutdown_timeout)
    try:
        return proxy.run()
    except OSError as exc:
        fail(f"record: cannot start {command[0]!r}: {exc.strerror or exc}")
        return 2


def _run_http(args: argparse.Namespace, recorder: Any) -> int:
    try:
        from toolcall_spec.http.server import bind, is_loopback, serve_forever, url_of  # noqa: PLC0415
        from toolcall_spec.mcp.http_proxy import RecordingProxy  # noqa: PLC0415
    except ImportError as exc:
        fail(f"record --upstream needs the http extra ({exc.name} is missing)")
        return 2
    try:
        app = RecordingProxy(
            args.upstream, recorder, log=warn, loopback_only=is_loopback(args.host)
        )
    except ValueError as exc:
        fail(f"record: --upstream: {exc}")
        return 2
    if not is_loopback(args.host):
        warn(f"{args.host} is not a loopback address: anyone who reaches it talks to the server")
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        fail(f"record: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return 2
    serving = f"recording {args.upstream}: serving on {url_of(sock)}{app.path}"
    try:
        return serve_forever(app, sock, ready=lambda: warn(serving))
    finally:
        sock.close()
        recorder.close("the proxy stopped before the server answered")


def _events_sink(args: argparse.Namespace) -> tuple[Sink | None, Any]:
    """The sink ``--events`` names and the function that closes it."""
    target = args.events
    if not target:
        return None, lambda: None
    from toolcall_spec.analytics.sinks import IngestPostSink, JsonlFileSink  # noqa: PLC0415

    if target.startswith(("http://", "https://")):
        url = (
            target if target.rstrip("/").endswith(INGEST_PATH) else target.rstrip("/") + INGEST_PATH
        )
        key = args.events_key or os.environ.get(KEY_VARIABLE)
        poster = IngestPostSink(url, key)

        def close_poster() -> None:
            poster.close()
            if poster.lost:
                warn(f"{poster.lost} tool_call events could not be delivered to {url}")

        return poster, close_poster
    sink = JsonlFileSink(target)
    return sink, sink.close
