"""Child processes that must not outlive the process that started them (the ingest endpoint's
loader, the workers of ``--workers N``)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1
"""``prctl`` option number, from Linux's prctl.h."""


def die_with_parent(signal_number: int, parent: int) -> bool:
    """Linux: have this process get ``signal_number`` when its parent (process ``parent``) ends,
    ``kill -9`` included (elsewhere: nothing). False when the parent was already gone before the
    request took effect (this process has another parent now): the caller should end now, as it
    would have been told to. The parent's id is compared, not 1: in a container the parent may
    well be process 1."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal_number)
    return os.getppid() == parent


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
EXIT_INTERRUPTED = 130
"""The CLI contract's status after Ctrl-C (SIGINT); SIGTERM is a requested stop: 0."""


class StopSignals:
    """``with StopSignals() as stops: serve()``, then ``stops.exit_status()``: notes SIGTERM and
    SIGINT instead of dying by them, for a long-running command whose server stops gracefully
    on them and then raises the signal again for the handler it found (uvicorn does): this one.
    The command then ends by the CLI contract, 0 after SIGTERM and 130 after Ctrl-C, having
    written what it writes at the end, never killed by the signal's default action.
    ``stop`` is called on each signal: a signal that comes before the server has put its own
    handlers in place (while it starts) must stop it all the same."""

    def __init__(self, stop: Callable[[], None] = lambda: None) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}
        self._stop = stop

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self.note) for sig in STOP_SIGNALS}
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def note(self, signum: int, _frame: Any = None) -> None:
        self.received.append(signum)
        self._stop()

    def exit_status(self, otherwise: int = 0) -> int:
        """130 once Ctrl-C came, else ``otherwise``."""
        return EXIT_INTERRUPTED if signal.SIGINT in self.received else otherwise
