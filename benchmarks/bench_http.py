"""The reference host over HTTP: runs/s and latency under concurrent clients, against the same
runs in process, measured in the same run.

The server runs as ``toolcall-spec serve`` in a subprocess (so clients and server do not share an
interpreter lock); each client keeps one connection and creates runs one after another, long-polling
each to the end. Prints runs/s, p50/p95 create-to-last-event latency, and the HTTP-vs-in-process
ratio of the per-run cost. The goal line starts with ``RATIO`` (issue 15: at most 3x the
in-process per-run cost with 4 clients).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
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


def _over_http(runs: int, clients: int, suite_ref: str) -> tuple[float, list[float]]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolcall_spec.cli",
            "serve",
            "--port",
            "0",
            "--max-runs",
            str(runs + clients),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        share = runs // clients
        started = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(lambda _: _one_client(url, suite_ref, share), range(clients)))
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(15)
    return wall, [t for client in results for t in client]


def _in_process(runs: int, suite: dict[str, Any]) -> float:
    host = ReferenceHost()
    started = time.perf_counter()
    for _ in range(runs):
        run_id = host.create_run(suite)
        host.events(run_id)
    return time.perf_counter() - started


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_http")
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="100 runs instead of --runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs = 100
    suite = load_fixture(FIXTURE_ERROR)
    data_ref = "data:application/json;base64," + base64.b64encode(orjson.dumps(suite)).decode()
    local = _in_process(args.runs, suite)
    print(f"in process: {args.runs / local:,.0f} runs/s ({local / args.runs * 1000:.2f} ms/run)")
    for label, ref in (("fixture id", FIXTURE_ERROR), ("data: URI", data_ref)):
        wall, latencies = _over_http(args.runs, args.clients, ref)
        cuts = statistics.quantiles(latencies, n=100)
        ratio = wall / len(latencies) / (local / args.runs)
        verdict = "within" if ratio <= GOAL_VS_IN_PROCESS else "OVER"
        print(
            f"HTTP, {args.clients} clients, suite by {label}: {len(latencies) / wall:,.0f} runs/s, "
            f"p50 {cuts[49] * 1000:.1f} ms, p95 {cuts[94] * 1000:.1f} ms"
        )
        print(
            f"RATIO HTTP per-run cost ({args.clients} clients, suite by {label}) / in process: "
            f"{ratio:.2f}x (goal <= {GOAL_VS_IN_PROCESS}) {verdict}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
