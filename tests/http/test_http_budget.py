"""The HTTP host's memory in bytes: the run store's budget (size, age, reservations), the cap on
events per run, 503 while the runs in progress hold the budget, and the RSS of a real
``toolcall-spec serve`` process under 50 heavy runs."""

from __future__ import annotations

import dataclasses
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from support.http_serving import (
    FIXTURE_ERROR,
    SCRIPTED,
    Gate,
    client,
    create,
    data_uri,
    run_fixture,
    run_path,
    serve_process,
    serving,
    wait_terminal,
)

from toolcall_spec.host import ReferenceHost, RunRecord, RunRequest, RunStore
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.host.store import (
    PackedRun,
    StoreBudget,
    planned_bytes,
    planned_events,
)
from toolcall_spec.http.app import HostSettings
from toolcall_spec.http.limits import Limits

BUDGET = pytest.mark.requirement("toolcall-spec.requirement.http.memory-budget")
EVENTS_CAP = pytest.mark.requirement("toolcall-spec.requirement.http.events-per-run")


def suite_with_calls(calls: int, tasks: int = 1) -> dict[str, Any]:
    """The fixture-error suite with ``calls`` scripted calls in each of ``tasks`` tasks (calls
    past the two fixture entries miss and are answered with an error)."""
    suite = load_fixture(FIXTURE_ERROR)
    template = suite["tasks"][0]
    suite["tasks"] = []
    for index in range(tasks):
        task = dict(template, taskId=f"task-{index}")
        task["input"] = {"calls": [{"tool": "billing:lookup", "args": {"id": "c-1"}}] * calls}
        suite["tasks"].append(task)
    return suite


def executed(suite: dict[str, Any], run_id: str = "local/r") -> RunRecord:
    host = ReferenceHost()
    request = RunRequest(suite, SCRIPTED, "golden")
    assert host.check(request) is None
    return host.execute(run_id, request)


# --- the store's accounting ---------------------------------------------------------------------


@EVENTS_CAP
@pytest.mark.parametrize(("calls", "tasks"), [(0, 1), (2, 1), (7, 3), (50, 2)])
def test_the_planned_event_count_bounds_what_a_run_writes(calls: int, tasks: int) -> None:
    suite = suite_with_calls(calls, tasks)
    written = executed(suite).events
    failed_tasks = sum(event["type"] == "toolcall-spec.eval.task-failed" for event in written)
    assert planned_events(suite) >= len(written)
    assert planned_events(suite) - len(written) == tasks - failed_tasks  # exact but for reasons


def record_bytes(record: RunRecord) -> int:
    return PackedRun.of(record).size()


@BUDGET
@pytest.mark.parametrize("calls", [2, 2000])
def test_a_packed_run_holds_no_more_than_its_estimate_and_reads_back_whole(calls: int) -> None:
    record = executed(suite_with_calls(calls))
    tracemalloc.start()
    packed = PackedRun.of(record)
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert held <= packed.size()
    assert packed.size() < len(orjson.dumps(record.events)) * 1.2 + 4096
    again = packed.record()
    assert again == record
    assert again.events is not record.events  # fresh objects


def test_the_reservation_of_a_run_covers_its_log_as_objects() -> None:
    suite = suite_with_calls(2000)
    tracemalloc.start()
    PackedRun.of(executed(suite))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert planned_bytes(planned_events(suite), len(orjson.dumps(suite))) >= peak


@BUDGET
def test_past_the_byte_budget_the_oldest_runs_are_evicted_first() -> None:
    records = [executed(suite_with_calls(20), f"local/r{i}") for i in range(6)]
    size = record_bytes(records[0])
    store = RunStore(budget=StoreBudget(max_bytes=3 * size + size // 2))
    for record in records:
        store.put(record)
        assert store.kept_bytes <= store.budget.max_bytes  # type: ignore[operator]
    assert store.run_ids() == ["local/r3", "local/r4", "local/r5"]


@BUDGET
def test_a_run_alone_over_the_budget_is_kept_until_the_next_one() -> None:
    big, small = executed(suite_with_calls(50), "local/big"), executed(suite_with_calls(1))
    store = RunStore(budget=StoreBudget(max_bytes=record_bytes(big) // 2))
    store.put(big)
    assert store.run_ids() == ["local/big"]
    store.put(small)
    assert store.run_ids() == ["local/r"]


@BUDGET
def test_a_budget_set_later_packs_and_counts_the_runs_already_kept() -> None:
    records = [executed(suite_with_calls(20), f"local/r{i}") for i in range(3)]
    store = RunStore()
    for record in records:
        store.put(record)
    assert store.find("local/r0") is records[0]  # unbounded: kept as is, shared
    size = record_bytes(records[0])
    store.configure(StoreBudget(max_bytes=2 * size + size // 2))
    assert store.run_ids() == ["local/r1", "local/r2"]
    assert store.kept_bytes == record_bytes(records[1]) + record_bytes(records[2])
    assert store.find("local/r2") == records[2]


@BUDGET
def test_finished_runs_are_evicted_by_age() -> None:
    now = [1000.0]
    store = RunStore(budget=StoreBudget(max_age_seconds=60), clock=lambda: now[0])
    store.put(executed(suite_with_calls(1), "local/old"))
    now[0] += 30
    store.put(executed(suite_with_calls(1), "local/new"))
    now[0] += 31
    assert store.find("local/old") is None
    assert store.find("local/new") is not None
    now[0] += 30
    assert store.find("local/new") is None
    assert len(store) == 0


@BUDGET
def test_reservations_evict_finished_runs_and_are_refused_past_the_budget() -> None:
    record = executed(suite_with_calls(20))
    size = record_bytes(record)
    store = RunStore(budget=StoreBudget(max_bytes=2 * size))
    store.put(record)
    assert store.reserve(size + 1)  # room is made: the finished run goes
    assert len(store) == 0
    assert not store.reserve(size)  # the two reservations would not fit
    assert store.reserved_bytes == size + 1
    store.release(size + 1)
    assert store.reserve(2 * size)
    later = executed(suite_with_calls(20), "local/next")
    store.put(later, reserved=2 * size)
    assert store.reserved_bytes == 0
    assert store.kept_bytes == record_bytes(later)


# --- over HTTP ----------------------------------------------------------------------------------


@EVENTS_CAP
def test_a_suite_over_the_events_cap_is_refused_at_create_with_413() -> None:
    settings = HostSettings(limits=Limits(max_events_per_run=100))
    with serving(settings=settings) as server, client(server) as http:
        refused = create(http, data_uri(suite_with_calls(60)))
        assert refused.status_code == 413, refused.text
        body = refused.json()
        assert body["error"] == "payload_too_large"
        assert "would write 126 events, over this host's limit of 100" in body["message"]
        assert body["details"] == {"events": 126, "limit": 100}
        assert create(http, data_uri(suite_with_calls(48))).status_code == 413  # 102
        assert create(http, data_uri(suite_with_calls(47))).status_code == 201  # 100


class ChattyHost(ReferenceHost):
    """Writes every event three times: more than the suite says, so only the guard after the
    execution can catch it."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        record = super().execute(run_id, request)
        return dataclasses.replace(record, events=record.events * 3)


@EVENTS_CAP
def test_a_run_that_writes_more_events_than_allowed_fails_with_run_failed() -> None:
    settings = HostSettings(limits=Limits(max_events_per_run=20))
    with serving(ChattyHost(), settings) as server, client(server) as http:
        run_id = run_fixture(http)
        events = http.get(f"{run_path(run_id)}/events/poll", params={"afterSequence": -1})
        types = [event["type"] for event in events.json()["events"]]
        assert types == ["run.started", "run.failed"]
        error = events.json()["events"][-1]["payload"]["error"]
        assert error["code"] == "too_many_events"
        assert "27 events, over this host's limit of 20" in error["message"]
        snapshot = http.get(run_path(run_id)).json()
        assert snapshot["status"] == "failed"
        assert snapshot["error"]["code"] == "too_many_events"
        assert http.get(f"{run_path(run_id)}/eval-summary").status_code == 409


@BUDGET
def test_a_create_that_does_not_fit_beside_the_runs_in_progress_gets_503() -> None:
    suite = load_fixture(FIXTURE_ERROR)
    one_run = planned_bytes(planned_events(suite), len(data_uri(suite)))
    gate = Gate()
    limits = Limits(max_kept_bytes=one_run + one_run // 2)
    with serving(settings=HostSettings(gate=gate, limits=limits)) as server, client(server) as http:
        held = create(http, FIXTURE_ERROR)
        assert held.status_code == 201
        gate.wait_entered()
        refused = create(http, FIXTURE_ERROR)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["error"] == "service_unavailable"
        assert http.get("/.well-known/openwop").status_code == 200
        gate.opened.set()
        wait_terminal(http, held.json()["runId"])
        room = create(http, FIXTURE_ERROR)
        assert room.status_code == 201  # the finished run makes room
        # Until that run ends it holds its share, and even reading a large body would not fit.
        wait_terminal(http, room.json()["runId"])
        too_big = create(http, data_uri(suite_with_calls(40)))
        assert too_big.status_code == 413
        assert "over this host's whole memory budget" in too_big.json()["message"]


# --- the process, under 50 heavy runs -----------------------------------------------------------

MIB = 1024 * 1024
RSS_BUDGET = 80 * MIB
HEAVY_RUNS, HEAVY_CLIENTS = 50, 2
HEAVY_CALLS = 6000
"""12,006 events a run, about 16 MB of objects each: 50 of them kept would be about 800 MB."""


def rss(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for process {pid}")


def heavy_client(url: str, ref: str, runs: int, finished: list[str], lock: threading.Lock) -> None:
    with httpx.Client(base_url=url, timeout=60) as http:
        while True:
            with lock:
                if len(finished) >= runs:
                    return
            answer = create(http, ref)
            if answer.status_code == 503:
                time.sleep(float(answer.headers["retry-after"]))
                continue
            assert answer.status_code == 201, answer.text
            page = wait_terminal(http, answer.json()["runId"])
            assert page["status"] == "completed"
            with lock:
                finished.append(answer.json()["runId"])


@BUDGET
def test_50_heavy_runs_keep_the_server_under_its_budget_while_light_runs_are_served() -> None:
    """Slow on purpose (over 10 s): 50 heavy runs are what fills the memory budget."""
    heavy_ref = data_uri(suite_with_calls(HEAVY_CALLS))
    options = ("--max-kept-bytes", str(RSS_BUDGET), "--max-events-per-run", "20000")
    with serve_process(*options) as (url, pid), httpx.Client(base_url=url, timeout=60) as http:
        for _ in range(5):
            run_fixture(http)
        baseline = rss(pid)
        finished: list[str] = []
        lock = threading.Lock()
        heavy = [
            threading.Thread(target=heavy_client, args=(url, heavy_ref, HEAVY_RUNS, finished, lock))
            for _ in range(HEAVY_CLIENTS)
        ]
        for thread in heavy:
            thread.start()
        light_served, peak = 0, baseline
        while any(thread.is_alive() for thread in heavy):
            run_id = run_fixture(http)  # asserts 201, then waits for the end
            summary = http.get(f"{run_path(run_id)}/eval-summary")
            assert summary.status_code == 200
            light_served += 1
            peak = max(peak, rss(pid))
            time.sleep(0.05)
        for thread in heavy:
            thread.join()
        high_water = rss(pid, "VmHWM")
        print(
            f"\nbaseline RSS {baseline / MIB:.1f} MiB, peak {max(peak, high_water) / MIB:.1f} MiB, "
            f"budget {RSS_BUDGET / MIB:.0f} MiB; {len(finished)} heavy runs, "
            f"{light_served} light runs served meanwhile"
        )
        assert len(finished) >= HEAVY_RUNS
        assert light_served >= 10
        assert max(peak, high_water) <= baseline + RSS_BUDGET
        kept = [http.get(run_path(run_id)).status_code for run_id in finished]
        assert kept.count(200) <= RSS_BUDGET // (12_006 * 300)  # the rest were evicted
        assert kept[-1] == 200
