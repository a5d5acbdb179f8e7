"""The one seam every durable file-system call goes through, as SQLite's VFS is.

The durable paths (the ingest log's writer, its loader's checkpoint and deletions, the recorder's
journal and suite, any file the CLI replaces) call these functions, never ``os`` directly, for
what decides durability: open, write, fsync/fdatasync, truncate, rename, unlink, mkdir, directory
fsync and close. Reads stay plain ``os``/``pathlib``: a read that fails loses nothing.

In production each function is the ``os`` call. Tests install an ``Interceptor`` that sees every
call before it happens: ``FaultPlan`` fails the Nth call with an errno (once, or from then on, as
a full disk does) or kills the process at it, and counts the calls, so a fault sweep can run a
workload for N = 1, 2, ... until a run completes with no fault left to inject.

A plan reaches a child process through the environment (``FAULTS_VARIABLE``, JSON; see
``FaultPlan.to_environment``) and applies only in a process whose role it names: each durable
process declares its role once at its start (``declare_role``: ``writer``, ``loader``,
``recorder``). Nothing here is active unless a test asks for it.
"""

from __future__ import annotations

import contextlib
import errno as errno_module
import functools
import os
import secrets
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

import orjson

Op = Literal["open", "write", "fsync", "truncate", "close", "rename", "unlink", "mkdir", "dirsync"]
OPS: tuple[Op, ...] = (
    "open",
    "write",
    "fsync",
    "truncate",
    "close",
    "rename",
    "unlink",
    "mkdir",
    "dirsync",
)
FAULTS_VARIABLE = "TOOLCALL_SPEC_FAULTS"
"""A ``FaultPlan`` as JSON, for the child processes a test starts (tests only)."""
ERRNOS = {"ENOSPC": errno_module.ENOSPC, "EIO": errno_module.EIO}
ERRNOS |= {"EDQUOT": errno_module.EDQUOT, "EMFILE": errno_module.EMFILE}
"""The errors a sweep injects: a full disk, a failing device, a quota, no file descriptor left."""


@dataclass(frozen=True, slots=True)
class Call:
    """One file-system call about to happen: what, on which path (an fd's path when the seam
    opened it; ``None`` for an fd it did not)."""

    op: Op
    path: str | None


class Interceptor(Protocol):
    def before(self, call: Call) -> None:
        """Called before ``call`` happens; raise ``OSError`` to fail it."""


class Crashed(BaseException):
    """An in-process stand-in for ``kill -9`` at a call: it unwinds everything (a
    ``BaseException``, so ``except Exception`` does not swallow it), and the plan fails every
    later call, so nothing after the crash point reaches the disk."""


_interceptor: Interceptor | None = None
_paths: dict[int, str] = {}


def install(interceptor: Interceptor | None) -> Interceptor | None:
    """Route every later call through ``interceptor`` (``None``: none); the previous one."""
    global _interceptor
    previous, _interceptor = _interceptor, interceptor
    return previous


@contextlib.contextmanager
def intercepted(interceptor: Interceptor) -> Iterator[Interceptor]:
    previous = install(interceptor)
    try:
        yield interceptor
    finally:
        install(previous)


def _check(op: Op, path: str | os.PathLike[str] | None = None, fd: int | None = None) -> None:
    interceptor = _interceptor
    if interceptor is not None:
        where = os.fspath(path) if path is not None else _paths.get(fd) if fd is not None else None
        interceptor.before(Call(op, where))


# --- the calls -----------------------------------------------------------------------------------


def open_fd(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    _check("open", path)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), mode)
    _paths[fd] = os.fspath(path)
    return fd


def write(fd: int, data: bytes | memoryview) -> int:
    _check("write", fd=fd)
    return os.write(fd, data)


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[write(fd, view) :]


def pwrite(fd: int, data: bytes, offset: int) -> int:
    _check("write", fd=fd)
    return os.pwrite(fd, data, offset)


def fsync(fd: int) -> None:
    _check("fsync", fd=fd)
    os.fsync(fd)


def fdatasync(fd: int) -> None:
    """``fdatasync`` where the system has it (the file's size is data: enough for appends)."""
    _check("fsync", fd=fd)
    getattr(os, "fdatasync", os.fsync)(fd)


def truncate(fd: int, length: int) -> None:
    _check("truncate", fd=fd)
    os.ftruncate(fd, length)


def close(fd: int) -> None:
    try:
        _check("close", fd=fd)
    finally:
        _paths.pop(fd, None)
        os.close(fd)  # the descriptor is released even when the check fails: no leak


def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    _check("rename", target)
    Path(source).replace(target)


def unlink(path: str | os.PathLike[str], *, missing_ok: bool = True) -> None:
    _check("unlink", path)
    Path(path).unlink(missing_ok=missing_ok)


def mkdir(path: str | os.PathLike[str]) -> None:
    """Create ``path`` and its missing parents (no error when it exists)."""
    _check("mkdir", path)
    Path(path).mkdir(parents=True, exist_ok=True)


def sync_directory(path: str | os.PathLike[str]) -> None:
    """Make the directory's entries durable: a fsynced file whose new name is lost is lost."""
    _check("dirsync", path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- composed operations ----------------------------------------------------------------------


def write_file_atomically(
    path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` in one step: a reader sees the old file or the new one,
    never half. ``durable``: fsynced before the rename and the directory after it, so after an
    OS crash the file is the old one or the new one whole. The new file keeps the old one's
    permissions, else gets ``mode`` (else 0o666 less the umask). On failure the temporary file is
    removed and the old file stays."""
    target = Path(path)
    directory = target.parent
    name = directory / f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = open_fd(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            write_all(fd, data)
            os.fchmod(fd, _mode_for(target, mode))
            if durable:
                fsync(fd)
        finally:
            close(fd)
        replace(name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            name.unlink()
        raise
    if durable:
        sync_directory(directory if str(directory) else ".")


def _mode_for(target: Path, mode: int | None) -> int:
    try:
        return target.stat().st_mode & 0o777
    except FileNotFoundError:
        return mode if mode is not None else 0o666 & ~current_umask()


@functools.cache
def current_umask() -> int:
    """The process's umask, read once (reading it means setting it: not thread-safe later)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


# --- fault injection (tests) ------------------------------------------------------------------


@dataclass
class FaultPlan:
    """Fail the ``at``-th call (1-based) of the ``ops`` counted, with ``errno`` (a name of
    ``ERRNOS``), or kill the process there when ``errno`` is ``None``. ``persistent``: every
    later call fails too (a disk that stays full); otherwise only that one (a transient fault).
    ``at`` of 0 injects nothing and only counts. In process, ``kill`` raises ``Crashed`` instead
    of ending the test process when ``in_process`` is set.

    ``calls`` counts the calls seen; ``injected`` says whether the fault happened. A run that
    completes with ``injected`` false has no fault point left at ``at``: the sweep is done."""

    at: int = 0
    errno: str | None = "ENOSPC"
    persistent: bool = False
    ops: frozenset[str] = field(default_factory=lambda: frozenset(OPS))
    in_process: bool = True
    role: str | None = None
    count_file: str | None = None
    """Where a child process writes its ``calls`` at exit (a sweep learns the fault points)."""
    calls: int = 0
    injected: bool = False
    trace: list[Call] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def before(self, call: Call) -> None:
        if call.op not in self.ops:
            return
        with self._lock:
            self.calls += 1
            self.trace.append(call)
            number = self.calls
            if self.count_file is not None:
                _write_count(self.count_file, number)
            crashed = self.injected and self.errno is None  # nothing reaches the disk after a kill
            due = number == self.at or (self.persistent and 0 < self.at < number)
            if not (due or crashed):
                return
            self.injected = True
        name = self.errno
        if name is None:
            if self.in_process:
                raise Crashed(f"crash at call {number} ({call.op} {call.path})")
            os.kill(os.getpid(), signal.SIGKILL)
            raise Crashed  # not reached: the process is gone
        code = ERRNOS[name]
        raise OSError(code, f"{os.strerror(code)} (injected at call {number}, {call.op})")

    def to_environment(self) -> str:
        """This plan as the value of ``FAULTS_VARIABLE`` for a child process."""
        fields = ("at", "errno", "persistent", "role", "count_file")
        value = {name: getattr(self, name) for name in fields}
        return orjson.dumps({**value, "ops": sorted(self.ops)}).decode()

    @classmethod
    def from_environment(cls, text: str) -> FaultPlan:
        value = orjson.loads(text)
        ops = frozenset(value.pop("ops", OPS))
        return cls(**value, ops=ops, in_process=False)


def _write_count(path: str, number: int) -> None:
    # Plain os calls, not the seam's: counting must not count itself. Written at every call,
    # so a process killed at a call has told how far it got.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, str(number).encode())
    finally:
        os.close(fd)


def declare_role(role: str) -> None:
    """Name this process's durable role; a plan in ``FAULTS_VARIABLE`` for this role applies
    from now on. Called once by each durable process at its start."""
    text = os.environ.get(FAULTS_VARIABLE)
    if not text:
        return
    plan = FaultPlan.from_environment(text)
    if plan.role in (None, role):
        install(plan)


def read_count(path: str | os.PathLike[str]) -> int:
    """The number of calls a child process reported in its ``count_file`` (0 before any)."""
    try:
        return int(Path(path).read_text() or 0)
    except FileNotFoundError:
        return 0
