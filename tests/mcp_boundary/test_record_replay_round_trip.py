"""Record, serve, record again: the same suite, and the client sees the same results in the same
order, ``isError`` included.

The property runs in process: the recorder of ``toolcall-spec record`` sees every JSON-RPC message
of a real ``mcp`` client's session (``support.recording_transport``), first against a scripted
live server, then against ``serve-fixtures``' server built from the first recording. The last
test runs the same chain with the real commands as processes over stdio.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.stdio import StdioServerParameters
from mcp.server import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from support.cli import CLI
from support.recording_transport import RecordingTransport
from support.repo import REPO

from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task
from toolcall_spec.mcp.record import Recorder
from toolcall_spec.validation import validate

ROUND_TRIP = pytest.mark.requirement("toolcall-spec.requirement.mcp.record-replay-round-trip")

TOOLS = ("lookup", "search")

Call = tuple[str, dict[str, Any]]
Outcome = tuple[bool, str]


def scripted_live_server(outcomes: list[Outcome]) -> Server[Any]:
    """A live server that answers its n-th call with ``outcomes[n]`` (a failure or a text)."""
    script = iter(outcomes)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(
            tools=[Tool(name=name, input_schema={"type": "object"}) for name in TOOLS]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        is_error, text = next(script)
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)

    return Server("live", on_list_tools=list_tools, on_call_tool=call_tool)


def seen(result: CallToolResult) -> tuple[bool, str]:
    """What the client received: the flag and the whole content, as JSON."""
    content = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content
    ]
    return result.is_error, orjson.dumps(content).decode()


def record_session(
    server: Server[Any], calls: list[Call], out: Path
) -> tuple[dict[str, Any], list[Any]]:
    """The suite the recorder writes for one session of ``calls``, and what the client saw."""
    recorder = Recorder(out, suite_id="recorded.evals.round-trip")
    received: list[Any] = []

    async def main() -> None:
        async with mcp.Client(RecordingTransport(server, recorder), mode="legacy") as client:
            for tool, args in calls:
                received.append(seen(await client.call_tool(tool, args)))

    anyio.run(main)
    suite = recorder.suite()
    assert suite is not None
    on_disk = orjson.loads(out.read_bytes())
    assert on_disk == suite  # the file is the suite, complete at the session's end
    return suite, received


def replay_server(suite: dict[str, Any]) -> tuple[FixtureReplay, Server[Any]]:
    replay = FixtureReplay(suite, select_task(suite, None))
    return replay, build_server(replay)


arguments = st.fixed_dictionaries(
    {"k": st.integers(0, 2)},
    optional={"page": st.integers(1, 2), "q": st.sampled_from(["a", "b"])},
)
outcomes = st.tuples(st.booleans(), st.text(st.sampled_from("ab é"), max_size=6))
sessions = st.lists(st.tuples(st.sampled_from(TOOLS), arguments, outcomes), min_size=1, max_size=8)


@ROUND_TRIP
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(session=sessions)
def test_record_serve_record_gives_the_same_suite(
    tmp_path: Path, session: list[tuple[str, dict[str, Any], Outcome]]
) -> None:
    calls = [(tool, args) for tool, args, _ in session]
    first, live_seen = record_session(
        scripted_live_server([outcome for *_, outcome in session]), calls, tmp_path / "first.json"
    )
    assert [p for p in validate(first, "suite") if p.severity == "error"] == []
    entries = first["tasks"][0]["fixtures"]["toolResponses"]
    assert [entry.get("isError", False) for entry in entries] == [o[0] for *_, o in session]

    replay, server = replay_server(first)
    second, replay_seen = record_session(server, calls, tmp_path / "second.json")

    assert second == first
    assert replay_seen == live_seen
    assert replay.summary()["fixtureMissCount"] == 0
    assert replay.server.unconsumed() == []


@ROUND_TRIP
def test_a_different_call_order_still_gets_each_calls_own_recorded_answer(tmp_path: Path) -> None:
    """Entries are matched by arguments, not by position: a replay in another order gives each
    call the answer recorded for it, and the repeats of one call in their recorded order."""
    calls: list[Call] = [("lookup", {"k": 1}), ("lookup", {"k": 2}), ("lookup", {"k": 1})]
    script = [(True, "k1 down"), (False, "k2"), (False, "k1 back")]
    first, _ = record_session(scripted_live_server(script), calls, tmp_path / "first.json")
    _, server = replay_server(first)
    _, replay_seen = record_session(
        server, [calls[1], calls[0], calls[2]], tmp_path / "second.json"
    )
    assert [flag for flag, _ in replay_seen] == [False, True, False]
    assert ["k2" in text for _, text in replay_seen] == [True, False, False]
    assert "k1 back" in replay_seen[2][1]


LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
TIMEOUT = 60


def cli(*args: str | Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "toolcall_spec.cli", *map(str, args)]
    )


def session_through(params: StdioServerParameters | str, calls: list[Call]) -> list[Any]:
    received: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with mcp.Client(params, mode="legacy") as client:
                for tool, args in calls:
                    received.append(seen(await client.call_tool(tool, args)))

    anyio.run(main)
    return received


@ROUND_TRIP
def test_the_real_commands_record_serve_and_record_again_over_stdio(tmp_path: Path) -> None:
    calls: list[Call] = [
        ("flaky", {"key": "a"}),
        ("lookup", {"id": 1}),
        ("flaky", {"key": "a"}),
        ("lookup", {"id": 2}),
        ("lookup", {"id": 1}),
    ]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    live = session_through(cli("record", "--out", first, "--", sys.executable, LIVE_SERVER), calls)
    assert [flag for flag, _ in live] == [True, False, False, False, False]
    replayed = session_through(
        cli(
            "record",
            "--out",
            second,
            "--suite-id",
            "recorded.evals.first",
            "--",
            sys.executable,
            "-m",
            "toolcall_spec.cli",
            "serve-fixtures",
            first,
        ),
        calls,
    )
    assert replayed == live
    recorded = orjson.loads(first.read_bytes())
    assert orjson.loads(second.read_bytes()) == recorded
    # serve-fixtures listed the recorded tools (names, schemas), so the second recording has them.
    tools = recorded["tasks"][0]["input"]["mcp"]["tools"]
    assert [tool["name"] for tool in tools] == ["lookup", "flaky", "quota"]


@contextmanager
def background(*args: str | Path) -> Iterator[subprocess.Popen[str]]:
    """A command in the background, stopped with SIGTERM (then killed) when the block ends."""
    child = subprocess.Popen(
        [*map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield child
    finally:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def announced_url(stream: IO[str] | None) -> str:
    """The URL a server names in its first line of output (``... serving on URL``)."""
    assert stream is not None
    line = stream.readline()
    assert "serving on " in line, line
    return line.rsplit("serving on ", 1)[1].strip()


def recorded_over_http(upstream: str, out: Path, calls: list[Call]) -> list[Any]:
    """A session through ``toolcall-spec record --upstream``; the suite is complete on SIGTERM."""
    with background(*CLI, "record", "--out", out, "--upstream", upstream, "--port", "0") as proxy:
        return session_through(announced_url(proxy.stderr), calls)  # then SIGTERM: written


@ROUND_TRIP
def test_the_real_commands_round_trip_over_streamable_http(tmp_path: Path) -> None:
    calls: list[Call] = [("flaky", {"key": "h"}), ("flaky", {"key": "h"}), ("lookup", {"id": 5})]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    with background(sys.executable, LIVE_SERVER, "--http") as server:
        live = recorded_over_http(announced_url(server.stdout), first, calls)
    assert [flag for flag, _ in live] == [True, False, False]
    with background(*CLI, "serve-fixtures", first, "--http") as fixtures:
        replayed = recorded_over_http(announced_url(fixtures.stdout), second, calls)
    assert replayed == live
    recorded, again = orjson.loads(first.read_bytes()), orjson.loads(second.read_bytes())
    assert again["tasks"] == recorded["tasks"]
