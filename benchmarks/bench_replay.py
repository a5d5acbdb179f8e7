"""Replay: a run's cost per task must not grow with the number of tasks (100 -> 10,000).

Each suite has ``n`` tasks of two scripted calls, one served from a fixture entry and one a miss.
Each figure is the median, over repeats, of the CPU time per task of ``ReferenceHost.create_run``
(check, execute, store) on fresh hosts, with the garbage collector on, as a user runs it. The
peer, measured in the same run, is one ``copy.deepcopy`` of the suite per task: the copy the host
makes once at run create, and used to make on every read.

    python -m benchmarks replay
"""

from __future__ import annotations

import copy
import gc
import statistics
import sys
import time
from typing import Any

from toolcall_spec.host import ReferenceHost

SIZES = (100, 1_000, 10_000)
REPEATS = 5
GOAL_GROWTH = 1.5
"""Per-task cost at 10,000 tasks over 100 tasks: a run's cost linear in its tasks (issue 15.3),
with room for what a 100 times larger heap costs the processor's caches."""


def replay_suite(tasks: int) -> dict[str, Any]:
    def one(index: int) -> dict[str, Any]:
        calls = [
            {"tool": "billing:lookup", "args": {"id": f"c-{index}"}},
            {"tool": "billing:refund"},
        ]
        return {
            "taskId": f"task-{index}",
            "input": {"calls": calls},
            "expected": {"kind": "golden", "match": {"strategy": "json-match", "value": [{}, {}]}},
            "fixtures": {
                "toolResponses": [
                    {
                        "tool": "billing:lookup",
                        "response": {"content": [{"type": "text", "text": "ok"}]},
                    }
                ]
            },
        }

    return {
        "suiteId": "bench.evals.replay",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [one(i) for i in range(tasks)],
    }


TASKS_PER_MEASURE = 10_000
"""Each measure replays at least this many tasks (100-task suites 100 times), so every size is
timed over a similar stretch and a short run is not lost in the timer's noise."""


def per_task_us(suite: dict[str, Any]) -> float:
    """CPU µs per task of ``create_run`` on fresh hosts, after a collection (garbage left by the
    previous measure is not charged to this one); the collector stays on during the runs."""
    runs = max(1, TASKS_PER_MEASURE // len(suite["tasks"]))
    hosts = [ReferenceHost() for _ in range(runs)]
    for host in hosts:
        host.capabilities["agents"]["evalSuite"]["maxTasksPerSuite"] = max(SIZES)
    gc.collect()
    start = time.process_time()
    for host in hosts:
        host.create_run(suite)
    return (time.process_time() - start) / (runs * len(suite["tasks"])) * 1e6


def deepcopy_per_task_us(suite: dict[str, Any]) -> float:
    runs = max(1, TASKS_PER_MEASURE // len(suite["tasks"]))
    gc.collect()
    start = time.process_time()
    for _ in range(runs):
        copy.deepcopy(suite)
    return (time.process_time() - start) / (runs * len(suite["tasks"])) * 1e6


def main(argv: list[str]) -> None:
    repeats = 1 if "--quick" in argv else REPEATS
    suites = {size: replay_suite(size) for size in SIZES}
    runs: dict[int, list[float]] = {size: [] for size in SIZES}
    copies: dict[int, list[float]] = {size: [] for size in SIZES}
    for _ in range(repeats):  # every size in turn: a noisy neighbour slows them alike
        for size, suite in suites.items():
            runs[size].append(per_task_us(suite))
            copies[size].append(deepcopy_per_task_us(suite))
    run = {size: statistics.median(values) for size, values in runs.items()}
    deep = {size: statistics.median(values) for size, values in copies.items()}
    print(f"{'tasks':>8} {'replay µs/task':>15} {'deepcopy µs/task':>17} {'replay/deepcopy':>16}")
    for size in SIZES:
        print(f"{size:>8,} {run[size]:>15.1f} {deep[size]:>17.1f} {run[size] / deep[size]:>15.1f}x")
    first, last = SIZES[0], SIZES[-1]
    for size in SIZES[1:]:
        growth = run[size] / run[first]
        copies_growth = deep[size] / deep[first]
        print(
            f"ratio {size:,}/{first}: replay per task {growth:.2f}x"
            f" (one deepcopy per task: {copies_growth:.2f}x)"
        )
    growth = run[last] / run[first]
    verdict = "ok" if growth <= GOAL_GROWTH else "OVER GOAL"
    print(
        f"RATIO replay per task, {last:,} / {first} tasks: {growth:.2f}x"
        f" (goal <= {GOAL_GROWTH}: linear; quadratic work would show 100x) {verdict}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
