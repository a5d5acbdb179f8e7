"""Child processes that must not outlive the process that started them (the ingest endpoint's
loader, the workers of ``--workers N``)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os

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
