"""A bounded load test on loopback: 200 runs from 8 concurrent clients against the real server.

Every run's log must be complete and ordered, no run may see another's events, and the server must
still answer afterwards. The figures (runs/s, p50/p95 latency) are printed, never asserted: speed
is measured in benchmarks/bench_http.py."""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import httpx
import pytest
from support.http_serving import FIXTURE_ERROR, client, create, data_uri, run_path, serving

from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.http.server import BackgroundServer

RUNS, CLIENTS = 200, 8
DEADLINE_SECONDS = 180
"""A hang guard for the whole test, not a performance claim."""


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with serving() as running:
        yield running


def suite_for(index: int) -> dict[str, Any]:
    """A distinct suite per run (its own task id and call count), so a mixed-up log shows."""
    suite = load_fixture(FIXTURE_ERROR)
    task = suite["tasks"][0]
    task["taskId"] = f"task-{index}"
    extra = index % 3
    task["input"]["calls"] += [{"tool": "billing:lookup", "args": {"id": "c-1"}}] * extra
    task["fixtures"]["toolResponses"] += [task["fixtures"]["toolResponses"][1]] * extra
    task["expected"]["match"]["value"] += [{"tool": "billing:lookup", "isError": False}] * extra
    return suite


def check_log(events: list[dict[str, Any]], run_id: str, index: int) -> None:
    calls = 2 + index % 3
    assert [e["sequence"] for e in events] == list(range(2 * calls + 5))
    assert {e["runId"] for e in events} == {run_id}
    types = [e["type"] for e in events]
    calls_and_returns = ["agent.tool-called", "agent.tool-returned"] * calls
    bracket_end = ["eval.scored", "eval.completed", "run.completed"]
    assert types == ["run.started", "eval.started", *calls_and_returns, *bracket_end]
    for called, returned in zip(events[2:-3:2], events[3:-3:2], strict=True):
        assert called["payload"]["callId"] == returned["payload"]["callId"]
        assert called["payload"]["callId"].startswith(f"task-{index}-")
    assert events[-3]["payload"] == {"taskId": f"task-{index}", "score": 1.0, "passed": True}


def one_run(http: httpx.Client, index: int) -> float:
    """Create, long-poll to the end, check; the latency is create to the last event read."""
    started = time.perf_counter()
    created = create(http, data_uri(suite_for(index)))
    assert created.status_code == 201, created.text
    run_id = created.json()["runId"]
    events: list[dict[str, Any]] = []
    while True:
        page = http.get(
            f"{run_path(run_id)}/events/poll",
            params={"afterSequence": events[-1]["sequence"] if events else -1, "timeout": 10},
        ).json()
        events += page["events"]
        if page["isTerminal"] and not page["events"]:
            break
    elapsed = time.perf_counter() - started
    check_log(events, run_id, index)
    summary = http.get(f"{run_path(run_id)}/eval-summary").json()
    assert summary["passed"] is True
    assert summary["tasks"][0]["taskId"] == f"task-{index}"
    return elapsed


def one_client(server: BackgroundServer, indices: range) -> list[float]:
    """One client (one connection, reused) running its share of the runs in turn."""
    with client(server) as http:
        return [one_run(http, index) for index in indices]


@pytest.mark.requirement("toolcall-spec.requirement.events.log-order")
def test_200_runs_from_8_clients_all_complete_ordered_and_unmixed(
    server: BackgroundServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """Slow on purpose (over 10 s): 200 runs from 8 clients are the load under which logs must not
    mix."""
    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        shares = [range(c, RUNS, CLIENTS) for c in range(CLIENTS)]
        futures = [pool.submit(one_client, server, share) for share in shares]
        latencies = [t for f in as_completed(futures, timeout=DEADLINE_SECONDS) for t in f.result()]
    wall = time.perf_counter() - started
    assert len(latencies) == RUNS

    with client(server) as http:
        assert http.get("/.well-known/openwop").status_code == 200
        assert create(http, FIXTURE_ERROR).status_code == 201

    cuts = statistics.quantiles(latencies, n=100)
    with capsys.disabled():
        print(
            f"\nload: {RUNS} runs, {CLIENTS} clients, {wall:.2f} s, {RUNS / wall:.0f} runs/s, "
            f"latency p50 {cuts[49] * 1000:.1f} ms, p95 {cuts[94] * 1000:.1f} ms"
        )
