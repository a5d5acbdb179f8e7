"""The pytest plugin (``toolcall_spec.pytest_plugin``) in real pytest runs (``pytester``, each a
pytest process of its own) whose tests talk to a real MCP server (tests/support/mcp_stdio_server.py)
through the ``mcp`` client or a client process: record once, replay with the server gone, a miss
and a strict leftover reported, mode none without a cassette, new_episodes, all."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from hypothesis import given
from hypothesis import strategies as st
from support.floors import read_pyproject
from support.repo import REPO

from toolcall_spec.pytest_plugin import new_entries
from toolcall_spec.replay.fixtures import FixtureServer, Miss

pytest_plugins = ["pytester"]

MISS_FAILS = pytest.mark.requirement("toolcall-spec.requirement.mcp.pytest-replay-fails-on-miss")
NEW_EPISODES = pytest.mark.requirement("toolcall-spec.requirement.mcp.pytest-new-episodes")

LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
GONE_SERVER = "/nonexistent/mcp_server.py"
"""A server command that cannot start: a replay that passes with it never reached a server."""
INSTALLED = any(
    entry.value == "toolcall_spec.pytest_plugin" for entry in entry_points(group="pytest11")
)
"""An install that registered the entry point loads the plugin in every run; a checkout on the
path (the package installed before the entry point existed) names it with -p."""
PLUGIN = () if INSTALLED else ("-p", "toolcall_spec.pytest_plugin")
"""Every other plugin installed stays loaded (mcp-recorder's and agent-vcr's among them): the
options must not clash with theirs."""
CASSETTE = Path("cassettes", "test_agent", "test_lookup.json")

AGENT = """
import anyio, mcp, pytest, sys

SERVER = [sys.executable, {server!r}{extra}]

async def calls(target, ids):
    async with mcp.Client(target) as client:
        return [
            (r.is_error, r.content[0].text)
            for r in [await client.call_tool("lookup", {{"id": i}}) for i in ids]
        ]

@pytest.mark.mcp_server({marker})
def test_lookup(mcp_server):
    target = mcp_server.url or mcp_server.stdio_parameters()
    assert anyio.run(calls, target, {ids!r}) == [(False, f"live record {{i}}") for i in {ids!r}]
"""


def agent(
    pytester: pytest.Pytester,
    ids: list[int],
    *,
    server: str | Path = LIVE_SERVER,
    marker: str = "command=SERVER",
    extra: str = "",
) -> None:
    """tests/test_agent.py: one test that looks up ``ids`` through the fixture's server."""
    source = AGENT.format(server=str(server), extra=extra, marker=marker, ids=ids)
    pytester.makepyfile(test_agent=source)


def run(pytester: pytest.Pytester, *options: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*PLUGIN, *options)


def cassette_entries(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    suite = json.loads((pytester.path / CASSETTE).read_text(encoding="utf-8"))
    assert len(suite["tasks"]) == 1
    return list(suite["tasks"][0]["fixtures"]["toolResponses"])


def live_calls(path: Path) -> list[Any]:
    if not path.exists():
        return []
    return [json.loads(line)["args"]["id"] for line in path.read_text().splitlines()]


@pytest.fixture
def calls_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the live server notes each call it answers (the pytest runs inherit it)."""
    target = tmp_path / "live-calls.jsonl"
    monkeypatch.setenv("LIVE_CALLS_FILE", str(target))
    return target


def test_the_package_registers_the_plugin_with_pytest() -> None:
    project = read_pyproject(REPO / "pyproject.toml")["project"]
    assert project["entry-points"]["pytest11"] == {"toolcall_spec": "toolcall_spec.pytest_plugin"}
    assert "pytest>=8" in project["optional-dependencies"]["pytest"]


def test_once_records_then_replays_with_the_server_gone(
    pytester: pytest.Pytester, calls_file: Path
) -> None:
    """Three pytest runs, each starting MCP server processes (the recording proxy and the live
    server, then serve-fixtures twice): 15 to 20 s on two busy cores."""
    agent(pytester, [1, 2])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    assert [e["args"] for e in cassette_entries(pytester)] == [{"id": 1}, {"id": 2}]
    assert live_calls(calls_file) == [1, 2]

    agent(pytester, [1, 2], server=GONE_SERVER)
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    run(pytester).assert_outcomes(passed=1)  # mode none: replay only
    assert live_calls(calls_file) == [1, 2]  # no call reached a server


@MISS_FAILS
def test_a_miss_fails_the_test_naming_the_tool_and_its_arguments(
    pytester: pytest.Pytester,
) -> None:
    """Two pytest runs, each starting MCP server processes: about 15 s."""
    agent(pytester, [1])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    # The agent now also asks for id 7, which the cassette never saw: the test body's own
    # assertion is what fails first, and the plugin's report is attached to the failure.
    agent(pytester, [1, 7], server=GONE_SERVER)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*MCP replay of *test_lookup.json:",
            "*1 calls missed the cassette (no unconsumed entry matched):",
            '*lookup {"id":7}',
        ]
    )


@MISS_FAILS
def test_a_miss_the_test_tolerates_still_fails_it(pytester: pytest.Pytester) -> None:
    """Two pytest runs, each starting MCP server processes: about 15 s."""
    agent(pytester, [1])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    pytester.makepyfile(
        test_agent=f"""
import anyio, mcp, pytest

async def call(target):
    async with mcp.Client(target) as client:
        await client.call_tool("lookup", {{"id": 1}})
        return await client.call_tool("lookup", {{"id": 1}})  # consumed: a miss

@pytest.mark.mcp_server(command=[{GONE_SERVER!r}])
def test_lookup(mcp_server):
    assert anyio.run(call, mcp_server.stdio_parameters()).is_error
"""
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*1 calls missed the cassette*", '*lookup {"id":1}'])


@MISS_FAILS
def test_strict_fails_a_test_that_left_recorded_calls_unmade(pytester: pytest.Pytester) -> None:
    """Four pytest runs, each starting MCP server processes: about 20 s."""
    agent(pytester, [1, 2, 3])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    agent(pytester, [2], server=GONE_SERVER)
    run(pytester).assert_outcomes(passed=1)  # not strict: leftovers are fine
    result = run(pytester, "--toolcall-strict")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*strict: 2 recorded calls were never made:",
            '*entry 0: lookup {"id":1}',
            '*entry 2: lookup {"id":3}',
        ]
    )
    agent(pytester, [2], server=GONE_SERVER, marker="strict=False")
    run(pytester, "--toolcall-strict").assert_outcomes(passed=1)  # the marker wins


@MISS_FAILS
def test_mode_none_without_a_cassette_fails_clearly(pytester: pytest.Pytester) -> None:
    agent(pytester, [1])
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*no cassette *test_lookup.json (record mode none replays only)"
            "*--toolcall-record-mode=once*"
        ]
    )
    assert not (pytester.path / CASSETTE).exists()


@NEW_EPISODES
def test_new_episodes_adds_the_new_call_and_keeps_the_cassette(
    pytester: pytest.Pytester, calls_file: Path
) -> None:
    """Three pytest runs; new_episodes starts three processes (proxy, serve-fixtures, live
    server): about 20 s."""
    agent(pytester, [1])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    before = cassette_entries(pytester)
    calls_file.unlink()

    agent(pytester, [1, 5, 1])
    run(pytester, "--toolcall-record-mode=new_episodes").assert_outcomes(passed=1)
    assert live_calls(calls_file) == [5, 1]  # only the misses reached the server
    after = cassette_entries(pytester)
    assert after[:1] == before
    assert [e["args"] for e in after] == [{"id": 1}, {"id": 5}, {"id": 1}]
    task = json.loads((pytester.path / CASSETTE).read_text(encoding="utf-8"))["tasks"][0]
    assert [call["args"]["id"] for call in task["input"]["calls"]] == [1, 5, 1]

    agent(pytester, [1, 5, 1], server=GONE_SERVER)
    run(pytester, "--toolcall-strict").assert_outcomes(passed=1)


def test_all_records_again(pytester: pytest.Pytester) -> None:
    """Two pytest runs, each recording through the proxy and the live server: about 10 s."""
    agent(pytester, [1, 2])
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    agent(pytester, [3], marker="command=SERVER, record_mode='all'")
    run(pytester).assert_outcomes(passed=1)  # the marker overrides the run's mode none
    assert [e["args"] for e in cassette_entries(pytester)] == [{"id": 3}]
    assert cassette_entries(pytester)[0]["response"]["content"][0]["text"] == "live record 3"


CLIENT_PROCESS = """
import anyio, json, mcp, os, sys
from mcp import StdioServerParameters

async def main(argv):
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with mcp.Client(server) as client:
        result = await client.call_tool("lookup", {"id": 4})
        print(result.content[0].text)

anyio.run(main, json.loads(sys.argv[1]))
"""


def test_a_client_process_the_test_launches_gets_the_argv(
    pytester: pytest.Pytester, calls_file: Path
) -> None:
    """Two pytest runs, each launching a client process that starts the servers: about 20 s."""
    client = pytester.path / "client.py"
    client.write_text(CLIENT_PROCESS, encoding="utf-8")
    source = f"""
import json, subprocess, sys, pytest

@pytest.mark.mcp_server(command=[sys.executable, {{server!r}}])
def test_lookup(mcp_server):
    done = subprocess.run(
        [sys.executable, {str(client)!r}, json.dumps(mcp_server.command)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.stdout == "live record 4\\n", done.stderr
"""
    pytester.makepyfile(test_agent=source.format(server=str(LIVE_SERVER)))
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    pytester.makepyfile(test_agent=source.format(server=GONE_SERVER))
    run(pytester).assert_outcomes(passed=1)
    assert live_calls(calls_file) == [4]


@pytest.fixture
def live_http_url() -> Iterator[str]:
    """The live server over streamable HTTP, on a free loopback port."""
    server = subprocess.Popen(
        [sys.executable, str(LIVE_SERVER), "--http"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        yield line.split("serving on ", 1)[1].strip()
    finally:
        server.terminate()
        server.wait(30)


def test_over_http_a_url_is_recorded_and_replayed(
    pytester: pytest.Pytester, live_http_url: str
) -> None:
    """Three pytest runs, each starting HTTP server processes and waiting for their URLs: 20 s."""
    agent(pytester, [6], marker=f"url={live_http_url!r}")
    run(pytester, "--toolcall-record-mode=once").assert_outcomes(passed=1)
    assert [e["args"] for e in cassette_entries(pytester)] == [{"id": 6}]
    agent(pytester, [6, 8], marker=f"url={live_http_url!r}")
    run(pytester, "--toolcall-record-mode=new_episodes").assert_outcomes(passed=1)
    assert [e["args"] for e in cassette_entries(pytester)] == [{"id": 6}, {"id": 8}]
    # Replay serves the cassette itself; nothing listens at this URL.
    agent(pytester, [6, 8], marker="url='http://127.0.0.1:9/mcp'")
    run(pytester, "--toolcall-strict").assert_outcomes(passed=1)


def test_record_without_a_live_server_is_refused(pytester: pytest.Pytester) -> None:
    agent(pytester, [1], marker="")
    result = run(pytester, "--toolcall-record-mode=all")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*record mode all needs the live server to record*"])


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ("command='python server.py'", "command= must be a non-empty list of strings (an argv)*"),
        ("command=[]", "command= must be a non-empty list*"),
        ("command=SERVER, url='http://127.0.0.1:1/mcp'", "give the live server once*"),
        ("url='127.0.0.1:1'", "url= must be an http(s) URL*"),
        ("record_mode='sometimes'", "record_mode 'sometimes' is not one of none, once, *"),
        ("cassete='x.json'", "*@pytest.mark.mcp_server: unknown arguments cassete"),
    ],
)
def test_a_marker_the_fixture_cannot_use_is_named(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    agent(pytester, [1], marker=marker)
    result = run(pytester, "--toolcall-record-mode=all")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*test_agent.py::test_lookup: {message}"])


CALL = st.tuples(st.sampled_from(["lookup", "flaky"]), st.integers(0, 3))


def entry(call: tuple[str, int], text: str) -> dict[str, Any]:
    tool, key = call
    return {
        "tool": tool,
        "args": {"id": key},
        "response": {"content": [{"type": "text", "text": text}]},
    }


@NEW_EPISODES
@given(cassette=st.lists(CALL, max_size=6), session=st.lists(CALL, max_size=8))
def test_new_episodes_appends_exactly_what_the_cassette_missed(
    cassette: list[tuple[str, int]], session: list[tuple[str, int]]
) -> None:
    task = {"fixtures": {"toolResponses": [entry(c, "old") for c in cassette]}}
    recorded = [entry(c, "new") for c in session]
    added = new_entries(task, recorded)
    # As many as the replay of the session against the cassette misses ...
    server = FixtureServer.for_task(task)
    misses = [c for c in session if isinstance(server.serve(c[0], {"id": c[1]}), Miss)]
    assert [(e["tool"], e["args"]["id"]) for e in added] == misses
    # ... and with them appended, the same session replays without a miss.
    merged = FixtureServer.for_task(
        {"fixtures": {"toolResponses": task["fixtures"]["toolResponses"] + added}}
    )
    assert not any(isinstance(merged.serve(c[0], {"id": c[1]}), Miss) for c in session)
