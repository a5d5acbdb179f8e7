"""Cassettes of other MCP recorders, each recorded in the test by the peer itself against a small
real server (tests/support/mcp_stdio_server.py), imported with ``toolcall-spec promote --from``,
failures kept, then served by ``serve-fixtures`` to a client that gets what the peer recorded.

How each peer records here (its limits on this machine, see docs/record-replay.md):

- mcp-recorder 0.5: its own scenario runner (``record-scenarios``: its proxy, its client, its
  cassette writer). Its proxy app passes ``on_startup``/``on_shutdown`` to Starlette, which
  Starlette 1.x no longer accepts, so it dies at start beside the Starlette this package installs;
  the test gives the peer's module a Starlette that maps those two onto a lifespan, nothing else
  (support/mcp_recorder_hooks.py).
- agent-vcr 0.1: its own recorder (``MCPRecorder``) through support/agent_vcr_recording.py, whose
  docstring says why the documented ``agent-vcr record`` command cannot serve a client over stdio.
- mcp-vcr 0.2: its own ``mcp-vcr record`` command, the stdio proxy a client starts in place of
  the server. It declares Python 3.12 or newer but runs on 3.11: nox's test session installs it
  with ``--ignore-requires-python`` (pip refuses it otherwise), so it is not in the test extra;
  its test skips where it is missing, and fails under CI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")
pytest.importorskip("mcp_recorder", reason="mcp-recorder is not installed")

import anyio
import mcp
import mcp_recorder.proxy as mcp_recorder_proxy
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent
from mcp_recorder.scenarios import load_scenarios_file, run_scenarios
from support.cli import run_cli
from support.mcp_recorder_hooks import StarletteWithStartupHooks
from support.repo import REPO

from toolcall_spec.cli.promote_cmd import CASSETTE_FORMATS
from toolcall_spec.mcp.cassettes import FORMATS, detect_format, import_cassette
from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task
from toolcall_spec.validation import validate

IMPORT = pytest.mark.requirement("toolcall-spec.requirement.mcp.cassettes-import")

LIVE_SERVER = REPO / "tests" / "support" / "mcp_stdio_server.py"
AGENT_VCR_RECORDING = REPO / "tests" / "support" / "agent_vcr_recording.py"
TIMEOUT = 60

Call = tuple[str, dict[str, Any]]
CALLS: list[Call] = [
    ("flaky", {"key": "a"}),  # a tool result with isError: true
    ("flaky", {"key": "a"}),  # the same call, now a success
    ("lookup", {"id": 1}),
    ("lookup", {"id": "x"}),  # refused by the tool's input model: isError: true
    ("quota", {}),  # a JSON-RPC error, no result at all
    ("lookup", {"id": 2}),
]
RECORDED_FAILURES = [True, False, False, True, True, False]


def record_with_mcp_recorder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(mcp_recorder_proxy, "Starlette", StarletteWithStartupHooks)
    actions = [{"call_tool": {"name": tool, "arguments": args}} for tool, args in CALLS]
    scenarios = {
        "schema_version": "1.0",
        "target": {"command": sys.executable, "args": [str(LIVE_SERVER)]},
        "scenarios": {"session": {"actions": ["list_tools", *actions]}},
    }
    path = tmp_path / "scenarios.yaml"
    path.write_text(json.dumps(scenarios), encoding="utf-8")  # JSON is YAML
    run_scenarios(load_scenarios_file(path), tmp_path / "cassettes")
    return tmp_path / "cassettes" / "session.json"


def client_session(target: Any, calls: list[Call], mode: str = "auto") -> list[Any]:
    """What a real client receives for each call: (isError, text), or the JSON-RPC error."""
    seen: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with mcp.Client(target, mode=mode) as client:
                for tool, args in calls:
                    try:
                        result = await client.call_tool(tool, args)
                    except MCPError as exc:
                        seen.append(("json-rpc error", exc.error.code))
                        continue
                    texts = [b.text for b in result.content if isinstance(b, TextContent)]
                    seen.append((result.is_error, " ".join(texts)))

    anyio.run(main)
    return seen


def imported(cassette: Path, fmt: str) -> dict[str, Any]:
    """The suite ``toolcall-spec promote --from FMT`` prints; warnings name the failures."""
    run = run_cli("promote", "--from", fmt, cassette, timeout=TIMEOUT)
    assert run.returncode == 0, run.stderr
    assert "'quota' recorded as a failure: answered with a JSON-RPC error" in run.stderr
    suite: dict[str, Any] = json.loads(run.stdout)
    assert [p for p in validate(suite, "suite") if p.severity == "error"] == []
    return suite


def check_entries(
    suite: dict[str, Any], calls: list[Call] = CALLS, failures: list[bool] = RECORDED_FAILURES
) -> list[dict[str, Any]]:
    (task,) = suite["tasks"]
    entries: list[dict[str, Any]] = task["fixtures"]["toolResponses"]
    assert [(entry["tool"], entry["args"]) for entry in entries] == calls
    assert [entry.get("isError", False) for entry in entries] == failures
    assert entries[0]["response"]["content"][0]["text"] == "a: upstream unavailable"
    assert "quota exceeded" in entries[4]["response"]["content"][0]["text"]
    assert [tool["name"] for tool in task["input"]["mcp"]["tools"]] == [
        "lookup",
        "flaky",
        "quota",
    ]
    return entries


def replayed(suite: dict[str, Any], calls: list[Call] = CALLS) -> list[Any]:
    replay = FixtureReplay(suite, select_task(suite, None))
    seen = client_session(build_server(replay), calls)
    assert replay.summary()["fixtureMissCount"] == 0
    return seen


@IMPORT
def test_a_cassette_mcp_recorder_recorded_imports_with_its_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = record_with_mcp_recorder(tmp_path, monkeypatch)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert detect_format(document) == "mcp-recorder"
    suite = imported(cassette, "mcp-recorder")
    check_entries(suite)
    seen = replayed(suite)
    assert [flag for flag, _ in seen] == RECORDED_FAILURES  # the JSON-RPC error as a tool error
    assert seen[0] == (True, "a: upstream unavailable")
    assert seen[1] == (False, "a: done")


@IMPORT
@pytest.mark.skipif(
    importlib.util.find_spec("agent_vcr") is None,  # not imported here: it records in its process
    reason="agent-vcr is not installed",
)
def test_a_cassette_agent_vcr_recorded_imports_with_its_failures(tmp_path: Path) -> None:
    cassette = tmp_path / "session.vcr"
    recorder = StdioServerParameters(
        command=sys.executable,
        args=[str(AGENT_VCR_RECORDING), str(cassette), sys.executable, str(LIVE_SERVER)],
    )
    live = client_session(recorder, CALLS, mode="legacy")
    assert live[4] == ("json-rpc error", -32001)
    for _ in range(100):  # the recorder saves once the client has gone
        if cassette.exists():
            break
        anyio.run(anyio.sleep, 0.1)
    document = json.loads(cassette.read_text(encoding="utf-8"))
    assert detect_format(document) == "agent-vcr"
    suite = imported(cassette, "cassette")
    check_entries(suite)
    seen = replayed(suite)
    assert [seen[i] for i in (0, 1, 2, 3, 5)] == [live[i] for i in (0, 1, 2, 3, 5)]
    assert seen[4][0] is True  # a recorded JSON-RPC error is replayed as a tool error


MCP_VCR_CALLS: list[Call] = [*CALLS, ("nope", {})]  # and a tool the server does not have
MCP_VCR_FAILURES = [*RECORDED_FAILURES, True]


def mcp_vcr_command() -> str:
    """mcp-vcr's own command; the test skips without it, except under CI (nox installs it)."""
    if importlib.util.find_spec("mcp_vcr") is None:
        if os.environ.get("CI"):
            pytest.fail("mcp-vcr is needed: nox -s test installs it (--ignore-requires-python)")
        pytest.skip("mcp-vcr is not installed (pip install --ignore-requires-python mcp-vcr)")
    return str(Path(sysconfig.get_path("scripts")) / "mcp-vcr")


def mcp_vcr_transcript(path: Path) -> Any:
    """The transcript as ``promote`` reads it: the NDJSON form's lines, or the YAML form turned
    into JSON by PyYAML (mcp-vcr's own dependency), in a subprocess, as docs/record-replay.md
    shows; ``None`` until mcp-vcr has written the last response and closed the file."""
    if path.suffix == ".ndjson":
        try:
            values: Any = [
                json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            ]
        except json.JSONDecodeError:
            return None  # a line being written
    else:
        converted = subprocess.run(
            [sys.executable, "-c", YAML_TO_JSON, str(path)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        if converted.returncode != 0:
            return None  # being rewritten: mcp-vcr adds the client's name when it closes
        values = json.loads(converted.stdout)
        if "client_hint" not in values["meta"]:
            return None
    messages = values["messages"] if isinstance(values, dict) else values[1:]  # [0]: meta
    sent = [m["payload"] for m in messages if m["dir"] == "c2s" and "id" in m["payload"]]
    answered = [m for m in messages if m["dir"] == "s2c" and "id" in m["payload"]]
    calls = [request for request in sent if request["method"] == "tools/call"]
    complete = len(calls) == len(MCP_VCR_CALLS) and len(answered) == len(sent)
    return values if complete else None


YAML_TO_JSON = "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)"


@IMPORT
@pytest.mark.parametrize(("mode", "suffix"), [("auto", ".ndjson"), ("legacy", ".yaml")])
def test_a_transcript_mcp_vcr_recorded_imports_with_its_failures(
    tmp_path: Path, mode: str, suffix: str
) -> None:
    transcript = tmp_path / f"session{suffix}"
    recorder = StdioServerParameters(
        command=mcp_vcr_command(),
        args=[
            "record",
            *("--format", suffix[1:], "--output", str(transcript)),
            *("--", sys.executable, str(LIVE_SERVER)),
        ],
        cwd=tmp_path,  # mcp-vcr reads .mcp-vcr.yaml from the working directory
    )
    live = client_session(recorder, MCP_VCR_CALLS, mode=mode)
    assert live[4] == ("json-rpc error", -32001)
    document = None
    for _ in range(100):  # mcp-vcr writes each message as it passes, and closes once we have gone
        document = mcp_vcr_transcript(transcript)
        if document is not None:
            break
        anyio.run(anyio.sleep, 0.1)
    assert document is not None, transcript.read_text(encoding="utf-8")
    assert detect_format(document) == "mcp-vcr"
    as_json = tmp_path / "session.json"
    as_json.write_text(json.dumps(document), encoding="utf-8")
    suite = imported(transcript if suffix == ".ndjson" else as_json, "mcp-vcr")
    entries = check_entries(suite, MCP_VCR_CALLS, MCP_VCR_FAILURES)
    assert entries[-1]["response"]["content"][0]["text"] == "Unknown tool: nope"
    seen = replayed(suite, MCP_VCR_CALLS)
    assert [seen[i] for i in (0, 1, 2, 3, 5, 6)] == [live[i] for i in (0, 1, 2, 3, 5, 6)]
    assert seen[4][0] is True  # a recorded JSON-RPC error is replayed as a tool error


def vcr_message(direction: str, request_id: int, **payload: Any) -> dict[str, Any]:
    return {"t": 0, "dir": direction, "payload": {"jsonrpc": "2.0", "id": request_id, **payload}}


def vcr_call(request_id: int, tool: str) -> dict[str, Any]:
    params = {"name": tool, "arguments": {"k": tool}}
    return vcr_message("c2s", request_id, method="tools/call", params=params)


def vcr_result(request_id: int, text: str, **flags: Any) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": text}], **flags}
    return vcr_message("s2c", request_id, result=result)


@IMPORT
def test_an_mcp_vcr_transcript_pairs_each_request_with_the_response_of_its_id() -> None:
    transcript = {
        "meta": {"version": 1},
        "messages": [
            vcr_call(1, "a"),
            vcr_call(2, "b"),
            vcr_message("s2c", 1, method="sampling/createMessage"),  # the server's own request
            vcr_message("c2s", 1, result={}),  # the client's answer to it
            vcr_result(2, "b done", isError="true"),  # a string: not a failure
            vcr_result(1, "a failed", isError=True),
            vcr_call(1, "c"),  # an id used again once answered
            vcr_message("s2c", 1, error={"code": -32001, "message": "quota"}),
            vcr_call(3, "d"),  # never answered
        ],
    }
    result = import_cassette(transcript, suite_id="recorded.evals.x")
    assert result.suite is not None, result.problems
    entries = result.suite["tasks"][0]["fixtures"]["toolResponses"]
    assert [(e["tool"], e.get("isError", False)) for e in entries] == [
        ("a", True),
        ("b", False),
        ("c", True),
        ("d", True),
    ]
    assert entries[0]["response"]["content"][0]["text"] == "a failed"
    assert entries[1]["response"]["content"][0]["text"] == "b done"
    assert [str(w).split(":")[0] for w in result.warnings] == [
        "messages[6].payload",
        "messages[8].payload",
    ]


@IMPORT
def test_a_yaml_transcript_given_as_is_is_refused_with_what_to_do(tmp_path: Path) -> None:
    transcript = tmp_path / "session.yaml"
    transcript.write_text("meta:\n  version: 1\nmessages: []\n", encoding="utf-8")
    run = run_cli("promote", "--from", "mcp-vcr", transcript, timeout=TIMEOUT)
    assert run.returncode == 2
    assert "converted to JSON, or record --format ndjson" in run.stderr


@IMPORT
@pytest.mark.parametrize(
    ("document", "fmt", "message"),
    [
        ({"events": []}, None, "not a cassette of a known format"),
        ({"version": "1.0", "interactions": []}, "agent-vcr", "not a cassette of agent-vcr"),
        (
            {
                "version": "1.0",
                "interactions": [
                    {"type": "jsonrpc_request", "request": {"method": "tools/call", "params": {}}}
                ],
            },
            None,
            "interactions[0].request.params.name",
        ),
        ([{"_type": "meta"}, vcr_message("c2s", 1, method="tools/call")], None, "[1].payload"),
        ({"meta": {}, "messages": {}}, "mcp-vcr", "not a cassette of mcp-vcr"),
    ],
)
def test_what_is_not_a_readable_cassette_is_a_problem_with_a_path(
    document: Any, fmt: str | None, message: str
) -> None:
    result = import_cassette(document, fmt=fmt, suite_id="recorded.evals.x")
    assert result.suite is None
    assert message in str(result.problems[0])


@IMPORT
def test_a_call_without_a_response_is_a_failure_named_in_a_warning() -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t"}}
    document = {"version": "1.0", "interactions": [{"type": "jsonrpc_request", "request": request}]}
    result = import_cassette(document, suite_id="recorded.evals.x")
    assert result.suite is not None
    (entry,) = result.suite["tasks"][0]["fixtures"]["toolResponses"]
    assert entry["isError"] is True
    assert "no response" in str(result.warnings[0])


def test_promote_offers_every_format_read() -> None:
    assert set(CASSETTE_FORMATS) == set(FORMATS)


HANDSHAKE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
HANDSHAKE_ANSWER = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}}
ZERO_CALL_CASSETTES: list[tuple[str, Any]] = [
    ("mcp-recorder", {"version": "1.0", "interactions": []}),
    (
        "mcp-recorder",
        {
            "version": "1.0",
            "interactions": [
                {"type": "jsonrpc_request", "request": HANDSHAKE, "response": HANDSHAKE_ANSWER}
            ],
        },
    ),
    ("agent-vcr", {"format_version": "1.0", "session": {"interactions": []}}),
    ("mcp-vcr", [{"_type": "meta"}, vcr_message("c2s", 0, method="initialize")]),
    ("mcp-vcr", {"meta": {}, "messages": []}),
]


@IMPORT
@pytest.mark.parametrize(("fmt", "document"), ZERO_CALL_CASSETTES)
@pytest.mark.parametrize("named", [True, False], ids=["--from FORMAT", "--from cassette"])
def test_a_cassette_without_a_call_is_refused_with_the_reason(
    tmp_path: Path, fmt: str, document: Any, named: bool
) -> None:
    path = tmp_path / "empty.json"
    # mcp-vcr's NDJSON transcript: one message a line
    lines = document if isinstance(document, list) else [document]
    text = "\n".join(map(json.dumps, lines))
    path.write_text(text, "utf-8")
    run = run_cli("promote", "--from", fmt if named else "cassette", path)
    assert run.returncode == 1
    assert run.stdout == ""
    assert "holds no tools/call" in run.stderr


@pytest.mark.requirement("toolcall-spec.requirement.mcp.record-secrets-kept-out")
@pytest.mark.parametrize("keep_secrets", [False, True])
def test_an_imported_cassette_keeps_secrets_out_unless_asked(
    tmp_path: Path, keep_secrets: bool
) -> None:
    """``promote --from CASSETTE`` redacts secrets as ``record`` does; ``--keep-secrets`` not."""
    params = {
        "name": "sign_in",
        "arguments": {"user": "ada", "apiKey": "sk-live-0123456789abcdefgh"},
    }
    transcript = {
        "meta": {"version": 1},
        "messages": [
            vcr_message("c2s", 1, method="tools/call", params=params),
            vcr_result(1, "use Authorization: Bearer eyJtok.eyJbody.sig"),
        ],
    }
    cassette = tmp_path / "session.json"
    cassette.write_text(json.dumps(transcript))
    flags = ["--keep-secrets"] if keep_secrets else []
    run = run_cli("promote", "--from", "mcp-vcr", *flags, cassette)
    assert run.returncode == 0, run.stderr
    secrets = ("sk-live-0123456789abcdefgh", "eyJtok.eyJbody.sig")
    assert all((secret in run.stdout) is keep_secrets for secret in secrets)
    assert ('"user":"ada"' in run.stdout.replace(" ", "")) is True
