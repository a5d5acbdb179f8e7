"""``toolcall-spec verify`` across a real change of a real server: a session with release v1 of
``support/versioned_server.py`` is recorded by the real ``toolcall-spec record`` (driven by the
real ``mcp`` client), then the recording is verified against v1 (nothing changed) and v2 (a
flip, a removed tool, a breaking input schema, changed content), over stdio and streamable HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import StdioServerParameters
from support.cli import run_cli
from support.recording import (
    child_env,
    client_sees,
    free_port,
    load_suite,
    record_argv,
    stop,
    wait_for_port,
)

CALLS_JUDGED = pytest.mark.requirement("toolcall-spec.requirement.verify.calls-judged")
CONTRACT = pytest.mark.requirement("toolcall-spec.requirement.verify.contract-judged")
FAIL_ON = pytest.mark.requirement("toolcall-spec.requirement.verify.fail-on")

SERVER = Path(__file__).parents[1] / "support" / "versioned_server.py"

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1, "b": 2}),
    ("greet", {"name": "Ada", "punctuation": "?"}),
    ("greet", {"name": "Bob"}),
    ("lookup", {"ref": "R1"}),
    ("legacy", {}),
]
V2_VERDICTS = [
    ("add", "same"),
    ("greet", "content changed"),  # "Hello, Ada?" -> "Hi, Ada?"
    ("greet", "isError flipped"),  # punctuation is required now
    ("lookup", "isError flipped"),  # a success turned into an error
    ("legacy", "isError flipped"),  # the tool is gone
]


def server(version: str, *transport: str) -> list[str]:
    return [sys.executable, str(SERVER), version, *transport]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v1 session recorded through the real proxy."""
    out = tmp_path_factory.mktemp("verify") / "v1.json"
    argv = record_argv(out, *server("v1"))
    seen = client_sees(StdioServerParameters(command=argv[0], args=argv[1:]), CALLS, "auto")
    assert seen[0] == ["add", "greet", "legacy", "lookup"]
    load_suite(out)  # valid, and written
    return out


def verify(suite: Path, *options: str, live: list[str] | None = None) -> tuple[int, Any, str]:
    """Run ``verify --json``: exit status, the JSON report (``None`` when there is none), stderr."""
    target = ["--", *(live or [])] if live is not None else []
    run = run_cli("verify", suite, "--json", *options, *target)
    report = json.loads(run.stdout) if run.stdout.strip() else None
    return run.returncode, report, run.stderr


def verdicts(report: Any) -> list[tuple[str, str]]:
    return [(call["tool"], call["verdict"]) for call in report["tasks"][0]["calls"]]


@CALLS_JUDGED
@CONTRACT
@FAIL_ON
def test_against_the_release_it_was_recorded_from_every_call_is_the_same(recorded: Path) -> None:
    """Slow-ish (10 s and more under load): v1 is started once per --fail-on, behind the CLI."""
    for fail_on in ("breaking", "changed"):
        code, report, err = verify(recorded, "--fail-on", fail_on, live=server("v1"))
        assert code == 0, err
        assert report["verdict"] == "same"
        assert verdicts(report) == [(tool, "same") for tool, _ in CALLS]
        assert report["counts"] == {"same": 5, "content changed": 0, "isError flipped": 0}
        contract = report["tasks"][0]["contract"]
        assert contract == {
            "path": "tasks[0].input.mcp.tools",
            "verdict": "same",
            "removed": [],
            "added": [],
            "schemas": [],
        }


def assert_v2_judged(report: Any) -> None:
    assert report["verdict"] == "breaking"
    assert verdicts(report) == V2_VERDICTS
    calls = report["tasks"][0]["calls"]
    assert calls[3] == {
        "path": "tasks[0].fixtures.toolResponses[3]",
        "tool": "lookup",
        "verdict": "isError flipped",
        "recordedIsError": False,
        "liveIsError": True,
    }
    contract = report["tasks"][0]["contract"]
    assert contract["verdict"] == "breaking"
    assert (contract["removed"], contract["added"]) == (["legacy"], ["stats"])
    [greet] = contract["schemas"]
    assert (greet["tool"], greet["verdict"]) == ("greet", "breaking")
    assert greet["path"].startswith("tasks[0].input.mcp.tools[")
    assert greet["path"].endswith("].inputSchema")
    kinds = {(change["kind"], change["path"]) for change in greet["changes"]}
    assert ("member-made-required", "punctuation") in kinds


@CALLS_JUDGED
@CONTRACT
@FAIL_ON
def test_against_the_next_release_the_flips_the_removed_tool_and_the_schema_break_show(
    recorded: Path,
) -> None:
    """Slow-ish (10 s and more under load): v2 is started twice, behind the CLI."""
    code, report, err = verify(recorded, live=server("v2"))
    assert code == 1, err
    assert_v2_judged(report)
    assert verify(recorded, "--fail-on", "changed", live=server("v2"))[0] == 1


@CALLS_JUDGED
@CONTRACT
def test_over_streamable_http_the_verdicts_are_the_same(recorded: Path) -> None:
    """Slow-ish (10 s and more under load): an HTTP server process, then the CLI's client."""
    with http_server("v2") as url:
        run = run_cli("verify", recorded, "--json", "--upstream", url)
    assert run.returncode == 1, run.stderr
    assert_v2_judged(json.loads(run.stdout))


@FAIL_ON
def test_changed_content_fails_only_under_fail_on_changed(recorded: Path, tmp_path: Path) -> None:
    """The recording cut to its first two calls and without its tool list: against v2 the only
    difference left is changed content."""
    suite = json.loads(recorded.read_text())
    task = suite["tasks"][0]
    task["fixtures"]["toolResponses"] = task["fixtures"]["toolResponses"][:2]
    task["input"] = {"calls": task["input"]["calls"][:2]}
    task["expected"]["match"]["value"] = task["expected"]["match"]["value"][:2]
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(suite))
    code, report, err = verify(cut, live=server("v2"))
    assert code == 0, err
    assert report["verdict"] == "changed"
    assert verdicts(report) == [("add", "same"), ("greet", "content changed")]
    assert report["tasks"][0]["contract"] is None
    assert verify(cut, "--fail-on", "changed", live=server("v2"))[0] == 1


def test_the_text_report_names_each_call_by_its_path(recorded: Path) -> None:
    """Slow-ish under load: the CLI starts the v2 server over stdio."""
    run = run_cli("verify", recorded, "--", *server("v2"))
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert (
        "  tasks[0].fixtures.toolResponses[3] lookup: isError flipped (recorded a success, "
        "now an error)" in lines
    )
    assert "  tasks[0].input.mcp.tools: breaking: tool 'legacy' removed" in lines
    assert lines[-1] == "verdict: breaking (1 same, 1 content changed, 3 isError flipped)"


def test_a_malformed_recorded_tool_list_is_refused_with_its_path(
    recorded: Path, tmp_path: Path
) -> None:
    suite = json.loads(recorded.read_text())
    del suite["tasks"][0]["input"]["mcp"]["tools"][1]["inputSchema"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(suite))
    code, report, err = verify(bad, live=server("v1"))
    assert (code, report) == (2, None)
    assert "tasks[0].input.mcp.tools[1].inputSchema: warning: a recorded tool's inputSchema" in err
    assert run_cli("validate", bad).returncode == 0  # only a warning for validate: input is opaque


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((), "either -- SERVER CMD... or --upstream URL"),
        (("--upstream", "http://127.0.0.1:1/mcp", "--", "x"), "either -- SERVER CMD"),
        (("--task", "nope", "--", "true"), "no task 'nope'"),
        (("--", "/nonexistent/server"), "the live server failed"),
    ],
)
def test_usage_and_connection_errors_exit_2_with_a_message(
    recorded: Path, args: tuple[str, ...], words: str
) -> None:
    """Slow-ish under load: the last case waits for the SDK's client to give up on a command
    that does not exist."""
    run = run_cli("verify", recorded, *args)
    assert run.returncode == 2
    assert words in run.stderr
    assert run.stdout == ""


@contextmanager
def http_server(version: str) -> Iterator[str]:
    """Release ``version`` serving streamable HTTP on a free port: its URL."""
    port = free_port()
    process = subprocess.Popen(
        server(version, "http", str(port)), env=child_env(), stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)
