"""``toolcall-spec conformance``: the table on the embedded default, the three formats, exit codes
(0 no executed-fail, 1 one, 2 usage), strict mode by flag and by OPENWOP_REQUIRE_BEHAVIOR, and the
same legs over HTTP with ``--host``."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Any

import orjson
import pytest
from support.cli import run_cli
from support.mutants import ServesErrorAsSuccess

from toolcall_spec.cli import main
from toolcall_spec.conformance import in_process
from toolcall_spec.conformance.in_process import InProcessAdapter, adapter_pair
from toolcall_spec.conformance.registry import LEGS
from toolcall_spec.host.reference import ReferenceHost

LEG_COUNT = len(LEGS)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli("conformance", *args, env=env)


def test_the_quick_start_command_prints_a_passing_table() -> None:
    done = cli()
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2].split() == ["REQUIREMENT", "OUTCOME", "REASON"]
    rows = [line for line in lines if line.startswith(("openwop.", "toolcall-spec.requirement."))]
    assert len(rows) == LEG_COUNT
    outcomes = {row.split()[0]: row.split()[1] for row in rows}
    wire_only = "toolcall-spec.requirement.wire.run-id-projection"  # no HTTP wire in process
    assert outcomes.pop(wire_only) == "inapplicable"
    assert set(outcomes.values()) == {"executed-pass"}
    assert lines[-1] == "PASSED: no leg failed or blocked"


def test_json_and_junit_formats_parse() -> None:
    document = orjson.loads(cli("--format", "json").stdout)
    assert len(document["legs"]) == LEG_COUNT
    assert document["passed"] is True
    assert len(document["hosts"]) == 2
    root = ET.fromstring(cli("--format", "junit").stdout.encode())
    assert len(root.findall("testsuite/testcase")) == LEG_COUNT
    assert root.findall(".//failure") == []


def test_strict_by_environment_variable() -> None:
    import os

    env = {**os.environ, "OPENWOP_REQUIRE_BEHAVIOR": "true"}
    done = cli("--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["strict"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--token", "t"), "--token needs --host"),
        (("--host", "http://127.0.0.1:1"), "cannot read the discovery document"),
        (("--format", "yaml"), "invalid choice"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def _use_adapters(monkeypatch: pytest.MonkeyPatch, adapters: list[Any]) -> None:
    monkeypatch.setattr(in_process, "embedded_adapters", lambda: adapters)


def test_an_executed_fail_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use_adapters(monkeypatch, adapter_pair(ServesErrorAsSuccess()))
    assert main(["conformance"]) == 1
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("openwop.requirement.0245.f")]
    assert row.split()[1] == "executed-fail"
    assert out.splitlines()[-1].startswith("FAILED: ")


class BrokenEvents(InProcessAdapter):
    def events(self, run_id: str) -> list[dict[str, Any]]:
        raise ConnectionError("the event stream dropped")


def test_a_blocked_leg_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _use_adapters(monkeypatch, [BrokenEvents(ReferenceHost())])
    assert main(["conformance"]) == 1
    assert "blocked" in capsys.readouterr().out.splitlines()[-1]


class NoSeams(InProcessAdapter):
    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        return None

    def live_invocations(self) -> dict[str, int] | None:
        return None


@pytest.mark.parametrize(
    ("flag", "env", "expected"),
    [((), None, 0), (("--strict",), None, 1), ((), "true", 1), ((), "TRUE", 1), ((), "no", 0)],
)
def test_strict_turns_a_missing_seam_into_exit_1(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flag: tuple[str, ...],
    env: str | None,
    expected: int,
) -> None:
    _use_adapters(monkeypatch, [NoSeams(ReferenceHost())])
    if env is None:
        monkeypatch.delenv("OPENWOP_REQUIRE_BEHAVIOR", raising=False)
    else:
        monkeypatch.setenv("OPENWOP_REQUIRE_BEHAVIOR", env)
    assert main(["conformance", *flag]) == expected
    capsys.readouterr()


def test_host_without_the_http_adapter_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "toolcall_spec.http.adapter", None)
    assert main(["conformance", "--host", "http://127.0.0.1:9"]) == 2
    assert "install toolcall-spec[http]" in capsys.readouterr().err


def test_the_same_legs_pass_over_http(capsys: pytest.CaptureFixture[str]) -> None:
    from support.http_serving import serving

    with serving() as server:
        code = main(["conformance", "--host", server.url, "--format", "json"])
    document = orjson.loads(capsys.readouterr().out)
    assert code == 0
    outcomes = {leg["id"]: leg["outcome"] for leg in document["legs"]}
    assert outcomes["openwop.requirement.0245.fixture-error-replayed"] == "executed-pass"
    assert outcomes["toolcall-spec.requirement.replay.agent-receives-tool-error"] == "executed-pass"
    assert set(outcomes.values()) <= {"executed-pass", "inapplicable"}
