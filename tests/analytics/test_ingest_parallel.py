"""JSONL ingest with several worker processes gives the answer one process gives: the same counts,
indices, line numbers and issues in the same order, whatever lies at the cuts between pieces.
And the Python API keeps a bounded number of rejections however many lines are rejected."""

from __future__ import annotations

import io
import multiprocessing
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli import run_cli
from support.documents import numbered_event

from toolcall_spec.analytics import ingest_parallel
from toolcall_spec.analytics.ingest import MAX_KEPT_REJECTIONS, ingest_jsonl, iter_jsonl_rejections
from toolcall_spec.analytics.ingest_parallel import (
    ingest_jsonl_file,
    iter_jsonl_rejections_parallel,
    piece_bounds,
)
from toolcall_spec.typed import EventRejection

AS_SENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.indices-as-sent")


def event(number: int, **changes: Any) -> dict[str, Any]:
    return numbered_event(number, **{"status": "success", **changes})


KINDS_OF_LINE: dict[str, Callable[[int], bytes]] = {
    "valid": lambda n: orjson.dumps(event(n)),
    "invalid": lambda n: orjson.dumps(event(n, source="browser")),
    "broken": lambda n: b'{"event_id": "unterminated',
    "blank": lambda n: b"   ",
    "empty": lambda n: b"",
    "not an object": lambda n: b"[1, 2]",
}


def body_of(kinds: list[str], final_newline: bool) -> bytes:
    lines = [KINDS_OF_LINE[kind](n) for n, kind in enumerate(kinds)]
    return b"\n".join(lines) + (b"\n" if final_newline else b"")


def one_process(body: bytes) -> tuple[list[EventRejection], list[int]]:
    counts = [0, 0]
    rejections = list(iter_jsonl_rejections(io.BytesIO(body), counts))
    return rejections, counts


def with_workers(path: Path, workers: int) -> tuple[list[EventRejection], list[int]]:
    counts = [0, 0]
    with path.open("rb") as handle:
        rejections = iter_jsonl_rejections_parallel(handle, workers, counts)
        return list(rejections), counts


@AS_SENT
@given(
    st.lists(st.sampled_from(sorted(KINDS_OF_LINE)), min_size=1, max_size=40),
    st.booleans(),
    st.integers(1, 300),
)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
def test_workers_answer_as_one_process(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kinds: list[str],
    final_newline: bool,
    piece_bytes: int,
) -> None:
    """Small pieces (1 to 300 bytes) put cuts everywhere: next to bad, blank and last lines."""
    monkeypatch.setattr(ingest_parallel, "PIECE_BYTES", piece_bytes)
    body = body_of(kinds, final_newline)
    path = tmp_path / "events.jsonl"
    path.write_bytes(body)
    expected = one_process(body)
    for workers in (2, 3):
        assert with_workers(path, workers) == expected


def test_pieces_cover_the_file_and_cut_after_newlines(tmp_path: Path) -> None:
    body = body_of(["valid", "blank", "invalid", "broken", "valid"] * 20, final_newline=False)
    path = tmp_path / "events.jsonl"
    path.write_bytes(body)
    bounds = piece_bounds(str(path), 100)
    assert len(bounds) > 5
    assert bounds[0][0] == 0
    assert bounds[-1][1] == len(body)
    for (_, end), (start, _) in pairwise(bounds):
        assert end == start
        assert body[end - 1 : end] == b"\n"


@AS_SENT
@pytest.mark.parametrize("workers", [2, 3])
def test_the_command_writes_the_same_bytes_for_any_number_of_workers(
    tmp_path: Path, workers: int
) -> None:
    """A file of several real pieces (about 5 MB), with a rejected or broken line on each side
    of every cut: ``toolcall-spec ingest --workers N`` prints what one worker prints."""
    line = orjson.dumps(event(0, input_values={"padding": "x" * 400}))
    count = 5_000_000 // (len(line) + 1)
    lines = [line] * count
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    cuts = [end for _, end in piece_bounds(str(path))[:-1]]
    assert len(cuts) >= 2
    offsets = [0]
    for raw in lines:
        offsets.append(offsets[-1] + len(raw) + 1)
    for cut in cuts:
        after = offsets.index(cut)  # the first line of the next piece
        for n, bad in ((after - 1, b'{"broken": '), (after, orjson.dumps(event(1, source="x")))):
            lines[n] = bad.ljust(len(line))  # same length: the cuts stay where they are
    lines[-1] = b"[]".ljust(len(line))
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert [end for _, end in piece_bounds(str(path))[:-1]] == cuts
    one = run_cli("ingest", path)
    many = run_cli("ingest", path, "--workers", str(workers))
    assert one.returncode == many.returncode == 1
    assert many.stdout == one.stdout
    answer = orjson.loads(one.stdout)
    assert answer["rejected"] == 2 * len(cuts) + 1
    assert [e["line"] for e in answer["errors"]][:2] == [
        cuts[0] // (len(line) + 1),
        1 + cuts[0] // (len(line) + 1),
    ]


@pytest.mark.parametrize("value", ["0", "-1", "two", "1000"])
def test_a_bad_worker_count_is_refused_with_a_message(tmp_path: Path, value: str) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(orjson.dumps(event(0)) + b"\n")
    run = run_cli("ingest", path, "--workers", value)
    assert run.returncode == 2
    assert "--workers" in run.stderr
    assert "number of processes" in run.stderr


def test_stdin_is_read_by_one_process_with_the_same_answer(tmp_path: Path) -> None:
    body = body_of(["valid", "invalid", "blank", "broken"], final_newline=True)
    path = tmp_path / "events.jsonl"
    path.write_bytes(body)
    from_stdin = run_cli("ingest", "-", "--jsonl", "--workers", "2", stdin=body)
    from_file = run_cli("ingest", path, "--workers", "2")
    assert from_stdin.stdout == from_file.stdout
    assert orjson.loads(from_stdin.stdout)["rejected"] == 2  # invalid and broken


def test_the_python_api_keeps_a_bounded_list_and_counts_all(tmp_path: Path) -> None:
    body = body_of(["invalid"] * 30 + ["valid"] * 5, final_newline=True)
    answer = ingest_jsonl(io.BytesIO(body), max_errors=10)
    assert (answer["accepted"], answer["rejected"], len(answer["errors"])) == (5, 30, 10)
    assert [e["index"] for e in answer["errors"]] == list(range(10))
    assert len(ingest_jsonl(io.BytesIO(body), max_errors=None)["errors"]) == 30
    path = tmp_path / "events.jsonl"
    path.write_bytes(body)
    with path.open("rb") as handle:
        parallel = ingest_jsonl_file(handle, workers=2, max_errors=10)
    assert parallel == answer
    assert MAX_KEPT_REJECTIONS == 10_000


def test_a_reader_that_stops_early_leaves_no_worker_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing the stream of rejections after the first one shuts the workers down: no process
    keeps checking pieces nobody will read."""
    monkeypatch.setattr(ingest_parallel, "PIECE_BYTES", 4096)
    path = tmp_path / "events.jsonl"
    path.write_bytes(body_of(["invalid", *["valid"] * 40] * 12, final_newline=True))
    assert len(piece_bounds(str(path))) > 4
    with path.open("rb") as handle:
        rejections = iter_jsonl_rejections_parallel(handle, 2, [0, 0])
        first = next(rejections)
        rejections.close()
    assert first["index"] == 0
    assert multiprocessing.active_children() == []
