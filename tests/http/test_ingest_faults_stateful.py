"""``serve-ingest`` (endpoint, write-ahead log, loader, engine) as a Hypothesis state machine,
through real faults: batches of every kind a client sends, ``kill -9`` of the writer, a worker or
the loader, restarts with another ``--workers`` count, a full disk (a tmpfs of its own), an engine
taken away and brought back, a torn tail. Run on DuckDB and on the ClickHouse server.

After each recovery (a restart, then every log loaded, within a bound), and at the end of a run:
- every acknowledged event (answered 200/207 as accepted) is stored exactly once, as sent;
- nothing refused is stored, nothing never sent is stored;
- the loader gets past every record: the backlog on disk (the records past each log's checkpoint,
  read from the files) reaches 0;
- ``GET /v1/health`` tells the truth: per worker, its backlog is what its log's files hold, and
  while the loader cannot load, it says so.
And at every answer: it is one the endpoint may give (no 500), never 507 unless the disk is full
(the tmpfs filled, or a writer's fault plan of ENOSPC).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from hypothesis import HealthCheck, Phase, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from support.ingest_rig import (
    DRAIN_SECONDS,
    ENCODINGS,
    Batch,
    ClickHouseEngine,
    DuckDBEngine,
    IngestRig,
    Ledger,
    SmallDisk,
    event,
    kill,
    quarantined,
)
from support.store import fresh_database_url

from toolcall_spec.filesystem import FaultPlan

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
pytest.importorskip("uvicorn", reason="the http extra is not installed")

ANSWERS = frozenset({200, 207, 400, 503, 507})
"""What ``POST /v1/events`` may answer here (a batch is never too large, always gzip or none)."""

SHRINK_VARIABLE = "TOOLCALL_SPEC_SHRINK"
RUNS_VARIABLE = "TOOLCALL_SPEC_MACHINE_RUNS"
"""More runs than the timed session's (a longer search, by hand)."""
HEALTH_SECONDS = 8.0
"""How long health may lag the files (a load waits up to 1 s; a failed one is retried)."""
MACHINE = settings(
    settings(),
    max_examples=int(os.environ.get(RUNS_VARIABLE) or min(settings().max_examples, 3)),
    stateful_step_count=min(settings().stateful_step_count, 10),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    report_multiple_bugs=False,
    phases=[
        phase for phase in Phase if phase is not Phase.shrink or os.environ.get(SHRINK_VARIABLE)
    ],
)
"""Each step is real processes (a start of ``serve-ingest`` costs seconds): 3 runs of 10 steps
keep each test near a minute on 2 quiet cores; the ``faults`` profile's 25 x 30 would take hours.
Shrinking a failure takes minutes of restarts: only with ``TOOLCALL_SPEC_SHRINK=1`` (to find
the smallest counterexample), not in the timed faults session."""

Method = TypeVar("Method", bound=Callable[..., None])


def step(method: Method) -> Method:
    """Mark the machine as inside a step until ``method`` returns: a run whose last step failed
    skips the final check in ``teardown`` (the failure is the finding; checking again would
    only take time and report a second error)."""

    @functools.wraps(method)
    def run(self: IngestFaults, **arguments: Any) -> None:
        self.in_step = True
        method(self, **arguments)
        self.in_step = False

    return run  # type: ignore[return-value]


class IngestFaults(RuleBasedStateMachine):
    def __init__(self, make_rig: Callable[[], IngestRig]) -> None:
        super().__init__()
        self.rig = make_rig()
        self.ledger = Ledger()
        self.batches: list[Batch] = []
        self.numbers = itertools.count(1)
        self.in_step = False
        self.started = time.monotonic()

    # --- clients ----------------------------------------------------------------------------

    @rule(
        valid=st.integers(0, 3),
        invalid=st.integers(0, 1),
        repeat_first=st.booleans(),
        encoding=st.sampled_from(sorted(ENCODINGS)),
        gzipped=st.booleans(),
    )
    @step
    def post(
        self, valid: int, invalid: int, repeat_first: bool, encoding: str, gzipped: bool
    ) -> None:
        events = [event(next(self.numbers)) for _ in range(max(valid, 1 - invalid))]
        events += [event(next(self.numbers), valid=False) for _ in range(invalid)]
        if repeat_first:  # an event_id twice in one batch: the second is refused
            events.append(events[0])
        self.send(Batch(tuple(events), encoding, gzipped))

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    @step
    def retry(self, data: st.DataObject) -> None:
        """A client's retry of an earlier batch, acknowledged or not: the same bytes again."""
        self.send(data.draw(st.sampled_from(self.batches), label="batch"))

    def send(self, batch: Batch) -> None:
        plan = self.rig.faults
        full = (self.rig.disk is not None and self.rig.disk.full) or (
            plan is not None and plan.role == "writer" and plan.errno == "ENOSPC"
        )
        if not self.started_service():
            return
        status, answer = self.rig.post(batch)
        self.batches.append(batch)
        self.ledger.record(batch, status, answer)
        gz = " gzip" if batch.gzipped else ""
        note(f"post {len(batch.events)} events ({batch.encoding}{gz}) -> {status}")
        assert status in ANSWERS, f"answered {status}: {answer}"
        assert status != 507 or full, f"507 with room on the disk: {answer}"

    def started_service(self) -> bool:
        """The service, started when it is not running. A start may fail while the log's disk is
        full (a log that cannot be created) or the engine is away (the loader opens the store at
        its start: exit 2 by design); then nothing can be sent, and the run goes on."""
        try:
            self.rig.running()
        except AssertionError as exc:
            full = self.rig.disk is not None and self.rig.disk.full
            if not (self.rig.engine_gone or full or self.rig.faults):
                raise
            note(f"serve-ingest does not start now: {str(exc)[:200]}")
            if self.rig.faults is None:
                return False
            self.rig.faults = None  # the fault struck at the start: start again without it
            return self.started_service()
        return True

    # --- processes --------------------------------------------------------------------------

    @rule(whole=st.booleans())
    @step
    def kill_writer(self, whole: bool) -> None:
        """kill -9 the endpoint: the whole service, or (with workers) one worker process."""
        if not self.started_service():
            return
        workers = self.rig.worker_pids()
        if whole or self.rig.workers == 1 or not workers:
            self.rig.kill()
        else:
            kill(workers[0])
            time.sleep(0.5)  # the supervisor learns of it: what it does next is under test

    @rule()
    @step
    def kill_loader(self) -> None:
        if not self.started_service():
            return
        for pid in self.rig.loader_pids():
            kill(pid)

    @rule(workers=st.sampled_from([1, 2]))
    @step
    def restart(self, workers: int) -> None:
        """An operator's restart (SIGTERM), with another worker count or the same."""
        if self.rig.service is not None:
            self.rig.running()
            self.rig.stop()
        self.rig.workers = workers
        self.started_service()

    @precondition(lambda self: self.rig.disk is None or not self.rig.disk.full)
    @rule(keep=st.floats(0.05, 0.95), data=st.data())
    @step
    def tear_tail(self, keep: float, data: st.DataObject) -> None:
        """kill -9 the service, then leave the start of a record at the end of a log's active
        segment, as a write cut short by the crash does (never acknowledged)."""
        self.rig.kill()
        directories = self.rig.log_directories()
        if directories:
            directory = data.draw(st.sampled_from(directories), label="log")
            note(f"tore {self.rig.tear_tail(directory, keep)} bytes onto {directory.name}")

    @rule(
        role=st.sampled_from(["writer", "loader"]),
        mode=st.sampled_from([("ENOSPC", True), ("EIO", False), ("EMFILE", False), (None, False)]),
        at=st.integers(1, 40),
        workers=st.sampled_from([1, 2]),
    )
    @step
    def restart_with_a_fault(
        self, role: str, mode: tuple[str | None, bool], at: int, workers: int
    ) -> None:
        """Restart with a fault plan for the writers or the loaders (``FaultPlan`` through the
        environment): their ``at``-th durable file-system call fails with the errno (a full
        disk when persistent) or kills the process (``None``), in every process of that role
        started until the next recovery, a loader started again included."""
        errno, persistent = mode
        self.rig.kill()
        self.rig.faults = FaultPlan(at=at, errno=errno, persistent=persistent, role=role)
        self.rig.workers = workers
        self.started_service()

    # --- the disk and the engine ------------------------------------------------------------

    @precondition(lambda self: self.rig.disk is not None and not self.rig.disk.full)
    @rule()
    @step
    def fill_disk(self) -> None:
        assert self.rig.disk is not None
        self.rig.disk.fill()

    @precondition(lambda self: self.rig.disk is not None and self.rig.disk.full)
    @rule()
    @step
    def free_disk(self) -> None:
        assert self.rig.disk is not None
        self.rig.disk.free()

    @precondition(lambda self: self.rig.engine_can_go)
    @rule()
    @step
    def engine_away(self) -> None:
        if not self.started_service():
            return
        self.rig.engine.take_away()
        self.rig.engine_gone = True

    @precondition(lambda self: self.rig.engine_gone)
    @rule()
    @step
    def engine_back(self) -> None:
        self.rig.engine.bring_back()
        self.rig.engine_gone = False

    @rule()
    @step
    def look_at_health(self) -> None:
        """Health tells the truth, whatever the state: per worker, the backlog it reports is what
        its log's files hold past the checkpoint, and events that stay there (the engine away,
        a full disk, a record the loader cannot read) come with an error named."""
        if not self.started_service():
            return
        deadline = time.monotonic() + HEALTH_SECONDS
        while True:
            problems = self.health_problems()
            if not problems:
                return
            assert time.monotonic() < deadline, f"health does not tell the truth: {problems}"
            time.sleep(0.2)

    def health_problems(self) -> list[str]:
        truth = self.rig.disk_backlog(live=True)
        problems = []
        for directory, report in self.rig.health_by_log().items():
            log = report.get("log", {})
            said, held = log.get("backlog_events"), truth.get(directory)
            if said != held:
                problems.append(f"{directory}: health says {said} events wait, the files {held}")
            for other in report.get("other_logs", []):
                where = self.rig.directory_of(other)
                if truth.get(where) and not other.get("backlog_bytes"):
                    problems.append(f"{where}: health says nothing waits, the files {truth[where]}")
            waiting = sum(truth.values())
            if waiting and not names_an_error(report):
                problems.append(f"{directory}: {waiting} events wait, health says ok: {report}")
        return problems

    # --- recovery and the invariants --------------------------------------------------------

    @rule()
    @step
    def recover(self) -> None:
        self.recover_and_check()

    def recover_and_check(self) -> None:
        """Bring everything back, restart after a crash (kill -9: a drain on SIGTERM would
        hide what a crash loses; the ``restart`` rule is the SIGTERM one), wait until every log
        on disk is loaded (bounded), and hold the store to the ledger (DuckDB: once the loader
        is gone, as only one process may open the file)."""
        began = time.monotonic()
        self.rig.engine.bring_back()
        self.rig.engine_gone = False
        if self.rig.disk is not None:
            self.rig.disk.free()
        self.rig.faults = None
        if self.rig.service is not None:
            self.rig.running()
        assert not self.rig.exits or all(self.rig.exits), (
            f"serve-ingest ended by itself with exit status 0 (a supervisor would not restart "
            f"it): {self.rig.exits}"
        )
        self.rig.kill()
        self.rig.start()
        self.wait_drained()
        if self.rig.engine.exclusive:
            self.rig.kill()
        self.check_store()
        note(f"recovered and checked in {time.monotonic() - began:.1f} s")

    def wait_drained(self) -> None:
        deadline = time.monotonic() + DRAIN_SECONDS
        while True:
            truth = self.rig.disk_backlog()
            reports = self.rig.health_by_log()
            said = {d: r.get("log", {}).get("backlog_events") for d, r in reports.items()}
            if not any(truth.values()) and not any(said.values()):
                self.check_health_after_drain(reports)
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the logs were not loaded within {DRAIN_SECONDS:.0f} s: events on disk past "
                    f"each checkpoint {truth}; health says {reports}; the service's errors end "
                    f"with: {self.rig.error_tail()}"
                )
            time.sleep(0.1)

    @staticmethod
    def check_health_after_drain(reports: dict[str, dict[str, Any]]) -> None:
        """Loaded, restarted, nothing lost or quarantined (every record of the machine is
        readable): health is ok, and what it counts as quarantined is in the quarantine file."""
        for directory, report in reports.items():
            assert not names_an_error(report), f"{directory}: loaded, yet health says {report}"
            counted = report.get("log", {}).get("quarantined_records", 0)
            lines = quarantined(Path(directory))
            assert counted == lines, (
                f"{directory}: health counts {counted} quarantined, {lines} kept"
            )

    def check_store(self) -> None:
        rows = self.rig.engine.stored()
        stored: dict[str, Any] = {}
        twice = set()
        for event_id, text in rows:
            if event_id in stored:
                twice.add(event_id)
            stored[event_id] = orjson.loads(text)
        ledger = self.ledger
        missing = sorted(ledger.must_be_stored() - set(stored))
        refused = sorted(ledger.must_not_be_stored() & set(stored))
        strangers = sorted(set(stored) - set(ledger.sent))
        changed = sorted(
            event_id
            for event_id in ledger.must_be_stored() & set(stored)
            if stored[event_id] != ledger.sent[event_id]
        )
        assert not missing, f"acknowledged, not stored: {self.described(missing)}"
        assert not twice, f"stored more than once: {sorted(twice)}"
        assert not refused, f"refused, yet stored: {self.described(refused)}"
        assert not strangers, f"stored, never sent: {strangers}"
        assert not changed, f"stored other than sent: {self.described(changed)}"

    def described(self, event_ids: list[str]) -> str:
        """The event ids with the bodies that carried them (which encodings, how answered)."""
        ways = {
            event_id: sorted(
                {
                    f"{b.encoding}{' gzip' if b.gzipped else ''}"
                    for b in self.batches
                    if any(str(e["event_id"]) == event_id for e in b.events)
                }
            )
            for event_id in event_ids
        }
        return f"{len(event_ids)} events: {ways}"

    @invariant()
    def between_steps(self) -> None:
        self.in_step = False

    def teardown(self) -> None:
        try:
            if not self.in_step:
                self.recover_and_check()
        finally:
            self.rig.close()
            note(f"run took {time.monotonic() - self.started:.1f} s")


def names_an_error(report: dict[str, Any]) -> bool:
    """Whether a health answer says something is wrong (its status, problems, or, before
    those, the log's last load error)."""
    log = report.get("log", {})
    return (
        report.get("status") != "ok"
        or bool(report.get("problems"))
        or bool(log.get("last_load_error"))
    )


def run_machine(make_rig: Callable[[], IngestRig]) -> None:
    class Run(IngestFaults):
        def __init__(self) -> None:
            super().__init__(make_rig)

    run_state_machine_as_test(Run, settings=MACHINE)


def small_disk(directory: Path) -> SmallDisk | None:
    with contextlib.suppress(Exception):
        if SmallDisk.unavailable() is None:
            return SmallDisk(directory)
    return None


@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
@pytest.mark.faults
def test_ingest_on_duckdb_through_faults(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A state machine of real processes (3 runs of 10 steps; about a minute)."""
    base = tmp_path_factory.mktemp("machine")

    def make_rig() -> IngestRig:
        workdir = Path(tempfile.mkdtemp(dir=base))
        engine_disk = small_disk(workdir / "engine")
        engine = DuckDBEngine(workdir / "engine", engine_disk)
        return IngestRig(workdir, engine, small_disk(workdir / "logdisk"))

    run_machine(make_rig)


@pytest.mark.faults
def test_ingest_on_clickhouse_through_faults(
    clickhouse_base_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The same machine on the ClickHouse server (about a minute)."""
    base = tmp_path_factory.mktemp("machine")

    def make_rig() -> IngestRig:
        workdir = Path(tempfile.mkdtemp(dir=base))
        engine = ClickHouseEngine(fresh_database_url(clickhouse_base_url))
        return IngestRig(workdir, engine, small_disk(workdir / "logdisk"))

    run_machine(make_rig)
