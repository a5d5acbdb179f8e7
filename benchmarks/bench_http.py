"""The reference host over HTTP: runs/s and latency under concurrent clients, against the same
runs in process, measured in the same run.

The server runs as ``toolcall-spec serve`` in a subprocess (so clients and server do not share an
interpreter lock); each client keeps one connection and creates runs one after another, long-polling
each to the end. Prints runs/s, p50/p95 create-to-last-event latency, and the HTTP-vs-in-process
ratio of the per-run cost, in wall time (runs/s with 4 clients against one in-process loop) and
in CPU time (the server process's, read from /proc, against the in-process loop's), as medians of
interleaved rounds. The goal lines start with ``RATIO`` (issue 15: at most 3x the in-process
per-run cost with 4 clients).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import orjson

from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID

GOAL_VS_IN_PROCESS = 3.0


def _one_client(url: str, suite_ref: str, runs: int) -> list[float]:
    """One keep-alive connection (the standard library's client: it costs the measurement less
    than the server it measures); each run is created, then long-polled until its terminal
    event arrives."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    body = orjson.dumps({"mode": "eval", "evalSuiteRef": suite_ref, "agentId": SCRIPTED_AGENT_ID})
    latencies = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            created = _exchange(connection, "POST", "/runs", body)
            path = f"/runs/{quote(created['runId'], safe='')}/events/poll"
            after = -1
            while True:
                page = _exchange(connection, "GET", f"{path}?afterSequence={after}&timeout=10")
                if page["events"]:
                    after = page["lastSequence"]
                    if page["events"][-1]["type"] in TERMINAL_EVENTS:
                        break
                elif page["isTerminal"]:
                    break
            latencies.append(time.perf_counter() - started)
    finally:
        connection.close()
    return latencies


TERMINAL_EVENTS = ("run.completed", "run.failed")
HEADERS = {"Content-Type": "application/json"}


def _exchange(
    connection: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
) -> Any:
    connection.request(method, path, body=body, headers=HEADERS)
    response = connection.getresponse()
    answer = response.read()
    if response.status >= 300:
        raise RuntimeError(f"{method} {path}: {response.status} {answer[:200]!r}")
    return orjson.loads(answer)


@dataclass
class Phase:
    """One measured batch of runs: wall seconds, CPU seconds of the process that ran them, and
    each run's latency (HTTP only)."""

    runs: int
    wall: float
    cpu: float
    latencies: list[float] = field(default_factory=list)


@contextmanager
def _server() -> Iterator[tuple[str, int]]:
    """``toolcall-spec serve`` in a subprocess: its URL and process id."""
    server = subprocess.Popen(
        [sys.executable, "-m", "toolcall_spec.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split()[-1], server.pid
    finally:
        server.terminate()
        server.wait(15)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _over_http(url: str, pid: int, runs: int, clients: int, suite_ref: str) -> Phase:
    share = runs // clients
    cpu, started = _cpu_seconds(pid), time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(lambda _: _one_client(url, suite_ref, share), range(clients)))
    wall = time.perf_counter() - started
    latencies = [t for client in results for t in client]
    return Phase(len(latencies), wall, _cpu_seconds(pid) - cpu, latencies)


def _in_process(runs: int, suite: dict[str, Any]) -> Phase:
    host = ReferenceHost()
    cpu, started = time.process_time(), time.perf_counter()
    for _ in range(runs):
        run_id = host.create_run(suite)
        host.events(run_id)
    return Phase(runs, time.perf_counter() - started, time.process_time() - cpu)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_http")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100 runs, one round")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.rounds = 100, 1
    suite = load_fixture(FIXTURE_ERROR)
    data_ref = "data:application/json;base64," + base64.b64encode(orjson.dumps(suite)).decode()
    refs = {"fixture id": FIXTURE_ERROR, "data: URI": data_ref}
    phases: dict[str, list[Phase]] = {"in process": [], **{label: [] for label in refs}}
    with _server() as (url, pid):
        _over_http(url, pid, args.clients * 5, args.clients, FIXTURE_ERROR)  # warm up
        for _ in range(args.rounds):  # interleaved, so a busy moment of the machine hits all
            phases["in process"].append(_in_process(args.runs, suite))
            for label, ref in refs.items():
                phases[label].append(_over_http(url, pid, args.runs, args.clients, ref))
    _report(phases, args.clients)


def _report(phases: dict[str, list[Phase]], clients: int) -> None:
    local = phases.pop("in process")
    local_wall = statistics.median(p.wall / p.runs for p in local)
    local_cpu = statistics.median(p.cpu / p.runs for p in local)
    print(f"in process: {local_wall * 1000:.2f} ms/run wall, {local_cpu * 1000:.2f} ms CPU")
    for label, measured in phases.items():
        wall = statistics.median(p.wall / p.runs for p in measured)
        cpu = statistics.median(p.cpu / p.runs for p in measured)
        cuts = statistics.quantiles([t for p in measured for t in p.latencies], n=100)
        print(
            f"HTTP, {clients} clients, suite by {label}: {1 / wall:,.0f} runs/s, "
            f"p50 {cuts[49] * 1000:.1f} ms, p95 {cuts[94] * 1000:.1f} ms; "
            f"server CPU {cpu * 1000:.2f} ms/run"
        )
        for measure, ratio in (("wall time", wall / local_wall), ("host CPU", cpu / local_cpu)):
            verdict = "within" if ratio <= GOAL_VS_IN_PROCESS else "OVER"
            print(
                f"RATIO HTTP {measure} per run ({clients} clients, suite by {label}) / in "
                f"process: {ratio:.2f}x (goal <= {GOAL_VS_IN_PROCESS}) {verdict}",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
