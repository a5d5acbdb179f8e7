"""``toolcall-spec serve-ingest`` under real faults, for the stateful tests
(tests/http/test_ingest_faults_stateful.py): the service in processes of its own
(``support.store.Service``) with its logs on a small tmpfs the test fills, an engine the test takes
away and brings back, ``kill -9`` of the writer, a worker or the loader, a torn tail, and the
client's ledger of what each event was answered.

The machine's truth about the log comes from the files (``disk_backlog``: the records past each
log's checkpoint, read with the log's own framing), so what ``GET /v1/health`` says can be
checked against it.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import httpx
import orjson

from support.store import Service, tool_call
from toolcall_spec.analytics.store import StoreError, open_store
from toolcall_spec.analytics.store.wal import (
    Checkpoint,
    Frame,
    encode_record,
    read_checkpoint,
    scan,
    segment_numbers,
    segment_path,
)
from toolcall_spec.filesystem import FAULTS_VARIABLE, FaultPlan

try:
    from toolcall_spec.analytics.store.quarantine import QUARANTINE
    from toolcall_spec.analytics.store.wal import read_state
except ImportError:  # a log without a quarantine and a live loader position (before issue 29)
    QUARANTINE = "quarantine.jsonl"

    def read_state(directory: Path) -> Checkpoint | None:
        return None


KEY = "key-of-the-fault-machine-0123456789"
PROJECT = "faults"
HEADERS = {"Authorization": f"Bearer {KEY}"}
BOM = b"\xef\xbb\xbf"
LOADER_MODULE = "toolcall_spec.analytics.store.loader"
DRAIN_SECONDS = 15.0
"""How long a recovery waits for every log's backlog to reach 0 (a few events each)."""


# --- events and their bodies ------------------------------------------------------------------


def event(number: int, *, valid: bool = True) -> dict[str, Any]:
    """A ``tool_call`` event whose id is its number (the machine's runs are reproducible); an
    invalid one has a status no schema allows, and is refused whatever else it holds."""
    made = tool_call(number, event_id=str(uuid.UUID(int=number)), trace_id=f"trace-ü-{number}")
    if not valid:
        made["status"] = "maybe"
    return made


def _escaped(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()  # every non-ASCII letter as \\uXXXX


ENCODINGS: dict[str, Callable[[dict[str, Any]], bytes]] = {
    "compact": orjson.dumps,
    "byte-order mark": lambda batch: BOM + orjson.dumps(batch),
    "pretty": lambda batch: json.dumps(batch, indent=2, ensure_ascii=False).encode() + b"\n",
    "escaped": _escaped,
    "envelope members": lambda batch: orjson.dumps({"sent_at": "soon", **batch, "sdk": {}}),
}
"""Bodies the endpoint takes for one batch: every one is valid JSON (RFC 8259 lets a parser
ignore a byte-order mark); each may also be sent gzipped."""


@dataclass(frozen=True)
class Batch:
    """One request as sent: its events (in order) and the body's bytes."""

    events: tuple[dict[str, Any], ...]
    encoding: str
    gzipped: bool

    @property
    def body(self) -> bytes:
        raw = ENCODINGS[self.encoding]({"events": list(self.events)})
        return gzip.compress(raw, mtime=0) if self.gzipped else raw

    @property
    def headers(self) -> dict[str, str]:
        extra = {"Content-Encoding": "gzip"} if self.gzipped else {}
        return {**HEADERS, "Content-Type": "application/json", **extra}


# --- the client's ledger ----------------------------------------------------------------------


@dataclass
class Ledger:
    """What the client was told about each event it sent: acknowledged (in a 200 or 207 answer
    as accepted), refused (a 4xx, or rejected in a 207), or left unknown (a 5xx, no answer).
    An event answered several ways (a retry) keeps the strongest: acknowledged, then unknown."""

    sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    acknowledged: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    answers: Counter[int] = field(default_factory=Counter)

    def record(self, batch: Batch, status: int | None, answer: Any) -> None:
        self.answers[status or 0] += 1
        ids = [str(sent["event_id"]) for sent in batch.events]
        self.sent.update((str(sent["event_id"]), sent) for sent in batch.events)
        if status in (200, 207):
            rejected = {error["index"] for error in answer.get("errors", [])}
            for index, event_id in enumerate(ids):
                (self.refused if index in rejected else self.acknowledged).add(event_id)
        elif status is not None and 400 <= status < 500:
            self.refused.update(ids)
        else:
            self.unknown.update(ids)

    def must_be_stored(self) -> set[str]:
        return self.acknowledged

    def must_not_be_stored(self) -> set[str]:
        return self.refused - self.acknowledged - self.unknown


# --- real faults: a small disk, process trees -------------------------------------------------


class SmallDisk:
    """A tmpfs of its own at ``directory`` (``mount -t tmpfs`` as root), small enough to fill:
    ``fill`` takes every free block and inode (a real ``ENOSPC``), ``free`` gives them back."""

    def __init__(self, directory: Path, size: str = "8m", inodes: int = 512) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        options = f"size={size},nr_inodes={inodes},mode=0755"
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(directory)],
            check=True,
            capture_output=True,
        )
        self.directory = directory
        self.filler = directory / "filler"
        self.full = False

    @staticmethod
    def unavailable() -> str | None:
        """Why no tmpfs can be mounted here, or ``None``."""
        if os.geteuid() != 0:
            return "mounting a tmpfs needs root"
        if shutil.which("mount") is None:
            return "no mount command"
        return None

    def fill(self) -> None:
        self.filler.mkdir(exist_ok=True)
        fd = os.open(self.filler / "blocks", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for size in (2**16, 2**12, 1):
                _write_until_full(fd, b"\0" * size)
        finally:
            os.close(fd)
        number = 0
        with contextlib.suppress(OSError):  # ENOSPC: no inode left
            while True:
                (self.filler / str(number)).touch()
                number += 1
        self.full = True

    def free(self) -> None:
        shutil.rmtree(self.filler, ignore_errors=True)
        self.full = False

    def close(self) -> None:
        self.free()
        done = subprocess.run(["umount", str(self.directory)], capture_output=True, check=False)
        if done.returncode:
            subprocess.run(["umount", "-l", str(self.directory)], capture_output=True, check=False)


def _write_until_full(fd: int, chunk: bytes) -> None:
    try:
        while True:
            os.write(fd, chunk)
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: ``/proc/PID/task/*/children``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


def command_line(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def kill(pid: int, signum: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)


# --- the engines ------------------------------------------------------------------------------


class Engine(Protocol):
    url: str
    can_go_away: bool
    exclusive: bool
    """Only one process may open the store (DuckDB): its rows are read once the loader is gone."""

    def stored(self) -> list[tuple[str, str]]:
        """(event_id, event_json) of every row a query sees; nothing may be running that holds
        the store exclusively (DuckDB)."""

    def take_away(self) -> None:
        """From now on every write to the store fails (the loader must keep its records)."""

    def bring_back(self) -> None: ...

    def close(self) -> None: ...


STORED_SQL = "SELECT event_id, event_json FROM {events}"


class DuckDBEngine:
    """A DuckDB file on a disk of its own (a tmpfs): taken away by filling that disk, so each
    write fails with a real ``ENOSPC``, as an engine on a full disk does."""

    def __init__(self, directory: Path, disk: SmallDisk | None) -> None:
        self.disk = disk
        self.can_go_away = disk is not None
        self.exclusive = True
        self.url = str(directory / "events.duckdb")

    def stored(self) -> list[tuple[str, str]]:
        deadline = time.monotonic() + 15  # a killed loader releases the file as it ends
        while True:
            try:
                with open_store(self.url) as store:
                    return [(str(a), str(b)) for a, b in store.query(STORED_SQL, {})]
            except StoreError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def take_away(self) -> None:
        assert self.disk is not None, "no disk of its own to fill (not root)"
        self.disk.fill()

    def bring_back(self) -> None:
        if self.disk is not None:
            self.disk.free()

    def close(self) -> None:
        if self.disk is not None:
            self.disk.close()


AWAY_COLUMN = "engine_away"


class ClickHouseEngine:
    """A database of its own on the ClickHouse server: taken away by a column whose value the
    server computes on every insert and which throws (every write refused, reads unchanged,
    ``CREATE TABLE IF NOT EXISTS`` of a restarted loader a no-op); brought back by dropping it."""

    def __init__(self, url: str) -> None:
        from clickhouse_driver import Client

        self.url = url
        self.can_go_away = True
        self.exclusive = False
        base, self.database = url.rsplit("/", 1)
        host, port = base.removeprefix("clickhouse://").rsplit(":", 1)
        self.client = Client(host=host, port=int(port), connect_timeout=5)
        self.away = False
        open_store(url).close()  # the database and its table, before anything takes it away

    def stored(self) -> list[tuple[str, str]]:
        with open_store(self.url) as store:
            return [(str(a), str(b)) for a, b in store.query(STORED_SQL, {})]

    def take_away(self) -> None:
        if not self.away:  # 18.16 knows no ADD COLUMN IF NOT EXISTS
            self.client.execute(
                f"ALTER TABLE `{self.database}`.tool_call_events ADD COLUMN {AWAY_COLUMN} "
                "UInt8 MATERIALIZED throwIf(length(event_id) >= 0)"
            )
        self.away = True

    def bring_back(self) -> None:
        if self.away:
            self.client.execute(
                f"ALTER TABLE `{self.database}`.tool_call_events DROP COLUMN {AWAY_COLUMN}"
            )
        self.away = False

    def close(self) -> None:
        self.client.execute(f"DROP DATABASE IF EXISTS `{self.database}`")
        self.client.disconnect()


# --- the service ------------------------------------------------------------------------------


class IngestRig:
    """One ``serve-ingest`` (``workers`` endpoint processes, one loader) on ``engine``, its logs
    under ``log_root`` (a small tmpfs when one can be mounted), driven through faults."""

    def __init__(self, workdir: Path, engine: Engine, disk: SmallDisk | None) -> None:
        self.workdir = workdir
        self.engine = engine
        self.disk = disk
        self.log_root = (disk.directory if disk else workdir) / "log"
        self.keys_file = workdir / "keys.json"
        self.keys_file.write_text(json.dumps({PROJECT: KEY}))
        self.errors = workdir / "serve-ingest.stderr"
        self.service: Service | None = None
        self.workers = 1
        self.exits: list[int] = []
        """Exit statuses of services that ended without being asked to."""
        self.engine_gone = False
        self.faults: FaultPlan | None = None
        """A fault plan the next starts hand to their processes (``TOOLCALL_SPEC_FAULTS``)."""

    @property
    def engine_can_go(self) -> bool:
        return not self.engine_gone and self.engine.can_go_away

    # processes

    def start(self, workers: int | None = None) -> Service:
        self.workers = workers or self.workers
        options = ("--workers", str(self.workers)) if self.workers > 1 else ()
        env = {**os.environ, FAULTS_VARIABLE: self.faults.to_environment()} if self.faults else None
        self.service = Service(
            self.engine.url,
            self.keys_file,
            self.log_root,
            options,
            env=env,
            stderr=self.errors,
        )
        return self.service

    def running(self) -> Service:
        """The service, started when it is not running; one that ended by itself has its exit
        status kept (``exits``)."""
        self._settle()
        if self.service is not None and self.service.process.poll() is not None:
            self.exits.append(self.service.process.returncode)
            self.service = None
        return self.service or self.start()

    def _settle(self, timeout: float = 15.0) -> None:
        """With every worker dead, the supervisor replaces them or ends (with a status a
        supervisor of its own acts on): wait for either; neither is a finding."""
        if self.service is None or self.workers == 1:
            return
        deadline = time.monotonic() + timeout
        while not self.worker_pids() and self.service.process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"serve-ingest ran {timeout:.0f} s with no worker alive")
            time.sleep(0.1)

    def stop(self, timeout: float = 40.0) -> None:
        """SIGTERM and wait (the loader drains up to 10 s); kill -9 past ``timeout``."""
        service, self.service = self.service, None
        if service is None:
            return
        service.process.terminate()
        try:
            service.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill_tree(service.process.pid)
            message = f"serve-ingest did not stop within {timeout:.0f} s of SIGTERM"
            raise AssertionError(message) from None
        finally:
            self._close_pipes(service)

    def kill(self) -> None:
        """kill -9 the service (its workers and loader die with it, as they are meant to)."""
        service, self.service = self.service, None
        if service is not None:
            self.kill_tree(service.process.pid)
            service.process.wait(30)
            self._close_pipes(service)
            self._wait_gone(LOADER_MODULE)

    def kill_tree(self, pid: int) -> None:
        descendants = self._descendants(pid)
        kill(pid)
        # the loader and the workers end with their parent; what has not after a while is a
        # finding of its own, but must not hold the next start's locks
        deadline = time.monotonic() + 5
        while any(_alive(child) for child in descendants) and time.monotonic() < deadline:
            time.sleep(0.02)
        for child in descendants:
            kill(child)

    def _descendants(self, pid: int) -> list[int]:
        found = children(pid)
        for child in list(found):
            found += self._descendants(child)
        return found

    def _wait_gone(self, marker: str) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            marker in command_line(pid) and str(self.log_root) in command_line(pid)
            for pid in _all_pids()
        ):
            time.sleep(0.02)

    @staticmethod
    def _close_pipes(service: Service) -> None:
        for pipe in (service.process.stdout, service.process.stderr):
            if pipe is not None:
                pipe.close()

    def loader_pids(self) -> list[int]:
        if self.service is None:
            return []
        tree = self._descendants(self.service.process.pid)
        return [pid for pid in tree if LOADER_MODULE in command_line(pid)]

    def worker_pids(self) -> list[int]:
        """The endpoint processes that write a log: the service itself with one worker, else
        its forked workers."""
        if self.service is None:
            return []
        if self.workers == 1:
            return [self.service.process.pid]
        own = children(self.service.process.pid)
        return [pid for pid in own if _alive(pid) and LOADER_MODULE not in command_line(pid)]

    # requests

    def post(self, batch: Batch) -> tuple[int | None, Any]:
        service = self.running()
        try:
            answer = httpx.post(
                service.url + "/v1/events", content=batch.body, headers=batch.headers, timeout=30
            )
        except httpx.HTTPError:
            return None, None  # no answer: the client cannot know
        try:
            return answer.status_code, answer.json()
        except ValueError:
            return answer.status_code, answer.text

    def health(self) -> dict[str, Any]:
        return self.running().health()

    def health_by_log(self, tries: int = 40) -> dict[str, dict[str, Any]]:
        """Log directory -> the health answer of the worker writing it: asked until each
        worker has answered (the system shares the connections out), or ``tries`` times (a
        worker killed and not replaced never answers)."""
        workers = range(1, self.workers + 1)
        expected = (
            {str(self.log_root)}
            if self.workers == 1
            else {str(self.log_root / f"worker-{number}") for number in workers}
        )
        seen: dict[str, dict[str, Any]] = {}
        for _ in range(tries):
            report = self.health()
            seen[self.directory_of(report.get("log", {}))] = report
            if expected <= seen.keys():
                break
        return seen

    def directory_of(self, log: dict[str, Any]) -> str:
        """The directory a health answer's log entry names: by its name under the root, or
        (before names) its absolute path."""
        if "name" in log:
            return os.path.normpath(self.log_root / str(log["name"]))
        return str(log.get("directory"))

    def error_tail(self, size: int = 3000) -> str:
        """The end of what the service's processes wrote to their error output."""
        if not self.errors.exists():
            return ""
        return self.errors.read_bytes()[-size:].decode(errors="replace")

    # the log's truth, from its files

    def log_directories(self) -> list[Path]:
        """Every log directory on disk: the one-process layout and each worker's."""
        if not self.log_root.exists():
            return []
        found = [self.log_root, *sorted(self.log_root.glob("worker-*"))]
        return [directory for directory in found if directory.is_dir()]

    def disk_backlog(self, *, live: bool = False) -> dict[str, int]:
        """Log directory -> the events of the good records past its durable checkpoint (what a
        loader has yet to load after a restart), read from the files with the log's own
        framing; ``live``: past the loader's live position instead, where it keeps one
        (``loader.state``: it moves on while a full disk keeps the checkpoint where it was)."""
        return {str(d): _pending_events(d, live=live) for d in self.log_directories()}

    def tear_tail(self, directory: Path, keep: float) -> int:
        """Append the first ``keep`` part of a record to the active segment of the log in
        ``directory``, as a write cut short by a crash leaves it; the bytes appended."""
        numbers = segment_numbers(directory)
        if not numbers:
            return 0
        whole = encode_record(PROJECT, datetime.now(timezone.utc), [event(10**9)])
        torn = whole[: max(1, int(len(whole) * keep))]
        with segment_path(directory, max(numbers)).open("ab") as segment:
            segment.write(torn)
        return len(torn)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.kill()
        with contextlib.suppress(Exception):
            self.engine.bring_back()
        self.engine.close()
        if self.disk is not None:
            self.disk.close()


def quarantined(directory: Path) -> int:
    """The records and events the log in ``directory`` keeps in its quarantine file."""
    kept = directory / QUARANTINE
    return len(kept.read_bytes().splitlines()) if kept.exists() else 0


def _pending_events(directory: Path, *, live: bool) -> int:
    positions = [checkpoint.position for checkpoint in (read_checkpoint(directory),) if checkpoint]
    if live:
        positions += [state.position for state in (read_state(directory),) if state]
    segment, offset = max(positions, default=(1, 0))
    pending = 0
    for number in sorted(segment_numbers(directory)):
        if number < segment:
            continue
        data = segment_path(directory, number).read_bytes()
        start = offset if number == segment else 0
        pending += sum(item.count for item in scan(data, start) if isinstance(item, Frame))
    return pending


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _all_pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            yield int(entry.name)
