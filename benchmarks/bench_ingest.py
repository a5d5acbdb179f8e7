"""Ingest validation, streaming memory and PII stripping, as ratios measured in one run.

1. The same JSONL corpus of ``tool_call`` events (about 595 bytes each, 2% invalid: a bad enum,
   an unknown category, ``"true"`` for a number) is validated by: orjson parsing alone (the
   floor), this package's JSONL ingest, the pure-Python jsonschema validator, and the strict
   pydantic model per line. Targets (DESIGN.md): ours at most 2.5x the floor, jsonschema at
   least 40x slower than ours.
2. Peak memory of ``toolcall-spec ingest`` streaming a 10 MB and a 100 MB file, each in its own
   subprocess (VmHWM on Linux, ru_maxrss elsewhere). Target: under 20 MiB apart.
3. PII stripping of 32, 64 and 128 KB adversarial inputs: linear time means each doubling about
   doubles the time (ratio near 2).

``python -m benchmarks ingest`` or ``python -m benchmarks.bench_ingest [--quick]``.
"""

from __future__ import annotations

import argparse
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
from typing import Any

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


def floor(path: Path) -> int:
    with path.open("rb") as handle:
        for line in handle:
            orjson.loads(line)
    return 0


def ours(path: Path) -> int:
    from toolcall_spec.analytics.ingest import ingest_jsonl  # noqa: PLC0415

    with path.open("rb") as handle:
        return ingest_jsonl(handle).rejected


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


def bench_validators(path: Path, count: int, invalid: int, rounds: int = 3) -> None:
    """The fast approaches run in interleaved rounds and keep their best round, so a burst of
    load on a shared machine skews no single one; jsonschema (slow) runs once."""
    size = path.stat().st_size
    print(f"corpus: {count:,} events, {size / count:.0f} bytes/event, {invalid:,} invalid")
    approaches: dict[str, Callable[[Path], int]] = {
        "orjson parse only (floor)": floor,
        "toolcall-spec JSONL ingest": ours,
        "pydantic strict, per line": pydantic_strict,
    }
    best = dict.fromkeys(approaches, float("inf"))
    rejected: dict[str, int] = {}
    for _ in range(rounds):
        for name, run in approaches.items():
            start = time.perf_counter()
            rejected[name] = run(path)
            best[name] = min(best[name], time.perf_counter() - start)
    oracle = pure_python_jsonschema()
    start = time.perf_counter()
    rejected["jsonschema (pure Python)"] = oracle(path)
    best["jsonschema (pure Python)"] = time.perf_counter() - start
    us = {name: seconds / count * 1e6 for name, seconds in best.items()}
    for name, value in us.items():
        check = "" if name.startswith("orjson") else f"  rejected {rejected[name]:,}"
        print(f"  {name:<28} {value:8.2f} µs/event{check}")
    ours_us = us["toolcall-spec JSONL ingest"]
    print(
        f"  ours / floor       {ours_us / us['orjson parse only (floor)']:6.2f}x  (target <= 2.5)"
    )
    print(f"  jsonschema / ours  {us['jsonschema (pure Python)'] / ours_us:6.1f}x  (target >= 40)")
    print(f"  pydantic / ours    {us['pydantic strict, per line'] / ours_us:6.2f}x")


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


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_ingest", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller corpus and files")
    args = parser.parse_args(argv)
    count = QUICK_EVENTS if args.quick else EVENTS
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        folder = Path(tmp)
        corpus = folder / "corpus.jsonl"
        invalid = write_corpus(corpus, count)
        print("validation")
        bench_validators(corpus, count, invalid)
        print("streaming memory (toolcall-spec ingest FILE, one subprocess each)")
        bench_memory(folder, corpus, QUICK_MEMORY_SIZES_MB if args.quick else MEMORY_SIZES_MB)
    print("PII stripping of adversarial input")
    bench_pii()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"(this process: peak RSS {peak:.0f} MiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
