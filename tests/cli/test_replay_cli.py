"""``toolcall-spec replay`` and ``toolcall-spec promote``, run as a user runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.replay import example, oracle_errors
from support.repo import EXAMPLES

RFC_SUITE = str(EXAMPLES / "suites/rfc0245-fail-then-succeed.json")
NO_ERRORS_HOST = str(EXAMPLES / "capabilities/host-without-fixture-errors.json")


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin=stdin, timeout=60)


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr


def test_replay_prints_events_and_summary() -> None:
    result = cli("replay", RFC_SUITE)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert set(output) == {"events", "summary"}
    assert [oracle_errors("run-event", e) for e in output["events"]] == [[]] * 9
    assert output["summary"]["fixtureMissCount"] == 0
    returned = [e["payload"] for e in output["events"] if e["type"] == "agent.tool-returned"]
    assert ["error" in r for r in returned] == [True, False]


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
def test_replay_refusal_prints_the_envelope_and_exits_1() -> None:
    result = cli("replay", RFC_SUITE, "--capabilities", NO_ERRORS_HOST)
    assert result.returncode == 1
    envelope = json.loads(result.stdout)
    assert oracle_errors("error-envelope", envelope) == []
    assert envelope == example("events/refusal-envelope.json")


def test_an_invalid_suite_is_a_refusal() -> None:
    result = cli("replay", str(EXAMPLES / "suites/rfc0245-string-iserror.json"))
    assert result.returncode == 1
    assert json.loads(result.stdout)["details"]["field"] == (
        "tasks[0].fixtures.toolResponses[0].isError"
    )


def test_mode_option_and_default(tmp_path: Path) -> None:
    suite = example("suites/rfc0245-fail-then-succeed.json")
    suite["modes"] = ["live-shadow", "golden"]
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    shadow = json.loads(cli("replay", str(path)).stdout)
    assert shadow["events"][1]["payload"]["modes"] == ["live-shadow"]
    golden = json.loads(cli("replay", str(path), "--mode", "golden").stdout)
    assert golden["events"][1]["payload"]["modes"] == ["golden"]
    refused = cli("replay", str(path), "--mode", "rubric")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["details"]["field"] == "mode"


@pytest.mark.parametrize(
    ("args", "contents", "message"),
    [
        (["replay", "{missing}"], None, "cannot read"),
        (["replay", "{file}"], "{not json", "invalid JSON"),
        (["replay", RFC_SUITE, "--capabilities", "{file}"], "[1,", "invalid JSON"),
        (["replay", RFC_SUITE, "--capabilities", "{file}"], '{"protocolVersions": []}', "invalid"),
        (["promote", "{missing}"], None, "cannot read"),
    ],
)
def test_unreadable_input_exits_2_with_one_line(
    tmp_path: Path, args: list[str], contents: str | None, message: str
) -> None:
    path = tmp_path / "input.json"
    if contents is not None:
        path.write_text(contents)
    names = {"missing": str(tmp_path / "nope.json"), "file": str(path)}
    result = cli(*(a.format(**names) for a in args))
    assert result.returncode == 2
    no_traceback(result)
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr


def replayed_log(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    output = json.loads(cli("replay", RFC_SUITE).stdout)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in output["events"]))
    return path, output["events"]


@pytest.mark.requirement("toolcall-spec.requirement.promote.reproduces-run")
def test_promote_then_replay(tmp_path: Path) -> None:
    log, events = replayed_log(tmp_path)
    promoted = cli("promote", str(log))
    assert promoted.returncode == 0, promoted.stderr
    suite = json.loads(promoted.stdout)
    assert oracle_errors("suite", suite) == []
    suite_path = tmp_path / "promoted.json"
    suite_path.write_text(promoted.stdout)
    again = json.loads(cli("replay", str(suite_path)).stdout)
    kinds = [
        "error" if "error" in e["payload"] else e["payload"]["outcome"]
        for e in again["events"]
        if e["type"] == "agent.tool-returned"
    ]
    original = [
        "error" if "error" in e["payload"] else e["payload"]["outcome"]
        for e in events
        if e["type"] == "agent.tool-returned"
    ]
    assert kinds == original
    assert again["summary"]["passed"] is True


def test_promote_reads_replay_output_json_arrays_and_stdin(tmp_path: Path) -> None:
    output = cli("replay", RFC_SUITE).stdout
    whole = tmp_path / "replay-output.json"
    whole.write_text(output)
    array = tmp_path / "events.json"
    array.write_text(json.dumps(json.loads(output)["events"]))
    suites = [json.loads(cli("promote", str(p)).stdout) for p in (whole, array)]
    from_stdin = cli("promote", "-", stdin="\n".join(
        json.dumps(e) for e in json.loads(output)["events"]))  # fmt: skip
    assert from_stdin.returncode == 0, from_stdin.stderr
    suites.append(json.loads(from_stdin.stdout))
    assert suites[0] == suites[1] == suites[2]


def test_promote_a_bad_log_names_lines_and_exits_1(tmp_path: Path) -> None:
    log, _ = replayed_log(tmp_path)
    lines = log.read_text().splitlines()
    del lines[3]  # the first agent.tool-returned (after run.started, eval.started, the call)
    lines.insert(1, "{oops")
    log.write_text("\n".join(lines) + "\n")
    result = cli("promote", str(log))
    assert result.returncode == 1
    assert result.stdout == ""
    no_traceback(result)
    problems = result.stderr.strip().splitlines()
    assert problems[0] == f"{log}: line 2: invalid JSON: " + problems[0].split("invalid JSON: ")[1]
    assert (
        f"{log}: line 4: payload.callId: call 'lookup-recovers-1' has no agent.tool-returned"
        in problems
    )
