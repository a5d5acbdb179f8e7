"""The reference host over HTTP: runs/s and latency under concurrent clients, against the same
runs in process, measured in the same run.

The server runs as ``toolcall-spec serve`` in a subprocess (so clients and server do not share an
interpreter lock); each client keeps one connection and creates runs one after another, long-polling
each to the end. Prints runs/s, p50/p95 create-to-last-event latency, and the HTTP-vs-in-process
ratio of the per-run cost.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID


def _one_client(url: str, suite_ref: str, runs: int) -> list[float]:
    latencies = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for _ in range(runs):
            started = time.perf_counter()
            body = {"mode": "eval", "evalSuiteRef": suite_ref, "agentId": SCRIPTED_AGENT_ID}
            run_id = http.post("/runs", json=body).json()["runId"]
            path = f"/runs/{quote(run_id, safe='')}/events/poll"
            after = -1
            while True:
                page = http.get(path, params={"afterSequence": after, "timeout": 10}).json()
                if page["events"]:
                    after = page["events"][-1]["sequence"]
                elif page["isTerminal"]:
                    break
            latencies.append(time.perf_counter() - started)
    return latencies


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
    parser.add_argument("--clients", type=int, default=8)
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
        print(
            f"HTTP, {args.clients} clients, suite by {label}: {len(latencies) / wall:,.0f} runs/s, "
            f"p50 {cuts[49] * 1000:.1f} ms, p95 {cuts[94] * 1000:.1f} ms; "
            f"per-run cost {wall / len(latencies) / (local / args.runs):.1f}x in process"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
