"""The price of the hostile-input defences, as ratios measured in one run.

1. Repeated member names on the JSONL hot path: the same corpus of ``tool_call`` events (the
   ingest benchmark's) read by orjson alone (the floor), by ``loading.iter_jsonl`` without the
   check (``repeated_member`` replaced by a no-op; for ingest, the pre-check's group guard too),
   and by ``iter_jsonl`` as shipped; once as orjson writes it (compact) and once as
   ``json.dumps`` writes it (spaces after ``:`` and ``,``). Also the whole JSONL ingest.
2. ``toolcall-spec diff`` growth: nested ``allOf`` at depths 10, 20, 40 and enums of 2,000, 4,000
   and 8,000 values. Polynomial work shows as a bounded ratio per doubling (about 4 for
   quadratic, 2 for linear); the exponential walk it replaces doubled per level.

``python -m benchmarks hostile`` or ``python -m benchmarks.bench_hostile [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bench_ingest import write_corpus

EVENTS = 100_000
QUICK_EVENTS = 10_000
ALL_OF_DEPTHS = (10, 20, 40)
ENUM_SIZES = (2_000, 4_000, 8_000)


def floor(path: Path) -> None:
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)


def reader(path: Path) -> None:
    from toolcall_spec.loading import iter_jsonl  # noqa: PLC0415

    with path.open("rb") as handle:
        for _ in iter_jsonl(handle):
            pass


def ingest(path: Path) -> None:
    from toolcall_spec.analytics.ingest import ingest_jsonl  # noqa: PLC0415

    with path.open("rb") as handle:
        ingest_jsonl(handle)


@contextmanager
def without_check() -> Iterator[None]:
    """The readers without the repeated-member check: the full path's (``repeated_member``) and
    the ingest pre-check's group guard (``may_repeat_in_group``)."""
    from toolcall_spec import loading  # noqa: PLC0415
    from toolcall_spec.analytics import precheck  # noqa: PLC0415

    originals = loading.repeated_member, precheck.may_repeat_in_group
    loading.repeated_member = lambda raw, value: None
    precheck.may_repeat_in_group = lambda raws, events: False
    try:
        yield
    finally:
        loading.repeated_member, precheck.may_repeat_in_group = originals


def bench_reader(compact: Path, spaced: Path, count: int, rounds: int = 5) -> None:
    """Interleaved rounds, each approach keeping its best: a burst of load on a shared machine
    then skews no single approach."""
    approaches: dict[str, tuple[Callable[[Path], None], bool]] = {
        "orjson parse only (floor)": (floor, True),
        "iter_jsonl, no repeat check": (reader, False),
        "iter_jsonl, repeat check": (reader, True),
        "JSONL ingest, no check": (ingest, False),
        "JSONL ingest, as shipped": (ingest, True),
    }
    for label, path in (("orjson-written (compact)", compact), ("json.dumps-written", spaced)):
        best = dict.fromkeys(approaches, float("inf"))
        for _ in range(rounds):
            for name, (run, check) in approaches.items():
                with nullcontext() if check else without_check():
                    start = time.perf_counter()
                    run(path)
                    best[name] = min(best[name], time.perf_counter() - start)
        base = best["orjson parse only (floor)"]
        print(f"corpus {label}: {count:,} events")
        for name, seconds in best.items():
            print(f"  {name:<30} {seconds / count * 1e6:7.2f} µs/event  {seconds / base:5.2f}x")
        extra = best["iter_jsonl, repeat check"] - best["iter_jsonl, no repeat check"]
        print(f"  the check alone                {extra / base:+7.2f}x floor")


def nested_all_of(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    schema = leaf
    for _ in range(depth):
        schema = {"allOf": [schema, {"type": "object"}]}
    return schema


def timed(run: Callable[[], object], rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def bench_diff() -> None:
    from toolcall_spec.compat import compare  # noqa: PLC0415

    def all_of(depth: int) -> float:
        old = nested_all_of(depth, {"type": "string"})
        new = nested_all_of(depth, {"type": "integer"})
        return timed(lambda: compare(old, new))

    def enum(size: int) -> float:
        old = {"enum": [f"v{i}" for i in range(size)]}
        new = {"enum": [f"v{i}" for i in range(1, size + 1)]}
        return timed(lambda: compare(old, new))

    for label, sizes, measure in (
        ("nested allOf, depth", ALL_OF_DEPTHS, all_of),
        ("enum, values", ENUM_SIZES, enum),
    ):
        seconds = [measure(size) for size in sizes]
        for size, value in zip(sizes, seconds, strict=True):
            print(f"  diff {label} {size:>6,}: {value * 1000:9.1f} ms")
        growth = [b / a for a, b in pairwise(seconds)]
        print(f"  diff {label}: growth per doubling {', '.join(f'{g:.2f}' for g in growth)}")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_hostile")
    parser.add_argument("--quick", action="store_true", help="a smaller corpus")
    args = parser.parse_args(argv)
    count = QUICK_EVENTS if args.quick else EVENTS
    with tempfile.TemporaryDirectory() as folder:
        compact, spaced = Path(folder, "compact.jsonl"), Path(folder, "spaced.jsonl")
        write_corpus(compact, count)
        with compact.open("rb") as source, spaced.open("w", encoding="utf-8") as target:
            for line in source:
                target.write(json.dumps(json.loads(line)) + "\n")
        bench_reader(compact, spaced, count)
    bench_diff()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
