"""Several worker processes serving one listening address, under a supervisor that replaces a
worker that ends, for an endpoint whose work is CPU-bound Python: one process answers on one
core, N processes on N.

The supervisor binds the address and starts each worker as a new program (fork and exec, by
``subprocess``), handing it the listening socket and a pipe by file descriptor; it never forks
a copy of itself, which would be unsafe once it runs threads (the loader's watch thread). A
worker reports on its pipe that it started (or why it could not), then serves; it is told its
number, so it can open what must be its own (the ingest endpoint: a write-ahead log per worker),
and dies with the supervisor (Linux: ``PR_SET_PDEATHSIG``), so a supervisor killed with
``kill -9`` leaves no orphan serving the port.

**Supervision.** SIGTERM and SIGINT are forwarded to the workers, whose end is then waited for.
A worker that ends otherwise (a crash, ``kill -9``, the OOM killer) is started again under its
number. The supervisor gives up, stops the rest and ends with status 1 (``FAILED``) when it
cannot go on: every worker ended at once, a replacement could not start, or more than
``MAX_RESTARTS`` replacements were needed within ``RESTART_WINDOW_SECONDS`` (a crash loop). A
process supervisor's restart-on-failure (systemd, Kubernetes) then starts the service again.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

START_SECONDS = 60.0
POLL_SECONDS = 0.1
MAX_RESTARTS = 10
RESTART_WINDOW_SECONDS = 60.0
FAILED = 1
"""The exit status when the workers cannot be kept running (see the module)."""
STOPPED_BY_SIGINT = 130

Ready = Callable[[str | None], None]
"""What a worker calls once: ``None`` when it is about to serve, else why it cannot (one line)."""

WorkerCommand = Callable[[int, int], list[str]]
"""The command line of worker ``number`` (0-based) that reports on the pipe ``ready_fd``."""


@dataclass
class _Worker:
    number: int
    process: subprocess.Popen[bytes]


def serve_workers(
    count: int, command: WorkerCommand, listening: int, on_started: Callable[[], None]
) -> tuple[int, str | None]:
    """Run ``count`` workers (``command``, handed the descriptor ``listening``) and keep them
    running; ``on_started()`` once all have reported ready. Returns the exit status and, when
    the supervisor gave up or a worker could not start (``2``), the reason."""
    spawn = _Spawner(command, listening)
    workers, problem = spawn.started(range(count))
    if problem is not None:
        _stop(workers, signal.SIGTERM)
        return 2, problem
    on_started()
    return _supervise(workers, spawn)


class _Spawner:
    def __init__(self, command: WorkerCommand, listening: int) -> None:
        self.command = command
        self.listening = listening

    def started(self, numbers: range | list[int]) -> tuple[list[_Worker], str | None]:
        """Start the workers and wait for each one's report; the first reason one gave."""
        workers, pipes = [], []
        for number in numbers:
            reader, writer = os.pipe()
            try:
                process = subprocess.Popen(
                    self.command(number, writer),
                    pass_fds=(self.listening, writer),
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # Ctrl-C reaches the supervisor, which stops them once
                )
            finally:
                os.close(writer)
            workers.append(_Worker(number, process))
            pipes.append(reader)
        problem = _wait_ready(pipes)
        for reader in pipes:
            os.close(reader)
        return workers, problem


def run_worker(number: int, worker: Callable[[int, Ready], int], ready_fd: int) -> int:
    """The body of a worker program: ``worker(number, ready)``, its exit status; whatever it
    raises is one line on stderr (no traceback) and status 1."""

    def ready(problem: str | None) -> None:
        line = "ok" if problem is None else "no " + problem.replace("\n", " ")
        os.write(ready_fd, (line + "\n").encode())
        os.close(ready_fd)

    try:
        return worker(number, ready)
    except SystemExit as exc:  # an ordinary end (SIGTERM, after the worker shut down)
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        return STOPPED_BY_SIGINT
    except BaseException as exc:  # a worker never shows a traceback
        print(f"toolcall-spec: worker {number + 1}: {exc}", file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _wait_ready(readers: list[int]) -> str | None:
    """``None`` once every worker reported ready; the first reason one gave otherwise."""
    lines: dict[int, bytes] = dict.fromkeys(readers, b"")
    deadline = time.monotonic() + START_SECONDS
    waiting = set(readers)
    while waiting:
        left = deadline - time.monotonic()
        readable = select.select(list(waiting), [], [], max(left, 0))[0] if left > 0 else []
        if not readable:
            return f"the workers did not start within {START_SECONDS:.0f} s"
        for reader in readable:
            chunk = os.read(reader, 4096)
            if not chunk:
                return "a worker ended before it started serving"
            lines[reader] += chunk
            if lines[reader].endswith(b"\n"):
                waiting.discard(reader)
    for line in lines.values():
        if line.startswith(b"no "):
            return line.decode().removeprefix("no ").strip()
    return None


def describe_end(returncode: int) -> str:
    if returncode < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-returncode).name}"
        return f"killed by signal {-returncode}"
    return f"ended with status {returncode}"


def _supervise(workers: list[_Worker], spawn: _Spawner) -> tuple[int, str | None]:
    stopping: list[int] = []
    told: set[int] = set()

    def forward(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)
        for worker in workers:
            told.add(worker.process.pid)
            with contextlib.suppress(ProcessLookupError):
                worker.process.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    restarts: deque[float] = deque()
    while not stopping:
        ended = [worker for worker in workers if worker.process.poll() is not None]
        if ended and len(ended) == len(workers):
            how = ", ".join(sorted({describe_end(w.process.returncode) for w in ended}))
            return FAILED, f"every worker ended ({how}); stopping"
        for worker in ended:
            problem = _replace(worker, spawn, restarts)
            if problem is not None:
                _stop(workers, signal.SIGTERM)
                return FAILED, problem
        time.sleep(POLL_SECONDS)
    for worker in workers:  # one started while the signal came was not told yet
        if worker.process.pid not in told:
            with contextlib.suppress(ProcessLookupError):
                worker.process.send_signal(stopping[0])
    codes = [worker.process.wait() for worker in workers]
    if stopping[0] == signal.SIGINT:
        return STOPPED_BY_SIGINT, None
    return max((128 - code if code < 0 else code) for code in codes), None


def _replace(worker: _Worker, spawn: _Spawner, restarts: deque[float]) -> str | None:
    """Start ``worker`` again in place; the reason the supervisor must give up, if it must."""
    now = time.monotonic()
    restarts.append(now)
    while restarts and now - restarts[0] > RESTART_WINDOW_SECONDS:
        restarts.popleft()
    how = describe_end(worker.process.returncode)
    if len(restarts) > MAX_RESTARTS:
        return (
            f"worker {worker.number + 1} {how}: more than {MAX_RESTARTS} workers ended within "
            f"{RESTART_WINDOW_SECONDS:.0f} s; stopping"
        )
    print(f"toolcall-spec: worker {worker.number + 1} {how}; starting it again", file=sys.stderr)
    (replacement,), problem = spawn.started([worker.number])
    worker.process = replacement.process
    if problem is not None:
        return f"worker {worker.number + 1} could not start again: {problem}"
    return None


def _stop(workers: list[_Worker], signum: int) -> None:
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            worker.process.send_signal(signum)
    for worker in workers:
        try:
            worker.process.wait(30)
        except subprocess.TimeoutExpired:
            worker.process.kill()
            worker.process.wait()
