"""Recording: what ``toolcall-spec record`` costs per call, over a session and over a direct call.

1. **Flat over the session.** A raw client sends ``tools/call`` requests one after the other
   through ``toolcall-spec record --out SUITE -- SERVER`` to a fast stdio server (a JSON-RPC
   loop answering each call at once, no SDK: what is left is the proxy's cost), in a session of
   100 calls and one of 10,000 (3,000 with ``--quick``). Goal (issue 30): per-call time at
   10,000 / at 100 at most 1.3. The mean of the session's last 100 calls is printed too (it was
   51 ms when the suite was rewritten per answer).
2. **Over a direct call.** The ``mcp`` Python client calls a fast tool of a real MCP server (the
   ``mcp`` SDK's ``MCPServer``) over stdio, directly and through ``record``, in alternating
   rounds. Goal: the proxy's own cost per call at most 1 ms over the direct call.

Per-call figures are medians (the mean and the slowest call are printed beside them): the disk
and the CPUs are shared, and one stall of the machine is not the proxy's cost.

Both with ``--sync answer`` (the default: an ``fdatasync`` per answer, before the client sees
it) and ``--sync exit`` (written per answer, synced at exit). An ``fdatasync`` costs what the
disk's cache flush costs (``fdatasync`` alone is timed and printed): on a disk where that is
over 1 ms, ``--sync answer`` cannot meet the second goal, and the line says so. Wall time: the
client waits for each answer.

    python -m benchmarks record [--quick]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

SMALL, LARGE, QUICK_LARGE = 100, 10_000, 3_000
FLAT_GOAL = 1.3
OVERHEAD_GOAL_MS = 1.0
DIRECT_CALLS = 300
DIRECT_ROUNDS = 5
SYNC_MODES = ("answer", "exit")

FAST_SERVER = r"""
import json
import sys

INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
        "serverInfo": {"name": "fast", "version": "1"}}
ANSWER = {"content": [{"type": "text", "text": "3"}], "isError": False}
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    result = ANSWER if request["method"] == "tools/call" else INIT
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

MCP_SERVER = r"""
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


server.run()
"""


def record_command(out: Path, sync: str, *server: str) -> list[str]:
    cli = [sys.executable, "-m", "toolcall_spec.cli", "record", "--out", str(out)]
    return [*cli, "--sync", sync, "--", *server]


def session_timings(command: list[str], calls: int) -> tuple[list[float], float]:
    """Seconds per call (wall, request written to answer read) of a session of ``calls`` with
    the stdio server ``command`` starts, and the CPU seconds the process (and the children it
    reaped: the proxied server) used, from its own accounting."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin is not None
    assert process.stdout is not None
    send, answers = process.stdin, process.stdout
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench"}}
    send.write(orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
    send.write(b"\n")
    send.flush()
    answers.readline()
    timings: list[float] = []
    for n in range(1, calls + 1):
        params = {"name": "add", "arguments": {"a": n, "b": 2}}
        request = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
        start = time.perf_counter()
        send.write(orjson.dumps(request) + b"\n")
        send.flush()
        if not answers.readline():
            raise RuntimeError("the proxy ended before answering")
        timings.append(time.perf_counter() - start)
    send.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    answers.close()
    if process.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited {process.returncode}")
    return timings, usage.ru_utime + usage.ru_stime


def flat_cost(directory: Path, large: int) -> None:
    server = [sys.executable, str(directory / "fast_server.py")]
    (directory / "fast_server.py").write_text(FAST_SERVER)
    alone, alone_cpu = session_timings(server, large)
    print(
        f"the fast server alone: median {statistics.median(alone) * 1e3:.3f} ms/call, "
        f"CPU {alone_cpu / large * 1e3:.3f} ms/call"
    )
    for sync in SYNC_MODES:
        small_out, large_out = directory / "small.json", directory / "large.json"
        # Small sessions before and after the large one: the disk is shared, its load drifts.
        small_runs = [session_timings(record_command(small_out, sync, *server), SMALL)[0]]
        timings, cpu = session_timings(record_command(large_out, sync, *server), large)
        small_runs.append(session_timings(record_command(small_out, sync, *server), SMALL)[0])
        small = statistics.median([t for run in small_runs for t in run])
        per_call, last = statistics.median(timings), statistics.median(timings[-100:])
        ratio = per_call / small
        verdict = "ok" if ratio <= FLAT_GOAL else "OVER"
        print(
            f"record --sync {sync}: median {small * 1e3:.3f} ms/call at {SMALL}, "
            f"{per_call * 1e3:.3f} ms/call at {large:,} (its last 100: {last * 1e3:.3f} ms; "
            f"mean {statistics.mean(timings) * 1e3:.3f} ms, slowest {max(timings) * 1e3:.1f} ms)"
        )
        print(
            f"RATIO record per call at {large:,} / at {SMALL} calls (--sync {sync}): "
            f"{ratio:.2f}x (goal <= {FLAT_GOAL}) {verdict}"
        )
        own_cpu_ms = (cpu - alone_cpu) / large * 1e3
        verdict = "ok" if own_cpu_ms <= OVERHEAD_GOAL_MS else "OVER"
        print(
            f"RATIO record proxy CPU per call, its own (record less the server alone, "
            f"--sync {sync}): {own_cpu_ms:.3f} ms (goal <= {OVERHEAD_GOAL_MS} ms) {verdict}"
        )


def mcp_client_seconds(command: list[str], calls: int) -> float:
    """Seconds per ``tools/call`` of the ``mcp`` client over stdio (the session started and
    initialized outside the timing)."""
    import anyio  # noqa: PLC0415
    import mcp  # noqa: PLC0415
    from mcp import StdioServerParameters  # noqa: PLC0415

    elapsed: list[float] = []

    async def main() -> None:
        # The client gives a server only a few variables: the checkout's PYTHONPATH goes on.
        env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
        target = StdioServerParameters(command=command[0], args=command[1:], env=env)
        async with mcp.Client(target, mode="legacy") as client:
            await client.call_tool("add", {"a": 0, "b": 0})  # warm
            start = time.perf_counter()
            for n in range(calls):
                await client.call_tool("add", {"a": n, "b": 1})
            elapsed.append(time.perf_counter() - start)

    anyio.run(main)
    return elapsed[0] / calls


def proxy_overhead(directory: Path, calls: int) -> None:
    try:
        import mcp  # noqa: F401, PLC0415
    except ImportError:
        print("(the mcp extra is not installed: the overhead over a direct call is not measured)")
        return
    server = directory / "mcp_server.py"
    server.write_text(MCP_SERVER)
    direct_command = [sys.executable, str(server)]
    timings: dict[str, list[float]] = {"direct": [], **{sync: [] for sync in SYNC_MODES}}
    for _ in range(DIRECT_ROUNDS):  # alternating, so load on a shared machine hits all alike
        timings["direct"].append(mcp_client_seconds(direct_command, calls))
        for sync in SYNC_MODES:
            proxied = record_command(directory / f"{sync}.json", sync, *direct_command)
            timings[sync].append(mcp_client_seconds(proxied, calls))
    direct = statistics.median(timings["direct"])
    print(f"mcp client -> MCPServer over stdio, direct: {direct * 1e3:.3f} ms/call")
    for sync in SYNC_MODES:
        over_ms = (statistics.median(timings[sync]) - direct) * 1e3
        verdict = "ok" if over_ms <= OVERHEAD_GOAL_MS else "OVER"
        print(
            f"RATIO record per call over a direct call, mcp client wall time (--sync {sync}): "
            f"{over_ms:.3f} ms (goal <= {OVERHEAD_GOAL_MS} ms) {verdict}"
        )


def fdatasync_ms(directory: Path, count: int = 100) -> float:
    """What one append and ``fdatasync`` cost on this disk (the floor of ``--sync answer``)."""
    path = directory / "probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        start = time.perf_counter()
        for n in range(count):
            os.write(fd, b'{"session":0,"call":%d}\n' % n)
            os.fdatasync(fd)
        return (time.perf_counter() - start) / count * 1e3
    finally:
        os.close(fd)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    Path("build").mkdir(exist_ok=True)  # git-ignored, and on the disk (a /tmp may be tmpfs)
    with tempfile.TemporaryDirectory(prefix="bench-record-", dir="build") as name:
        directory = Path(name)
        print(f"one append + fdatasync on this disk: {fdatasync_ms(directory):.3f} ms")
        flat_cost(directory, QUICK_LARGE if quick else LARGE)
        proxy_overhead(directory, DIRECT_CALLS // 3 if quick else DIRECT_CALLS)


if __name__ == "__main__":
    main(sys.argv[1:])
