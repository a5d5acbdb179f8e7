"""Replay at the recorded pace (issue 30, part 5): ``record --timings`` keeps how long each call
took (``input.mcp.durationsMs``), and ``serve-fixtures --pace recorded`` answers each served entry
as late. A real server (``support/record_servers.py``: ``slow(seconds)``) is recorded and replayed
with the real commands and the real ``mcp`` client."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
import orjson
from hypothesis import given
from hypothesis import strategies as st
from mcp.client.stdio import StdioServerParameters
from support.cli import run_cli
from support.recording import CLI, python_server, record_argv
from support.replay import one_task_suite

from toolcall_spec.mcp.record import Recorder
from toolcall_spec.validation import validate

PACE = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-pace")

SLOW_SECONDS = 0.8
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("slow", {"seconds": SLOW_SECONDS}),
    ("add", {"a": 1, "b": 2}),
]


def timed_session(argv: list[str]) -> list[float]:
    """Each call's time at the client, in seconds, through the server ``argv`` starts."""
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    times: list[float] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with mcp.Client(params, mode="legacy") as client:
                for tool, args in CALLS:
                    start = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    times.append(time.perf_counter() - start)
                    assert not result.is_error

    anyio.run(main)
    return times


@PACE
def test_a_recording_with_timings_replays_at_its_pace(tmp_path: Path) -> None:
    suite = tmp_path / "paced.json"
    timed_session(record_argv(suite, *python_server("mcp"), options=("--timings",)))
    task = orjson.loads(suite.read_bytes())["tasks"][0]
    durations = task["input"]["mcp"]["durationsMs"]
    assert len(durations) == len(task["fixtures"]["toolResponses"]) == 2
    assert durations[0] >= SLOW_SECONDS * 1000 > durations[1] >= 0
    assert list(validate(orjson.loads(suite.read_bytes()), "suite")) == []

    unpaced = timed_session([*CLI, "serve-fixtures", str(suite)])
    paced = timed_session([*CLI, "serve-fixtures", str(suite), "--pace", "recorded"])
    assert paced[0] >= durations[0] / 1000
    # The fast call stays fast, and the pace is the recording's, not a fixed delay.
    assert paced[0] - unpaced[0] >= SLOW_SECONDS / 2
    assert paced[1] < paced[0]


@PACE
def test_pace_without_recorded_durations_is_refused_with_what_to_do(tmp_path: Path) -> None:
    suite = tmp_path / "plain.json"
    recorder = Recorder(suite, suite_id="recorded.evals.plain")
    recorder.from_client(
        "s",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 1}},
        },
    )
    recorder.from_server("s", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    recorder.close()
    assert "durationsMs" not in suite.read_text()  # without --timings: the same suite each time
    run = run_cli("serve-fixtures", suite, "--pace", "recorded", stdin="")
    assert run.returncode == 2
    assert "record --timings" in run.stderr


def _suite_with(durations: Any, entries: int = 2) -> dict[str, Any]:
    suite = one_task_suite([{"tool": "t", "response": {"content": []}}] * entries)
    suite["tasks"][0]["input"] = {"mcp": {"durationsMs": durations}}
    return suite


durations_value = st.one_of(st.floats(min_value=0, max_value=1e6), st.integers(0, 10**6), st.none())


@PACE
@given(st.lists(durations_value, min_size=2, max_size=2))
def test_durations_one_per_entry_validate(durations: list[Any]) -> None:
    assert [p for p in validate(_suite_with(durations), "suite") if "durationsMs" in p.path] == []


@PACE
@given(
    st.one_of(
        st.lists(durations_value, max_size=5).filter(lambda d: len(d) != 2),
        st.lists(
            st.one_of(st.floats(max_value=-0.001), st.text(), st.booleans()), min_size=2, max_size=2
        ),
        st.dictionaries(st.text(), st.integers(-1000, 1000)),
    )
)
def test_durations_that_are_not_one_ms_per_entry_are_warned_about_with_a_path(
    durations: Any,
) -> None:
    problems = [p for p in validate(_suite_with(durations), "suite") if "durationsMs" in p.path]
    assert problems, json.dumps(durations, default=str)
    assert all(p.severity == "warning" for p in problems)
