"""``toolcall-spec serve-ingest --store URL --keys-file FILE``: the ingest endpoint
(``POST /v1/events``, and ``POST /v1/traces`` for OTLP/HTTP trace exports of MCP ``tools/call``
spans) on uvicorn, writing accepted events into a store.

``--store`` is a DuckDB file (the default engine, created when missing) or
``clickhouse://host:port/database``. ``--keys-file`` is a JSON object mapping each project id to
its key (``{"my-project": "a-long-random-key"}``); clients send ``Authorization: Bearer <key>``
and their events are stored under that project. Loopback by default. Prints ``serving on URL``
once the socket is bound (``--port 0`` picks a free one). Exit 2 when it cannot start.

A batch is acknowledged once it is fsynced in the process's write-ahead log (``--log-dir``; for
a DuckDB file ``FILE.ingest-log`` beside it by default; a ClickHouse store needs one named, one per
process); a loader process (``toolcall_spec.analytics.store.loader``, the only process that opens
the store) moves the log into the store. ``--workers N`` runs N endpoint processes on the port,
each with its own log (``DIR/worker-K``), and one loader for every log under ``DIR`` (an earlier
layout's too), under a supervisor that replaces a worker that ends (``http.prefork``; exit 1 when
it cannot go on). ``--no-log`` writes each
group of batches to the store before answering instead (slower). On start the log is replayed;
on SIGTERM the endpoint stops answering and the loader loads what is left (up to 10 s) first.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from toolcall_spec import filesystem
from toolcall_spec.cli.console import fail
from toolcall_spec.loading import DocumentError, read_json_file

if TYPE_CHECKING:
    from toolcall_spec.analytics.store.wal import WriteAheadLog

DEFAULT_PORT = 8766
WORKER_HANDLE = "TOOLCALL_SPEC_INGEST_WORKER"
"""How the supervisor of ``--workers N`` tells a program it starts that it is a worker, and
hands it its number, the listening socket, its report pipe and the supervisor's process id."""
DEFAULT_MAX_LOG_MB = 256


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "serve-ingest",
        help="serve POST /v1/events and OTLP POST /v1/traces into DuckDB or ClickHouse",
        description=(
            "Exit 0 when stopped by SIGTERM (after the loader drained the log), 130 on SIGINT, "
            "2 when the server cannot start (bad store, bad keys file, port taken), 1 when "
            "--workers N cannot go on (every worker ended at once, a worker could not be "
            "started again, or more than 10 restarts in a minute: a killed worker is replaced). "
            'GET /v1/health answers {"status": ...} to anyone, the details with a key.'
        ),
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
    logging = parser.add_mutually_exclusive_group()
    logging.add_argument(
        "--log-dir",
        metavar="DIR",
        help="the write-ahead log (one per process; default for a DuckDB file: FILE.ingest-log)",
    )
    logging.add_argument(
        "--no-log",
        action="store_true",
        help="no write-ahead log: each answer waits for a store write (slower)",
    )
    parser.add_argument(
        "--max-log-mb",
        type=int,
        default=DEFAULT_MAX_LOG_MB,
        metavar="MB",
        help=f"the log's backlog bound in MiB; past it: 503 (default {DEFAULT_MAX_LOG_MB})",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes sharing the port, each with its own log (DIR/worker-1 ...), loaded into "
        "the store by one loader process",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    return "serve-ingest"


def run(args: argparse.Namespace) -> int:
    try:
        from toolcall_spec.http.ingest_app import create_ingest_app  # noqa: F401, PLC0415
        from toolcall_spec.http.server import bind, is_loopback, url_of  # noqa: PLC0415
    except ImportError as exc:
        fail(
            f"serve-ingest needs the http extra ({exc.name} is missing): pip install "
            "'toolcall-spec[http,store]'"
        )
        return 2
    keys = read_keys(args.keys_file)
    if keys is None:
        return 2
    log_dir = log_directory(args)
    if log_dir == _MISSING or not workers_allowed(args, log_dir):
        return 2
    handle = os.environ.pop(WORKER_HANDLE, None)
    if handle is not None:
        return run_as_worker(args, keys, log_dir, handle)
    try:
        sock = bind(args.host, args.port, shared=args.workers > 1)
    except OSError as exc:
        fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return 2
    if not is_loopback(args.host):
        fail(
            f"warning: {args.host} is not a loopback address: the keys travel in clear text "
            "unless a TLS proxy stands in front"
        )
    serving = f"serving on {url_of(sock)}"
    if args.workers == 1:
        logs = [] if log_dir is None else [Path(log_dir)]
        report = partial(_report, serving=serving)
        return serve_worker(args, keys, logs, sock, report, root=logs[0] if logs else None)
    return serve_prefork(args, keys, log_dir, sock, serving)


def workers_allowed(args: argparse.Namespace, log_dir: str | None) -> bool:
    """Several workers write one DuckDB file only through the loader process (the log)."""
    if args.workers < 1:
        fail(f"--workers {args.workers}: expected at least 1")
        return False
    if args.workers > 1 and log_dir is None and not args.store.startswith("clickhouse://"):
        fail(
            f"--workers {args.workers} --no-log: a DuckDB file is written by one process; "
            "several workers write it through their logs (leave out --no-log)"
        )
        return False
    return True


def serve_prefork(
    args: argparse.Namespace, keys: dict[str, str], log_dir: str | None, sock: Any, serving: str
) -> int:
    """``--workers N``: N worker programs on the address (``run_as_worker``), each with its own
    log (``DIR/worker-K``), supervised (``prefork``); one loader process for every log under
    the root, started once every worker has recovered its log."""
    from toolcall_spec.analytics.store import StoreError  # noqa: PLC0415
    from toolcall_spec.analytics.store.loader import LoaderProcess  # noqa: PLC0415
    from toolcall_spec.analytics.store.log_health import log_directories  # noqa: PLC0415
    from toolcall_spec.http.prefork import serve_workers  # noqa: PLC0415

    logs = [] if log_dir is None else [worker_log(log_dir, n) for n in range(args.workers)]
    loader: list[LoaderProcess] = []
    supervisor = os.getpid()

    def command(number: int, ready_fd: int) -> tuple[list[str], dict[str, str]]:
        handle = f"{number}:{sock.fileno()}:{ready_fd}:{supervisor}"
        return worker_command(args, log_dir), {**os.environ, WORKER_HANDLE: handle}

    def started() -> None:
        if log_dir is not None:  # every log under the root: an earlier layout's too
            loader.append(LoaderProcess(args.store, log_directories(Path(log_dir), logs)))
        print(serving, flush=True)

    try:
        status, problem = serve_workers(args.workers, command, sock.fileno(), started)
    except StoreError as exc:  # the loader could not start: the workers were stopped
        status, problem = 2, str(exc)
    for running in loader:
        running.stop()
    if problem is not None:
        fail(problem)
    return status


def worker_log(log_dir: str, number: int) -> Path:
    return Path(log_dir) / f"worker-{number + 1}"


def worker_command(args: argparse.Namespace, log_dir: str | None) -> list[str]:
    """The command line that runs one worker of this ``serve-ingest`` (a new program: the
    supervisor never forks itself, see ``prefork``)."""
    command = [sys.executable, "-m", "toolcall_spec.cli", "serve-ingest"]
    command += ["--store", args.store, "--keys-file", args.keys_file, "--host", args.host]
    command += ["--port", str(args.port), "--workers", str(args.workers)]
    command += ["--max-log-mb", str(args.max_log_mb), "--log-level", args.log_level]
    return command + (["--no-log"] if log_dir is None else ["--log-dir", log_dir])


def run_as_worker(
    args: argparse.Namespace, keys: dict[str, str], log_dir: str | None, handle: str
) -> int:
    """One worker under the supervisor of ``--workers N``: its own listener on the address it
    was handed (``handle``: NUMBER:LISTEN_FD:READY_FD:SUPERVISOR_PID), its own log; it dies
    with the supervisor."""
    from toolcall_spec.http.prefork import run_worker  # noqa: PLC0415
    from toolcall_spec.http.server import listener_of  # noqa: PLC0415
    from toolcall_spec.processes import die_with_parent  # noqa: PLC0415

    number, listen_fd, ready_fd, supervisor = map(int, handle.split(":"))
    if not die_with_parent(signal.SIGTERM, supervisor):
        return 0  # the supervisor is gone: no one to serve for

    def worker(number: int, ready: Callable[[str | None], None]) -> int:
        shared = socket.socket(fileno=listen_fd)
        own = listener_of(shared)  # each worker listens on its own: the system shares them out
        logs = [] if log_dir is None else [worker_log(log_dir, number)]
        root = None if log_dir is None else Path(log_dir)
        return serve_worker(args, keys, logs, own, ready, root=root, own_loader=False)

    return run_worker(number, worker, ready_fd)


def serve_worker(
    args: argparse.Namespace,
    keys: dict[str, str],
    logs: list[Path],
    sock: Any,
    ready: Callable[[str | None], None],
    *,
    root: Path | None,
    own_loader: bool = True,
) -> int:
    """One endpoint process: its log (recovered) and, unless a supervisor runs one for all,
    its loader process (for every log under ``root``, the log root); without a log, the store
    itself. ``ready`` gets ``None`` once it can serve, else the reason it cannot (then 2)."""
    from toolcall_spec.analytics.store import StoreError, open_store  # noqa: PLC0415
    from toolcall_spec.analytics.store.loader import LoaderProcess  # noqa: PLC0415
    from toolcall_spec.analytics.store.log_health import log_directories  # noqa: PLC0415
    from toolcall_spec.http.ingest_app import IngestSettings, create_ingest_app  # noqa: PLC0415
    from toolcall_spec.http.server import serve_forever  # noqa: PLC0415

    filesystem.declare_role("writer")  # a test's fault plan for the log's writer applies here
    loader: LoaderProcess | None = None
    try:
        if logs:
            log, store = open_log(logs[0], args.max_log_mb), None
            if own_loader and root is not None:  # every log under the root: old layouts' too
                loader = LoaderProcess(args.store, log_directories(root, logs))
        else:
            log, store = None, open_store(args.store)
    except StoreError as exc:
        ready(str(exc))
        return 2
    ready(None)
    # uvicorn ends on SIGTERM by sending the signal again once it has shut down; this handler
    # turns that into an ordinary exit, so the loader is stopped (after it has drained) and the
    # log closed below, instead of the process ending on the spot.
    signal.signal(signal.SIGTERM, _exit_quietly)
    try:
        settings = IngestSettings(store, keys, log, root)
        code = serve_forever(create_ingest_app(settings), sock, log_level=args.log_level)
    finally:
        if loader is not None:
            loader.stop()  # after the last answer: it drains what they logged
        if log is not None:
            log.close()
        if store is not None:
            store.close()
    return code


def _exit_quietly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def _report(problem: str | None, serving: str) -> None:
    if problem is None:
        print(serving, flush=True)
    else:
        fail(problem)


_MISSING = ""


def log_directory(args: argparse.Namespace) -> str | None:
    """The log directory to use, ``None`` for ``--no-log``, or ``_MISSING`` after reporting that
    a store without a default needs one named (a ClickHouse server: any number of endpoints on
    any hosts may write it, each needs its own log)."""
    if args.no_log:
        return None
    if args.log_dir:
        return str(args.log_dir)
    if args.store.startswith("clickhouse://") or args.store.endswith(":memory:"):
        fail(
            f"{args.store}: name the write-ahead log with --log-dir DIR (one per serve-ingest "
            "process), or pass --no-log"
        )
        return _MISSING
    store: str = args.store
    path = store.removeprefix("duckdb://").removeprefix("chdb://").partition("?")[0]
    return path.rstrip("/") + ".ingest-log"  # beside the DuckDB file (or the chDB directory)


def open_log(directory: Path, max_mb: int) -> WriteAheadLog:
    """The log, recovered (its loader loads the backlog); ``StoreError``."""
    from toolcall_spec.analytics.store import StoreError  # noqa: PLC0415
    from toolcall_spec.analytics.store.wal import WriteAheadLog  # noqa: PLC0415

    if max_mb <= 0:
        raise StoreError(f"--max-log-mb: expected a positive number of MiB, got {max_mb}")
    return WriteAheadLog.open(directory, max_backlog_bytes=max_mb * 2**20)


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
