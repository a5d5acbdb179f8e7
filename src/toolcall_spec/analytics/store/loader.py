"""The loader process of ``serve-ingest``: moves the endpoint's write-ahead logs into the store.

It runs beside the endpoint's processes, not inside them: loading is CPU work in Python (decoding
records, building rows) that would otherwise hold the interpreter lock while requests wait for
it. It opens the store (the only process that does: a DuckDB file has one writer), takes each
log's ``loader.lock``, prints ``ready`` (or the reason it cannot start, then exits 2), and loads
until SIGTERM, then drains what is left for up to ``DRAIN_SECONDS``. Its CPU priority is lowered:
the answers come first, and the backlog bound stops the loader from falling behind for good.

``python -m toolcall_spec.analytics.store.loader STORE_URL LOG_DIR [LOG_DIR ...]``
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import FrameType

from toolcall_spec import filesystem
from toolcall_spec.analytics.store import StoreError, open_store
from toolcall_spec.analytics.store.wal import LogLoader, lock_file, run_loaders
from toolcall_spec.processes import die_with_parent

logger = logging.getLogger("toolcall_spec.wal")

DRAIN_SECONDS = 10.0
LOCK_WAIT_SECONDS = 10.0
"""A loader of the same log still ending (its endpoint was just killed) gets this long."""
NICENESS = 10
WATCH_SECONDS = 0.5
"""How often the endpoint looks whether its loader is still running."""
READY = "ready"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: loader STORE_URL LOG_DIR [LOG_DIR ...]", file=sys.stderr)
        return 2
    # Linux: end at once with the endpoint that started it (kill -9 included), releasing the
    # store and the logs for the next start, which loads what is left: stopping mid-load is
    # safe, the checkpoint moves only after a store write returned.
    if not die_with_parent(signal.SIGKILL, os.getppid()):
        return 0
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    filesystem.declare_role("loader")  # a test's fault plan for the loader applies from here
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        logs = [Path(directory) for directory in argv[1:]]
        locks = [lock_file(log / "loader.lock", LOCK_WAIT_SECONDS) for log in logs]
        store = open_store(argv[0])
    except StoreError as exc:
        print(str(exc), flush=True)
        return 2
    with store:
        loaders = [LogLoader(log, store) for log in logs]
        print(READY, flush=True)
        run_loaders(loaders, stop, DRAIN_SECONDS)
        for loader in loaders:
            loader.close()
    for fd in locks:
        filesystem.close(fd)
    return 0


class LoaderProcess:
    """The loader process for ``logs`` into the store at ``store_url``, started and ready, and
    started again should it end by itself (a crash, the OOM killer): the endpoint goes on
    answering from its log meanwhile, and the new loader resumes from the checkpoints."""

    def __init__(self, store_url: str, logs: list[Path]) -> None:
        self.command = [sys.executable, "-m", "toolcall_spec.analytics.store.loader", store_url]
        self.command += map(str, logs)
        self.restarts = 0
        self._stopping = threading.Event()
        self.process = self._start()
        self._watch = threading.Thread(target=self._keep_running, name="loader-watch", daemon=True)
        self._watch.start()

    def _start(self) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert process.stdout is not None
        line = process.stdout.readline().decode().strip()
        if line != READY:
            process.wait(30)
            raise StoreError(line or f"the loader ended with {process.returncode}")
        return process

    def _keep_running(self) -> None:
        while not self._stopping.wait(WATCH_SECONDS):
            if self.process.poll() is None:
                continue
            logger.error("the loader ended (%s); starting it again", self.process.returncode)
            try:
                self.process = self._start()
                self.restarts += 1
            except StoreError as exc:
                logger.error("the loader could not start again (retrying): %s", exc)
        # Stopped here, by this thread: a loader it started dies with it (PR_SET_PDEATHSIG
        # follows the thread that started a process), so it must not end before the loader.
        _terminate(self.process)

    def stop(self) -> None:
        """Ask it to drain and end; wait for it."""
        self._stopping.set()
        self._watch.join(WATCH_SECONDS + LOCK_WAIT_SECONDS + DRAIN_SECONDS + 60)


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(DRAIN_SECONDS + 20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
