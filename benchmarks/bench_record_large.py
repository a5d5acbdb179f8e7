"""Large messages through ``toolcall-spec record``: a 64 MiB answer against a 16 MiB one, over
stdio and over streamable HTTP (an event stream), each through a fresh proxy process in front of
a hand-written server (tests/support/raw_mcp_server.py, raw_http_mcp_server.py) that builds the
text in linear time. Each figure is the median wall time from sending the call to holding the
whole answer, the two sizes interleaved; read in linear time, 4x the bytes cost about 4x.

Goal (issue 30, DESIGN.md): 64 MiB at most 4.5x 16 MiB on each transport (``RATIO`` lines). Over
HTTP, requests the proxy answers itself (403), sent on another connection while the 64 MiB
event passes, show whether the proxy's event loop stays free (the slowest is printed beside).

    python -m benchmarks record_large [--quick]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.recording import (
    RAW_SERVER,
    RawClient,
    call_message,
    post_jsonrpc,
    raw_http_upstream,
    record_argv,
    recording_proxy,
)

MIB = 1024 * 1024
SIZES = (16 * MIB, 64 * MIB)
GOAL = 4.5


def stdio_seconds(size: int, folder: Path) -> float:
    client = RawClient(record_argv(folder / "stdio.json", sys.executable, RAW_SERVER))
    try:
        client.handshake()
        started = time.perf_counter()
        request_id = client.send("tools/call", {"name": "big", "arguments": {"size": size}})
        answer = read_line_linear(client)
        elapsed = time.perf_counter() - started
        assert json.loads(answer)["id"] == request_id
        return elapsed
    finally:
        client.finish()


def read_line_linear(client: RawClient) -> bytes:
    """One whole line from the proxy, each byte searched once (the client must not be the
    quadratic part)."""
    assert client.process.stdout is not None
    fd, parts = client.process.stdout.fileno(), [client._pending]
    client._pending = b""
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            raise EOFError("the proxy ended")
        end = chunk.find(b"\n")
        if end >= 0:
            parts.append(chunk[: end + 1])
            client._pending = chunk[end + 1 :]
            return b"".join(parts)
        parts.append(chunk)


def http_seconds(size: int, folder: Path) -> tuple[float, float]:
    """The big call's seconds, and the slowest small call's seconds sent meanwhile."""
    out, log = folder / "http.json", folder / "proxy.log"
    with (
        raw_http_upstream(sessions=False) as (url, _),
        recording_proxy(url, out, log) as (
            proxy_url,
            _proxy,
        ),
    ):
        post_jsonrpc(proxy_url, call_message(1, "echo", tag="warm"))
        small: list[float] = []
        done = threading.Event()

        def small_calls() -> None:
            # A request the proxy answers itself (403: a foreign Origin), so its latency is the
            # proxy's event loop alone, not the upstream's.
            with httpx.Client(timeout=120) as client:
                while not done.is_set():
                    started = time.perf_counter()
                    refused = client.post(proxy_url, headers={"origin": "http://elsewhere.example"})
                    assert refused.status_code == 403
                    small.append(time.perf_counter() - started)
                    time.sleep(0.02)

        prober = threading.Thread(target=small_calls)
        started = time.perf_counter()
        prober.start()
        answers, _ = post_jsonrpc(proxy_url, call_message(3, "big", size=size, sse=True))
        elapsed = time.perf_counter() - started
        done.set()
        prober.join()
        assert len(answers[0]["result"]["content"][0]["text"]) == size
        return elapsed, max(small, default=0.0)


def medians(measure: Callable[[int], float], repeats: int) -> dict[int, float]:
    samples: dict[int, list[float]] = {size: [] for size in SIZES}
    for _ in range(repeats):
        for size in SIZES:
            samples[size].append(measure(size))
    return {size: statistics.median(values) for size, values in samples.items()}


def main(argv: Sequence[str]) -> None:
    repeats = 1 if "--quick" in argv else 3
    stalls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        def over_http(size: int) -> float:
            seconds, stall = http_seconds(size, folder)
            if size == SIZES[-1]:
                stalls.append(stall)
            return seconds

        for transport, measure in (
            ("stdio", lambda size: stdio_seconds(size, folder)),
            ("HTTP event stream", over_http),
        ):
            figures = medians(measure, repeats)
            for size, seconds in figures.items():
                print(f"  record {transport}: one {size // MIB} MiB answer {seconds:6.2f} s")
            ratio = figures[SIZES[1]] / figures[SIZES[0]]
            verdict = "within" if ratio <= GOAL else "OVER"
            print(
                f"RATIO record {transport}: a 64 MiB message / a 16 MiB one: {ratio:.2f}x "
                f"(goal <= {GOAL}) {verdict}"
            )
    print(
        f"  slowest answer of the proxy's own while a 64 MiB event passed: "
        f"{max(stalls) * 1000:.0f} ms (its event loop stays free)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
