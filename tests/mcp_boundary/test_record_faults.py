"""The recorder's writes driven through faults (``nox -s faults``): the journal appended as calls
are answered (``recorder.journal``) and the suite written at exit (``recorder.suite``), with the
Nth file-system call failing (ENOSPC once or for good, EIO, EDQUOT, EMFILE) or killing the
process there, for every N (``support.fault_sweep``).

The workload is what a proxy does: several sessions, calls sent interleaved and answered out of
order, a JSON-RPC error, a tool list, a call the session ends before it is answered, then
``close``. Invariants, whatever the fault:
- the recorder never stops the session: no method raises, every answer is released to the
  proxy (``from_server`` returns) and the failure is counted;
- what is on disk (the suite, or the journal where the suite could not be written or the
  process was killed; read as every command reads it) holds each call at most once, paired with
  its request, in the order the client sent the requests, per session;
- it holds every call answered before the first failure (after a kill: every call whose answer
  was released), and after a fault that passed (a disk full for a moment, an EIO) every call.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.fault_sweep import MODES, SweepReport, record_sweep, sweep

from toolcall_spec.filesystem import Call as FsCall
from toolcall_spec.filesystem import Crashed, FaultPlan
from toolcall_spec.loading import DocumentError
from toolcall_spec.mcp.record import Recorder
from toolcall_spec.replay.journal import read_journal, read_suite_source
from toolcall_spec.validation import validate

pytestmark = [
    pytest.mark.faults,
    pytest.mark.requirement("toolcall-spec.requirement.record.written-as-answered"),
]

SESSIONS = ("alpha", "beta", "gamma")
CALLS_PER_SESSION = 4
Call = tuple[str, int]
"""(session, the call's place among the session's calls in send order)."""
FAILED = {("beta", 2), ("gamma", CALLS_PER_SESSION - 1)}
"""The calls recorded as failures: a JSON-RPC error, and the call never answered."""


@dataclass
class Run:
    """One run of the workload: what the client sent and what the proxy released."""

    out: Path
    sync: bool = True
    recorder: Recorder | None = None
    sent: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    released: list[Call] = field(default_factory=list)
    before_failure: list[Call] = field(default_factory=list)
    """Calls released while the recorder had counted no failure yet."""
    missing_from_journal: set[Call] = field(default_factory=set)
    """Released calls the journal lacked at a moment it had nothing queued."""

    @property
    def journal(self) -> Path:
        return self.out.with_name(self.out.name + ".journal")


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def workload(run: Run) -> None:
    """Three sessions: initialize and tools/list each, four calls each sent round robin, the
    answers released in an order that is neither the send order nor per session, one of them a
    JSON-RPC error, the last call of ``gamma`` never answered; then ``close``."""
    recorder = Recorder(run.out, suite_id="recorded.evals.faults", sync=run.sync)
    run.recorder = recorder
    ids = itertools.count(1)
    for session in SESSIONS:
        recorder.open_session(session)
        init = request(next(ids), "initialize", {"clientInfo": {"name": f"client-{session}"}})
        recorder.from_client(session, init)
        answered = {"jsonrpc": "2.0", "id": init["id"], "result": {}}
        assert recorder.from_server(session, answered) == []
    listed = request(next(ids), "tools/list", {})
    recorder.from_client("alpha", listed)
    tools = {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}}]}
    recorder.from_server("alpha", {"jsonrpc": "2.0", "id": listed["id"], "result": tools})
    open_calls: list[tuple[str, int, int]] = []  # (session, place, JSON-RPC id)
    for place, session in itertools.product(range(CALLS_PER_SESSION), SESSIONS):
        args = {"n": place, "session": session}
        recorder.from_client(session, request(next(ids), "tools/call", _call("lookup", args)))
        run.sent.setdefault(session, []).append(("lookup", args))
        open_calls.append((session, place, next(ids) - 1))
    never = open_calls.pop()  # gamma's last call: the session ends before it is answered
    for session, place, request_id in _answer_order(open_calls):
        failed = (session, place) in FAILED
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if failed:
            answer["error"] = {"code": -32001, "message": "quota"}
        else:
            answer["result"] = {"content": [{"type": "text", "text": f"{session} {place}"}]}
        assert recorder.from_server(session, answer) == []  # released: the proxy forwards it
        run.released.append((session, place))
        if recorder.failures == 0:
            run.before_failure.append((session, place))
        if recorder.unwritten == 0:  # caught up: the journal itself holds every released call
            journal = read_journal(run.journal.read_bytes()).suite
            run.missing_from_journal |= set(run.released) - set(kept_calls(run, journal))
    assert recorder.pending_requests(never[0]) == [never[2]]
    recorder.close()


def _call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool, "arguments": args}


def _answer_order(calls: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """A fixed shuffle: the later half first, backwards, then the first half, odd places first."""
    half = len(calls) // 2
    first = calls[:half]
    return [*reversed(calls[half:]), *first[1::2], *first[::2]]


def on_disk(run: Run) -> dict[str, Any] | None:
    """The suite as every command reads it (the journal in the suite's place when newer)."""
    try:
        suite: dict[str, Any] = read_suite_source(str(run.out))[0]
    except DocumentError:  # no suite, and a journal without a whole first line: nothing kept
        assert not run.out.exists()
        assert b"\n" not in (run.journal.read_bytes() if run.journal.exists() else b"")
        return None
    assert not [p for p in validate(suite, "suite") if p.severity == "error"]
    return suite


def kept_calls(run: Run, suite: dict[str, Any] | None) -> list[Call]:
    """The calls the suite holds, checked against what the client sent: each paired with its
    request (the arguments name the session and the place), per session in send order."""
    if suite is None:
        return []
    kept: list[Call] = []
    for task in suite["tasks"]:
        entries = task["fixtures"]["toolResponses"]
        places = [entry["args"]["n"] for entry in entries]
        assert places == sorted(set(places)), f"not in send order, or twice: {places}"
        for entry in entries:
            session, place = entry["args"]["session"], entry["args"]["n"]
            assert task["taskId"] == f"client-{session}"
            assert (entry["tool"], entry["args"]) == run.sent[session][place]
            assert entry.get("isError", False) == ((session, place) in FAILED)
            kept.append((session, place))
    return kept


def checker(
    runs: Callable[[], Run], reports: dict[str, SweepReport]
) -> Callable[[FaultPlan, BaseException | None], None]:
    def check(plan: FaultPlan, raised: BaseException | None) -> None:
        run = runs()
        if run.recorder is not None:
            run.recorder._writer.close()  # a killed process's descriptor goes with it
        _count(reports, run, plan, raised)
        crashed = isinstance(raised, Crashed)
        assert raised is None or crashed, f"the recorder stopped the session: {raised!r}"
        kept = kept_calls(run, on_disk(run))
        assert len(kept) == len(set(kept))
        assert not run.missing_from_journal, (plan.at, plan.trace[-1])
        if crashed:  # nothing failed before the kill: every released answer is on disk
            assert set(run.released) <= set(kept), (plan.at, plan.trace[-1])
            return
        assert run.recorder is not None
        assert len(run.released) == len(run.sent) * CALLS_PER_SESSION - 1
        assert run.recorder.failures <= 1 or plan.persistent
        assert set(run.before_failure) <= set(kept), (plan.at, plan.trace[-1])
        if not plan.persistent:  # the disk came back: the queued lines went out after all
            assert set(run.released) <= set(kept), (plan.at, plan.trace[-1])

    return check


def _paths(run: Run, calls: list[FsCall]) -> list[str]:
    """Which durable path each file-system call belongs to: the suite's atomic write at exit
    (its temporary file, the rename onto the suite, the directory sync after it), or the
    journal (its appends, the sync of its new name, its removal)."""
    temporary = str(run.out.parent / f".{run.out.name}.")
    paths: list[str] = []
    for call in calls:
        renamed = bool(paths) and calls[len(paths) - 1].op == "rename"
        where = call.path or ""
        in_suite = where == str(run.out) or where.startswith(temporary)
        in_suite |= call.op == "dirsync" and renamed
        paths.append("recorder.suite" if in_suite else "recorder.journal")
    return paths


def _count(
    reports: dict[str, SweepReport], run: Run, plan: FaultPlan, raised: BaseException | None
) -> None:
    """Attribute the run to the path its fault hit; a run without a fault gives each path its
    number of fault points."""
    paths = _paths(run, plan.trace)
    if not plan.injected:
        for path, report in reports.items():
            report.points = paths.count(path)
        return
    report = reports[paths[plan.at - 1]]
    report.runs += 1
    if raised is not None:
        name = type(raised).__name__
        report.errors[name] = report.errors.get(name, 0) + 1


@pytest.fixture
def fast_directory(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory where the machine has one (/dev/shm): the sweep checks what the
    recorder does at each call, not what a disk's fdatasync costs (about 300 runs of 25)."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        yield tmp_path
        return
    directory = Path(tempfile.mkdtemp(prefix="recorder-faults-", dir=shm))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("sync", ["answer", "exit"])
def test_the_recorder_never_stops_the_session_and_keeps_every_answered_call(
    fast_directory: Path, record_property: Callable[[str, object], None], sync: str
) -> None:
    """Every call of a run is swept: the journal's appends, its removal, and the suite's
    write at exit; the figures are reported per path. ``--sync exit`` leaves out the
    ``fdatasync`` per answer: a killed process keeps what it wrote all the same."""
    tmp_path = fast_directory
    numbers = itertools.count()
    current: list[Run] = []
    reports = {"recorder.journal": SweepReport(), "recorder.suite": SweepReport()}
    suffix = "" if sync == "answer" else " (--sync exit)"

    def one_run() -> None:
        directory = tmp_path / f"run-{next(numbers)}"
        directory.mkdir()
        current[:] = [Run(directory / "suite.json", sync=sync == "answer")]
        workload(current[0])

    total = sweep(one_run, checker(lambda: current[0], reports))
    for path, report in reports.items():
        assert report.points > 0, path
        record_sweep(record_property, path + suffix, report)
    assert sum(r.runs for r in reports.values()) + len(MODES) == total.runs
