"""Fixture serving: the cost of one served call must not grow with the entries of other tools.

A task holds 10, 1,000 or 10,000 fixture entries; the called tool always has the same few entries
(``OWN_ENTRIES``) and every other entry belongs to one of many other tools. Each figure is the
median, over repeats, of the time per served call (µs), measured with ``time.perf_counter`` over
many fresh servers so that consumed entries never skew a repeat. The peer, measured in the same
run, is a naive server that scans every entry in declaration order: its cost grows with the task.

    python -m benchmarks fixture_serving
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from toolcall_spec.replay.fixtures import FixtureServer, Miss
from toolcall_spec.replay.matching import args_match

SIZES = (10, 1_000, 10_000)
OWN_TOOL = "billing:lookup"
OWN_ENTRIES = 8
OTHER_TOOLS = 500
CALLS_PER_REPEAT = 200
REPEATS = 41


def task_entries(total: int) -> list[dict[str, Any]]:
    """``OWN_ENTRIES`` entries of the called tool, spread among ``total`` entries in all."""
    others = total - OWN_ENTRIES
    entries: list[dict[str, Any]] = [
        {"tool": f"other:tool-{i % OTHER_TOOLS}", "args": {"id": f"o-{i}"}, "response": i}
        for i in range(others)
    ]
    for k in range(OWN_ENTRIES):  # interleaved through the task, as a recording would be
        position = (k + 1) * len(entries) // (OWN_ENTRIES + 1) if entries else 0
        entries.insert(position, {"tool": OWN_TOOL, "args": {"id": f"c-{k}"}, "response": k})
    return entries


CALLS = [{"id": f"c-{k}"} for k in range(OWN_ENTRIES)]


class NaiveServer:
    """The peer: one list, scanned from the start for every call."""

    def __init__(self, entries: Sequence[dict[str, Any]]) -> None:
        self.entries = entries
        self.consumed = [False] * len(entries)

    def serve(self, tool: str, args: Any) -> Any:
        for index, entry in enumerate(self.entries):
            if not self.consumed[index] and entry["tool"] == tool and args_match(entry, args):
                self.consumed[index] = True
                return entry
        return None


def time_once(make: Callable[[], Any], total_calls: int) -> float:
    """µs per served call, serving every own entry on fresh servers built outside the timing."""
    servers = [make() for _ in range(max(1, total_calls // OWN_ENTRIES))]
    gc.disable()  # as timeit does: a collection landing in one case would skew the ratios
    try:
        start = time.perf_counter()
        for server in servers:
            for args in CALLS:
                served = server.serve(OWN_TOOL, args)
                if served is None or isinstance(served, Miss):
                    raise AssertionError("an own entry was not served")
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return elapsed / (len(servers) * OWN_ENTRIES) * 1e6


def medians(cases: dict[str, tuple[Callable[[], Any], int]], repeats: int) -> dict[str, float]:
    """Median µs per call of each case. Every repeat times every case in turn, so a noisy
    neighbour on the machine slows all cases alike and the ratios stay fair."""
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (make, calls) in cases.items():
            timings[name].append(time_once(make, calls))
    return {name: statistics.median(values) for name, values in timings.items()}


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    calls = CALLS_PER_REPEAT // 10 if quick else CALLS_PER_REPEAT
    cases: dict[str, tuple[Callable[[], Any], int]] = {}
    for size in SIZES:
        entries = task_entries(size)
        cases[f"indexed {size}"] = (partial(FixtureServer, entries), calls)
        # the peer is slow on large tasks: fewer calls keep the run short
        cases[f"naive {size}"] = (partial(NaiveServer, entries), max(OWN_ENTRIES, calls // size))
    found = medians(cases, 3 if quick else REPEATS)
    indexed = {size: found[f"indexed {size}"] for size in SIZES}
    naive = {size: found[f"naive {size}"] for size in SIZES}
    print(f"{'entries':>8} {'indexed µs/call':>16} {'naive scan µs/call':>19}")
    for size in SIZES:
        print(f"{size:>8,} {indexed[size]:>16.2f} {naive[size]:>19.2f}")
    for size in SIZES[1:]:
        print(
            f"ratio {size:,}/{SIZES[0]}: indexed {indexed[size] / indexed[SIZES[0]]:.2f}x"
            f"  (target about 1), naive scan {naive[size] / naive[SIZES[0]]:.1f}x"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
