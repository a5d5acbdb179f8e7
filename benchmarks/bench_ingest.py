"""Ingest validation, workers, streaming memory and PII stripping, as ratios measured in one run.

1. The same JSONL corpus of ``tool_call`` events (about 595 bytes each, 2% invalid: a bad enum,
   an unknown category, ``"true"`` for a number) is checked by: orjson parsing alone (the floor),
   this package's JSONL ingest, and the peers: jsonschema-rs directly (orjson, then ``is_valid``,
   errors only on failures), pydantic strict per line, msgspec with a hand-written Struct (fast,
   but without the schema's patterns, formats and conditional), the pure-Python jsonschema
   validator and check-jsonschema (the last two on a slice of the corpus: they are slow). Figures
   are CPU time of this process (``time.process_time``), best of interleaved rounds: on a shared
   machine this is much steadier than wall time. Goal (issue 15): ours at most 1.5x the floor.
2. Throughput with ``workers`` processes (wall time, the whole ingest including the pool): goal at
   least 1.7x one worker's with 2 workers, which needs two idle cores.
3. Peak memory of ``toolcall-spec ingest`` streaming a 10 MB and a 100 MB file, each in its own
   subprocess (VmHWM on Linux, ru_maxrss elsewhere). Target: under 20 MiB apart.
4. PII stripping of 32, 64 and 128 KB adversarial inputs: linear time means each doubling about
   doubles the time (ratio near 2).

Every goal line starts with ``RATIO`` (``... | grep RATIO``).

``python -m benchmarks ingest [--quick] [--only=validation,workers,memory,pii] [--no-slow-peers]``
(options take their value after ``=``: ``python -m benchmarks`` passes options to every module).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import msgspec
import orjson

EVENTS = 100_000
QUICK_EVENTS = 10_000
INVALID_SHARE = 0.02
MEMORY_SIZES_MB = (10, 100)
QUICK_MEMORY_SIZES_MB = (2, 20)
PII_SIZES_KB = (32, 64, 128)


# --- the corpus ---------------------------------------------------------------------------------


def make_event(rng: random.Random, index: int) -> dict[str, Any]:
    status = "error" if rng.random() < 0.2 else "success"
    event: dict[str, Any] = {
        "event_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "event_type": "tool_call",
        "trace_id": f"tr_{rng.getrandbits(64):016x}",
        "session_id": f"ses_{index // 50:08d}",
        "timestamp": f"2026-11-{1 + index % 28:02d}T{index % 24:02d}:{index % 60:02d}:00.000Z",
        "source": "server",
        "event_name": rng.choice(["billing_lookup", "search_offers", "book_room", "get_quote"]),
        "platform": "chatgpt",
        "sdk_version": "0.4.0",
        "latency_ms": round(rng.uniform(1, 900), 3),
        "status": status,
        "is_retry": 0,
        "input_keys": {"customer_id": True, "reference": True, "currency": True},
        "input_types": {"customer_id": "string", "reference": "string", "currency": "string"},
        "input_values": {"customer_id": f"c-{index}", "reference": "A-17", "currency": "EUR"},
        "locale": "en-US",
        "country_code": "US",
    }
    if status == "error":
        event["error_category"] = rng.choice(["tool_error", "unknown", "validation"])
        event["error_message"] = "upstream service unavailable for [EMAIL_REDACTED]"
    return event


def break_event(event: dict[str, Any], rng: random.Random) -> None:
    """One defect the schema catches: a bad enum, an unknown category, "true" for a number."""
    defect = rng.randrange(3)
    if defect == 0:
        event["source"] = "browser"
    elif defect == 1:
        event.update(status="error", error_category="exploded")
    else:
        event["is_retry"] = "true"


def write_corpus(path: Path, count: int, seed: int = 245) -> int:
    """Write ``count`` events, 2% of them invalid; return how many are invalid."""
    rng = random.Random(seed)
    invalid = 0
    with path.open("wb") as handle:
        for index in range(count):
            event = make_event(rng, index)
            if rng.random() < INVALID_SHARE:
                break_event(event, rng)
                invalid += 1
            handle.write(orjson.dumps(event) + b"\n")
    return invalid


def write_sized_file(path: Path, megabytes: int, corpus: Path) -> None:
    """A file of about ``megabytes`` MB made of the corpus's lines, repeated as needed."""
    lines = corpus.read_bytes().splitlines(keepends=True)
    target = megabytes * 1_000_000
    written = 0
    with path.open("wb") as handle:
        while written < target:
            for line in lines:
                handle.write(line)
                written += len(line)
                if written >= target:
                    break


# --- the validators -----------------------------------------------------------------------------

SLOW_PEER_EVENTS = 2_000
"""Events the slow peers (pure-Python jsonschema, check-jsonschema) check: a slice of the corpus."""
GOAL_VS_FLOOR = 1.5
STAGE = "  stage: "
"""Rows that time a part of ingest (each including the parts before it), not a peer."""
GOAL_TWO_WORKERS = 1.7
WORKERS_FILE_MB = 240
"""The file the two-worker goal is measured on: four times the corpus, so that the pool's start
and the wait for the last piece (fixed costs of about 20 ms) do not stand in for throughput."""


def floor(path: Path) -> int:
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)
    return 0


def ours(path: Path) -> int:
    from toolcall_spec.analytics.ingest import ingest_jsonl  # noqa: PLC0415

    with path.open("rb") as handle:
        return ingest_jsonl(handle)["rejected"]


def orjson_refusing_repeats(path: Path) -> int:
    """The floor of a sound reader: orjson plus the package's repeated-member check
    (``toolcall_spec.loading.parse_jsonl_line``), no schema."""
    from toolcall_spec.loading import parse_jsonl_line  # noqa: PLC0415

    refused = 0
    with path.open("rb") as handle:
        for line in handle:
            settled = parse_jsonl_line(line)
            refused += settled is not None and settled[1] is not None
    return refused


def precheck_stage(stage: Literal["read", "decode", "guard", "precheck"]) -> Callable[[Path], int]:
    """Where ingest's time goes, stage by stage, each including the ones before: reading the
    lines a block at a time, the pre-check's typed msgspec decode, its repeated-member guard
    (``may_repeat_in_group``), the whole pre-check (with the block-wide pattern checks). The
    full ingest adds the full path for the lines the pre-check leaves."""
    from toolcall_spec.analytics.precheck import (  # noqa: PLC0415
        GROUP_LINES,
        event_precheck,
        may_repeat_in_group,
    )
    from toolcall_spec.loading import iter_jsonl_blocks  # noqa: PLC0415

    precheck = event_precheck()

    def decoded(group: list[bytes | None]) -> tuple[list[bytes], list[Any]]:
        raws: list[bytes] = []
        events: list[Any] = []
        for raw in group:
            try:
                events.append(precheck.decode(raw))  # type: ignore[arg-type]
            except (msgspec.DecodeError, TypeError, RecursionError):
                continue
            raws.append(raw)  # type: ignore[arg-type]
        return raws, events

    def decode_groups(lines: list[bytes | None]) -> int:
        left = 0
        for start in range(0, len(lines), GROUP_LINES):
            raws, events = decoded(lines[start : start + GROUP_LINES])
            left += len(lines[start : start + GROUP_LINES]) - len(events)
            if stage == "guard" and events:
                may_repeat_in_group(raws, events)
        return left

    def run(path: Path) -> int:
        left = 0
        with path.open("rb") as handle:
            for lines, _ in iter_jsonl_blocks(handle):
                if stage == "precheck":
                    left += len(precheck.unsettled(lines))
                elif stage != "read":
                    left += decode_groups(lines)
        return left

    return run


def jsonschema_rs_direct(path: Path) -> int:
    from toolcall_spec.catalog import validator  # noqa: PLC0415

    compiled = validator("tool-call-event")
    rejected = 0
    with path.open("rb") as handle:
        for line in handle:
            event = orjson.loads(line)
            if not compiled.is_valid(event):
                rejected += 1
                list(compiled.iter_errors(event))
    return rejected


class HandWrittenEvent(msgspec.Struct, forbid_unknown_fields=True):
    """The msgspec peer: members, types and enums written by hand; no patterns, formats or
    conditional, so it accepts events the schema refuses."""

    event_id: str
    event_type: Literal["tool_call"]
    trace_id: str
    session_id: str
    timestamp: str
    source: Literal["server", "widget"]
    event_name: str = ""
    platform: str = ""
    sdk_version: str = ""
    latency_ms: float = 0.0
    status: Literal["success", "error"] = "success"
    error_category: (
        Literal["auth", "validation", "timeout", "rate_limit", "server", "unknown", "tool_error"]
        | None
    ) = None
    error_message: str = ""
    is_retry: int = 0
    input_keys: dict[str, Any] = {}
    input_types: dict[str, Any] = {}
    input_values: dict[str, Any] = {}
    locale: str = ""
    country_code: str = ""


def msgspec_struct() -> Callable[[Path], int]:
    decode = msgspec.json.Decoder(HandWrittenEvent).decode

    def run(path: Path) -> int:
        rejected = 0
        with path.open("rb") as handle:
            for line in handle:
                try:
                    decode(line)
                except msgspec.ValidationError:
                    rejected += 1
        return rejected

    return run


def pure_python_jsonschema() -> Callable[[Path], int]:
    import referencing  # noqa: PLC0415
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    from toolcall_spec.catalog import all_schemas, load_schema  # noqa: PLC0415

    registry: referencing.Registry[Any] = referencing.Registry().with_resources(
        (doc["$id"], referencing.Resource.from_contents(doc)) for doc in all_schemas().values()
    )
    validator = Draft202012Validator(
        load_schema("tool-call-event"),
        registry=registry,
        format_checker=Draft202012Validator.FORMAT_CHECKER,
    )

    def run(path: Path) -> int:
        rejected = 0
        with path.open("rb") as handle:
            for line in handle:
                if list(validator.iter_errors(orjson.loads(line))):
                    rejected += 1
        return rejected

    return run


def pydantic_strict(path: Path) -> int:
    from pydantic import ValidationError  # noqa: PLC0415

    from toolcall_spec.models import ToolCallEvent  # noqa: PLC0415

    rejected = 0
    with path.open("rb") as handle:
        for line in handle:
            try:
                ToolCallEvent.model_validate_json(line, strict=True)
            except ValidationError:
                rejected += 1
    return rejected


def check_jsonschema_cli(folder: Path, sliced: Path) -> float | None:
    """µs per event of the ``check-jsonschema`` command on the slice (an array of its events,
    the event schema bundled so no reference leaves the machine), its start-up subtracted (the
    same command on an empty array); ``None`` when the command is not installed."""
    command = Path(sys.executable).with_name("check-jsonschema")
    if not command.exists():
        return None
    schema = folder / "array-schema.json"
    schema.write_text(json.dumps({"type": "array", "items": self_contained_event_schema()}))
    events = [orjson.loads(line) for line in sliced.read_bytes().splitlines()]
    full, empty = folder / "events.json", folder / "empty.json"
    full.write_bytes(orjson.dumps(events))
    empty.write_bytes(b"[]")

    def seconds(instance: Path) -> float:
        start = time.perf_counter()
        subprocess.run(
            [str(command), "--schemafile", str(schema), str(instance)],
            capture_output=True,
            check=False,
        )
        return time.perf_counter() - start

    spent = min(seconds(full) for _ in range(2)) - min(seconds(empty) for _ in range(2))
    return max(spent, 0.0) / len(events) * 1e6


def self_contained_event_schema() -> dict[str, Any]:
    """The event schema with its references to the shared formats written in place, so a tool
    that resolves ``$ref`` over the network has nothing to fetch."""
    from toolcall_spec.catalog import all_schemas, load_schema  # noqa: PLC0415

    formats = all_schemas()["common/formats.schema.json"]["$defs"]
    schema = dict(load_schema("tool-call-event"))
    del schema["$id"]
    schema["properties"] = {
        name: formats[member["$ref"].rsplit("/", 1)[-1]] if "$ref" in member else member
        for name, member in schema["properties"].items()
    }
    return schema


def best_cpu_seconds(
    approaches: dict[str, Callable[[Path], int]], path: Path, rounds: int
) -> tuple[dict[str, float], dict[str, int]]:
    """Best CPU time of each approach over interleaved rounds, and how many events it rejected."""
    best = dict.fromkeys(approaches, float("inf"))
    rejected: dict[str, int] = {}
    for _ in range(rounds):
        for name, run in approaches.items():
            start = time.process_time()
            rejected[name] = run(path)
            best[name] = min(best[name], time.process_time() - start)
    return best, rejected


def bench_validators(folder: Path, path: Path, count: int, invalid: int, slow: bool) -> None:
    size = path.stat().st_size
    print(f"corpus: {count:,} events, {size / count:.0f} bytes/event, {invalid:,} invalid")
    approaches: dict[str, Callable[[Path], int]] = {
        "orjson parse only (floor)": floor,
        "toolcall-spec JSONL ingest": ours,
        STAGE + "lines read in blocks": precheck_stage("read"),
        STAGE + "+ typed decode": precheck_stage("decode"),
        STAGE + "+ repeat guard": precheck_stage("guard"),
        STAGE + "+ pattern checks": precheck_stage("precheck"),
        "orjson + repeat refusal": orjson_refusing_repeats,
        "jsonschema-rs directly": jsonschema_rs_direct,
        "pydantic strict, per line": pydantic_strict,
        "msgspec Struct (not faithful)": msgspec_struct(),
    }
    best, rejected = best_cpu_seconds(approaches, path, rounds=3)
    us = {name: seconds / count * 1e6 for name, seconds in best.items()}
    if slow:
        sliced = folder / "slice.jsonl"
        lines = path.read_bytes().splitlines(keepends=True)[:SLOW_PEER_EVENTS]
        sliced.write_bytes(b"".join(lines))
        slow_best, slow_rejected = best_cpu_seconds(
            {"jsonschema (pure Python)": pure_python_jsonschema()}, sliced, rounds=1
        )
        us["jsonschema (pure Python)"] = slow_best["jsonschema (pure Python)"] / len(lines) * 1e6
        rejected.update(slow_rejected)
        cli = check_jsonschema_cli(folder, sliced)
        if cli is not None:
            us["check-jsonschema (CLI, wall)"] = cli
    floor_us = us["orjson parse only (floor)"]
    ours_us = us["toolcall-spec JSONL ingest"]
    print(f"  {'approach':<30} {'µs/event':>9} {'x floor':>8} {'x ours':>8}")
    for name, value in us.items():
        check = f"  rejected {rejected[name]:,}" if name in rejected and floor_us != value else ""
        if name.startswith(STAGE):
            check = f"  left to the full path {rejected[name]:,}" if rejected[name] else ""
        print(f"  {name:<30} {value:9.2f} {value / floor_us:8.2f} {value / ours_us:8.2f}{check}")
    ratio = ours_us / floor_us
    verdict = "ok" if ratio <= GOAL_VS_FLOOR else "OVER GOAL"
    print(
        f"RATIO ingest (one core) / orjson floor: {ratio:.2f}x (goal <= {GOAL_VS_FLOOR}) {verdict}"
    )


def bench_workers(path: Path, count: int, *, goal: bool = True) -> None:
    """Wall time with 1 and 2 workers, and the CPU time each spends: with the CPU time of the
    parent and of the workers, the speedup two idle cores would give can be estimated on a busy
    machine too (printed as an estimate, not as the measurement). ``goal``: print the goal's
    ``RATIO`` line (measured on a file long enough for throughput, not start-up, to count)."""
    from toolcall_spec.analytics.ingest_parallel import ingest_jsonl_file  # noqa: PLC0415

    def run(workers: int) -> tuple[float, float, float]:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu, start = time.process_time(), time.perf_counter()
        with path.open("rb") as handle:
            ingest_jsonl_file(handle, workers=workers)
        wall, parent = time.perf_counter() - start, time.process_time() - cpu
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
        return wall, parent, spent

    best = {1: (float("inf"), 0.0, 0.0), 2: (float("inf"), 0.0, 0.0)}
    for _ in range(3):
        for workers, so_far in best.items():
            best[workers] = min(so_far, run(workers))
    for workers, (wall, parent, spent) in best.items():
        print(
            f"  {workers} worker(s): {count / wall:12,.0f} events/s (wall {wall:.2f} s; "
            f"CPU: this process {parent:.2f} s, worker processes {spent:.2f} s)"
        )
    speedup = best[1][0] / best[2][0]
    verdict = "ok" if speedup >= GOAL_TWO_WORKERS else "UNDER GOAL"
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    size = f"{path.stat().st_size / 1e6:.0f} MB"
    print(
        f"{'RATIO ' if goal else '  '}ingest 2 workers / 1 worker throughput ({size}): "
        f"{speedup:.2f}x (goal >= {GOAL_TWO_WORKERS} on 2 idle cores) {verdict}; "
        f"{os.cpu_count()} cores, load average {busy:.1f} during the run"
    )
    _, parent, spent = best[2]
    one_core = best[1][1]
    estimate = one_core / max(parent, spent / 2)
    print(
        f"  estimate for 2 idle cores from CPU times: {estimate:.2f}x "
        f"(one worker's CPU / the busier of: this process, half the workers' CPU)"
    )


# --- memory -------------------------------------------------------------------------------------

_MEASURE = """
import resource, sys
from pathlib import Path
from toolcall_spec.cli import main
code = main(["ingest", sys.argv[1]])
status = Path("/proc/self/status")
if status.exists():  # VmHWM: this process's own peak; ru_maxrss can carry the parent's over fork
    line = next(l for l in status.read_text().splitlines() if l.startswith("VmHWM:"))
    print(int(line.split()[1]), file=sys.stderr)
else:
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def peak_rss_kib(path: Path) -> int:
    """Peak RSS (KiB) of a fresh process that streams ``path`` through ``toolcall-spec ingest``."""
    finished = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    return int(finished.stderr.strip().splitlines()[-1])


def bench_memory(folder: Path, corpus: Path, sizes: tuple[int, ...]) -> None:
    peaks = []
    for megabytes in sizes:
        path = folder / f"stream-{megabytes}mb.jsonl"
        write_sized_file(path, megabytes, corpus)
        peaks.append(peak_rss_kib(path))
        print(f"  {megabytes:>4} MB file: peak RSS {peaks[-1] / 1024:6.1f} MiB")
        path.unlink()
    spread = (max(peaks) - min(peaks)) / 1024
    print(f"  spread {spread:.1f} MiB  (target < 20 MiB)")


# --- PII stripping ------------------------------------------------------------------------------

ADVERSARIAL = {
    "address characters": "a",
    "local parts": "a@",
    "dotted domain": "a@" + "a." * 8,
    "spaced digits": "1 ",
    "card groups": "4111 ",
    "IBAN starts": "DE89 ",
    "hex groups": "1:",
    "dotted octets": "255.",
    "SSN starts": "123-45-",
    "mixed": "a1.b2@c3 +4-5 (6) 7:8::9 ",
}


def bench_pii() -> None:
    from toolcall_spec.analytics.pii import strip_pii  # noqa: PLC0415

    print(
        f"  {'input':<20}"
        + "".join(f"{kb:>8} KB" for kb in PII_SIZES_KB)
        + "   growth per doubling"
    )
    growths = []
    for name, unit in ADVERSARIAL.items():
        times = []
        for kb in PII_SIZES_KB:
            text = unit * (kb * 1024 // len(unit))
            times.append(min(_time(strip_pii, text) for _ in range(3)))
        ratios = [later / earlier for earlier, later in pairwise(times)]
        growths += ratios
        cells = "".join(f"{t * 1000:8.1f} ms" for t in times)
        print(f"  {name:<20}{cells}   " + ", ".join(f"{r:.2f}" for r in ratios))
    print(f"  median growth per doubling {statistics.median(growths):.2f} (linear: about 2)")


def _time(function: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    function(text)
    return time.perf_counter() - start


SECTIONS = ("validation", "workers", "memory", "pii")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_ingest", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller corpus and files")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}"
    )
    parser.add_argument(
        "--no-slow-peers", action="store_true", help="leave out jsonschema and check-jsonschema"
    )
    args, _ = parser.parse_known_args(argv)
    sections = set(args.only.split(","))
    count = QUICK_EVENTS if args.quick else EVENTS
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        folder = Path(tmp)
        corpus = folder / "corpus.jsonl"
        invalid = write_corpus(corpus, count)
        if "validation" in sections:
            print("validation (CPU time of one process)")
            bench_validators(folder, corpus, count, invalid, slow=not args.no_slow_peers)
        if "workers" in sections:
            print("workers (wall time, whole ingest)")
            bench_workers(corpus, count, goal=args.quick)
            if not args.quick:  # pool start and the last piece weigh less over a longer file
                longer = folder / "workers.jsonl"
                write_sized_file(longer, WORKERS_FILE_MB, corpus)
                events = sum(1 for _ in longer.open("rb"))
                bench_workers(longer, events)
        if "memory" in sections:
            print("streaming memory (toolcall-spec ingest FILE, one subprocess each)")
            sizes = QUICK_MEMORY_SIZES_MB if args.quick else MEMORY_SIZES_MB
            bench_memory(folder, corpus, sizes)
    if "pii" in sections:
        print("PII stripping of adversarial input")
        bench_pii()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this process: peak RSS {peak:.0f} MiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
