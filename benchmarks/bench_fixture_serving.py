"""Fixture serving: the cost of one served call must not grow with the entries of its own tool, in
any call order, and stays within a small factor of a plain hash index.

A task holds 10, 1,000 or 10,000 entries, all for the called tool, each with its own arguments;
the calls ask for every entry once, in random order. Cases, timed in the same run:

- ``exact``: entries with exact ``args``; the calls carry the same arguments.
- ``subset``: entries with ``argsMatch: subset`` on one member; the calls carry two more members.
- ``floor``: a plain hash index, the least any server can do: a dict from the arguments' sorted
  JSON text (``orjson.dumps(..., OPT_SORT_KEYS)``, which ignores ``1 == 1.0``) to a queue of
  entries. Target (issue 15): ``exact`` and ``subset`` at most 4x the floor at 10,000 entries.
- ``naive``: the scan the specification describes, first unconsumed match from the start (fewer
  calls: it is quadratic), to show what the index saves.

Each figure is the median over repeats of CPU µs per served call; every repeat times every case
in turn, so load on a shared machine slows all alike and the ratios stay fair.

    python -m benchmarks fixture_serving [--quick]
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import orjson

from toolcall_spec.replay.fixtures import FixtureServer, Miss
from toolcall_spec.replay.matching import args_match

SIZES = (10, 1_000, 10_000)
TOOL = "billing:lookup"
CALLS_PER_REPEAT = 20_000
NAIVE_CALLS = 200
REPEATS = 15
GOAL_VS_FLOOR = 4.0


class Server(Protocol):
    def serve(self, tool: str, args: Any) -> Any: ...


def entries(size: int, match: str) -> list[dict[str, Any]]:
    if match == "subset":
        return [
            {"tool": TOOL, "args": {"id": f"c-{i}"}, "argsMatch": "subset", "response": i}
            for i in range(size)
        ]
    return [{"tool": TOOL, "args": {"id": f"c-{i}", "n": i}, "response": i} for i in range(size)]


def calls(size: int, match: str, seed: int = 15) -> list[dict[str, Any]]:
    """One call per entry, in random order."""
    order = list(range(size))
    random.Random(seed).shuffle(order)
    if match == "subset":
        return [{"id": f"c-{i}", "currency": "EUR", "limit": 10} for i in order]
    return [{"n": float(i), "id": f"c-{i}"} for i in order]  # key order and 1.0 differ


class HashIndexFloor:
    """The floor: arguments' sorted JSON text -> entries with those arguments, first first."""

    def __init__(self, task: Sequence[dict[str, Any]]) -> None:
        self.index: dict[bytes, deque[dict[str, Any]]] = {}
        for entry in task:
            key = orjson.dumps(entry["args"], option=orjson.OPT_SORT_KEYS)
            self.index.setdefault(key, deque()).append(entry)

    def serve(self, tool: str, args: Any) -> Any:
        found = self.index.get(orjson.dumps(_floor_args(args), option=orjson.OPT_SORT_KEYS))
        return found.popleft() if found else None


def _floor_args(args: dict[str, Any]) -> dict[str, Any]:
    # the floor cannot see 1 == 1.0 or ignore extra members: hand it the entry's own form
    return {"id": args["id"], "n": int(args["n"])} if "n" in args else {"id": args["id"]}


class NaiveServer:
    """The specification read literally: scan from the start for every call."""

    def __init__(self, task: Sequence[dict[str, Any]]) -> None:
        self.entries = task
        self.consumed = [False] * len(task)

    def serve(self, tool: str, args: Any) -> Any:
        for index, entry in enumerate(self.entries):
            if not self.consumed[index] and entry["tool"] == tool and args_match(entry, args):
                self.consumed[index] = True
                return entry
        return None


def time_once(make: Callable[[], Server], call_list: list[dict[str, Any]], total: int) -> float:
    """µs per served call: ``call_list`` (or its first ``total`` calls) on fresh servers, each
    built outside the timing."""
    rounds = max(1, total // len(call_list))
    used = call_list[:total]
    servers = [make() for _ in range(rounds)]
    gc.disable()  # as timeit does: a collection landing in one case would skew the ratios
    try:
        start = time.process_time()  # CPU time: steadier than wall time on a shared machine
        for server in servers:
            for args in used:
                served = server.serve(TOOL, args)
                if served is None or isinstance(served, Miss):
                    raise AssertionError("an entry was not served")
        elapsed = time.process_time() - start
    finally:
        gc.enable()
    return elapsed / (rounds * len(used)) * 1e6


Case = tuple[Callable[[], Server], list[dict[str, Any]], int]


def medians(cases: dict[str, Case], repeats: int) -> dict[str, float]:
    timings: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (make, call_list, total) in cases.items():
            timings[name].append(time_once(make, call_list, total))
    return {name: statistics.median(values) for name, values in timings.items()}


def build_cases(quick: bool) -> dict[str, Case]:
    per_repeat = CALLS_PER_REPEAT // 10 if quick else CALLS_PER_REPEAT
    cases: dict[str, Case] = {}
    for size in SIZES:
        for match in ("exact", "subset"):
            task, call_list = entries(size, match), calls(size, match)
            cases[f"{match} {size}"] = (partial(FixtureServer, task), call_list, per_repeat)
        task, call_list = entries(size, "exact"), calls(size, "exact")
        cases[f"floor {size}"] = (partial(HashIndexFloor, task), call_list, per_repeat)
        naive_calls = min(len(call_list), NAIVE_CALLS // (10 if quick else 1))
        cases[f"naive {size}"] = (partial(NaiveServer, task), call_list, naive_calls)
    return cases


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    found = medians(build_cases(quick), 3 if quick else REPEATS)
    print("µs per served call, one tool, every entry called once in random order")
    print(
        f"{'entries':>8} {'exact':>8} {'subset':>8} {'floor':>8} {'naive scan':>11}"
        f" {'exact/floor':>12} {'subset/floor':>13}"
    )
    for size in SIZES:
        row = [found[f"{case} {size}"] for case in ("exact", "subset", "floor", "naive")]
        print(
            f"{size:>8,}"
            + "".join(f" {value:>8.2f}" for value in row[:3])
            + f" {row[3]:>11.1f} {row[0] / row[2]:>11.2f}x {row[1] / row[2]:>12.2f}x"
        )
    largest, smallest = SIZES[-1], SIZES[0]
    floor_growth = found[f"floor {largest}"] / found[f"floor {smallest}"]
    for case in ("exact", "subset"):
        vs_floor = found[f"{case} {largest}"] / found[f"floor {largest}"]
        growth = found[f"{case} {largest}"] / found[f"{case} {smallest}"]
        verdict = "ok" if vs_floor <= GOAL_VS_FLOOR else "OVER GOAL"
        print(
            f"RATIO fixture {case} / hash-index floor at {largest:,}: {vs_floor:.2f}x "
            f"(goal <= {GOAL_VS_FLOOR:g}) {verdict}; {largest:,} / {smallest} entries: "
            f"{growth:.2f}x (the floor's own: {floor_growth:.2f}x, caches not work)"
        )
    naive_growth = found[f"naive {largest}"] / found[f"naive {smallest}"]
    print(f"RATIO naive scan {largest:,} / {smallest} entries: {naive_growth:.0f}x (for scale)")


if __name__ == "__main__":
    main(sys.argv[1:])
