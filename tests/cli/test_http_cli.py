"""``toolcall-spec serve`` as a user runs it: a subprocess, a real port, real requests."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest
from support.cli import run_cli
from support.http_serving import FIXTURE_ERROR, SCRIPTED, serve_subprocess

from toolcall_spec.cli import main
from toolcall_spec.host.fixtures import load_fixture


def serve_exits(*options: str) -> subprocess.CompletedProcess[str]:
    return run_cli("serve", *options, timeout=60)


def test_serve_answers_and_stops_on_sigterm() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_spec.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().split()[-1]
    assert url.startswith("http://127.0.0.1:")
    document = httpx.get(f"{url}/.well-known/openwop").json()
    assert document["fixtures"] == [FIXTURE_ERROR]
    assert document["agents"]["evalSuite"]["fixtureErrors"] is True
    process.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal it caught: the exit status says
    # "terminated by SIGTERM", as for any well-behaved server.
    assert process.wait(20) in (0, -signal.SIGTERM)
    assert process.stderr is not None
    assert "Traceback" not in process.stderr.read()


def test_the_token_comes_from_the_environment_too(tmp_path: Path) -> None:
    with serve_subprocess(env={"TOOLCALL_SPEC_TOKEN": "from-env"}) as url:
        assert httpx.get(f"{url}/.well-known/openwop").status_code == 200
        assert httpx.get(f"{url}/runs/local%2Fx").status_code == 401
        authorized = {"Authorization": "Bearer from-env"}
        assert httpx.get(f"{url}/runs/local%2Fx", headers=authorized).status_code == 404


def test_an_allowed_suite_directory_is_served_and_confined(tmp_path: Path) -> None:
    allowed = tmp_path / "suites"
    allowed.mkdir()
    (allowed / "fixture.json").write_bytes(orjson.dumps(load_fixture(FIXTURE_ERROR)))
    (tmp_path / "private.json").write_bytes(orjson.dumps(load_fixture(FIXTURE_ERROR)))
    with serve_subprocess("--allow-suite-dir", str(allowed)) as url:
        body = {"mode": "eval", "agentId": SCRIPTED}
        inside = httpx.post(
            f"{url}/runs", json={**body, "evalSuiteRef": f"file://{allowed}/fixture.json"}
        )
        assert inside.status_code == 201, inside.text
        outside = httpx.post(
            f"{url}/runs", json={**body, "evalSuiteRef": f"file://{allowed}/../private.json"}
        )
        assert outside.status_code == 403
        assert outside.json()["details"]["field"] == "evalSuiteRef"


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
def test_without_fixture_errors_the_fixture_is_refused() -> None:
    with serve_subprocess("--without-fixture-errors") as url:
        answer = httpx.post(
            f"{url}/runs",
            json={"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED},
        )
        assert answer.status_code == 400
        assert answer.json() == {
            "error": "validation_error",
            "message": answer.json()["message"],
            "details": {"field": "tasks[0].fixtures.toolResponses[0].isError"},
        }
        assert "fixtureErrors" in answer.json()["message"]


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve_exits("--port", str(port))
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--token", " "], "token must not be empty"),
        (["--allow-suite-dir", "/no/such/dir"], "/no/such/dir"),
        (["--max-runs", "0"], "max_runs_kept"),
    ],
)
def test_bad_options_exit_2_without_a_traceback(
    options: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "0", *options]) == 2
    error = capsys.readouterr().err
    assert words in error
    assert "Traceback" not in error


def test_importing_the_package_and_cli_loads_no_http_stack() -> None:
    probe = (
        "import sys, toolcall_spec, toolcall_spec.cli; toolcall_spec.cli.build_parser(); "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
