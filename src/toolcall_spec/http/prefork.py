"""Several worker processes serving one listening socket (pre-fork), for an endpoint whose work is
CPU-bound Python: one process answers on one core, N processes on N.

The parent binds the socket, forks the workers (before it has opened anything a fork would share:
a database connection, a thread), waits until each reports that it started (or why it could not),
then forwards SIGTERM/SIGINT to them and waits for their end. Each worker is told its number, so
it can open what must be its own (the ingest endpoint: a write-ahead log per worker). A worker
dies with its parent (Linux: ``PR_SET_PDEATHSIG``), so a parent killed with ``kill -9`` leaves
no orphan serving the port.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

from toolcall_spec.processes import die_with_parent

START_SECONDS = 60.0

Ready = Callable[[str | None], None]
"""What a worker calls once: ``None`` when it is about to serve, else why it cannot (one line)."""


def serve_workers(
    count: int, worker: Callable[[int, Ready], int], on_started: Callable[[], None]
) -> tuple[int, str | None]:
    """Run ``worker(number, ready)`` in ``count`` forked processes; ``on_started()`` once all
    have reported ready. Returns when they have ended (their highest exit status, ``None``), or
    when one could not start (``2`` and its reason; the others are stopped). ``worker`` returns
    its exit status."""
    pids: list[int] = []
    supervisor = os.getpid()
    reader, writer = os.pipe()
    for number in range(count):
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(reader)
            os.setpgid(0, 0)  # Ctrl-C reaches the parent only, which stops the workers once
            if not die_with_parent(signal.SIGTERM, supervisor):
                os._exit(0)  # the parent is gone: no one to serve for
            os._exit(_run_worker(number, worker, writer))
        pids.append(pid)
    os.close(writer)
    problem = _wait_started(reader, count)
    os.close(reader)
    if problem is not None:
        _stop(pids)
        return 2, problem
    on_started()
    return _supervise(pids), None


def _run_worker(number: int, worker: Callable[[int, Ready], int], writer: int) -> int:
    def ready(problem: str | None) -> None:
        line = "ok" if problem is None else "no " + problem.replace("\n", " ")
        os.write(writer, (line + "\n").encode())
        os.close(writer)

    try:
        return worker(number, ready)
    except SystemExit as exc:  # an ordinary end (SIGTERM, after the worker shut down)
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:  # SIGINT forwarded by the parent, after the worker shut down
        return 130
    except BaseException as exc:  # a worker never shows a traceback
        print(f"toolcall-spec: worker {number}: {exc}", file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _wait_started(reader: int, count: int) -> str | None:
    """``None`` once ``count`` workers reported ready; the first reason one gave otherwise."""
    buffer = b""
    deadline = time.monotonic() + START_SECONDS
    while buffer.count(b"\n") < count:
        waiting = deadline - time.monotonic()
        if waiting <= 0 or not select.select([reader], [], [], waiting)[0]:
            return f"the workers did not start within {START_SECONDS:.0f} s"
        chunk = os.read(reader, 4096)
        if not chunk:
            return "a worker ended before it started serving"
        buffer += chunk
    for line in buffer.decode().splitlines():
        if line.startswith("no "):
            return line.removeprefix("no ")
    return None


def _supervise(pids: list[int]) -> int:
    def forward(signum: int, frame: FrameType | None) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    status = 0
    for pid in pids:
        _, code = os.waitpid(pid, 0)
        status = max(status, os.waitstatus_to_exitcode(code) if code else 0)
    return status


def _stop(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in pids:
        os.waitpid(pid, 0)
