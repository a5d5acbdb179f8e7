"""Cassettes mcp-cassette 0.4 and mcp-rec 0.1 recorded (tests/data/cassettes), imported with
``toolcall-spec promote --from``, failures kept, then served to a real client.

The files are what the peers wrote in ``nox -s record_peers`` (benchmarks/record_peers), from the
real ``mcp`` client through each peer's recorder to tests/support/mcp_stdio_server.py: mcp-cassette
needs Python 3.12 and its pytest plugin would load into every run here, so it is not installed
beside the tests; the recordings it made are. The probe: ``flaky`` failing then succeeding with
the same arguments, ``lookup``, ``quota`` answered with a JSON-RPC error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import run_cli
from support.repo import REPO

from toolcall_spec.mcp.cassettes import detect_format, import_cassette
from toolcall_spec.validation import validate

IMPORT = pytest.mark.requirement("toolcall-spec.requirement.mcp.cassettes-import")
DATA = REPO / "tests" / "data" / "cassettes"
RECORDED = [
    ("mcp-cassette", DATA / "mcp-cassette-0.4.0-stdio.json"),
    ("mcp-cassette", DATA / "mcp-cassette-0.4.0-http.json"),
    ("mcp-rec", DATA / "mcp-rec-0.1.1-stdio.jsonl"),
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("flaky", {"key": "a"}),
    ("flaky", {"key": "a"}),
    ("lookup", {"id": 1}),
    ("quota", {}),
]
FAILURES = [True, False, False, True]


def promoted(path: Path, fmt: str) -> dict[str, Any]:
    run = run_cli("promote", "--from", fmt, path, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "'quota' recorded as a failure: answered with a JSON-RPC error" in run.stderr
    suite: dict[str, Any] = json.loads(run.stdout)
    assert [p for p in validate(suite, "suite") if p.severity == "error"] == []
    return suite


@IMPORT
@pytest.mark.parametrize(("fmt", "path"), RECORDED, ids=[path.name for _, path in RECORDED])
@pytest.mark.parametrize("named", [True, False], ids=["--from FORMAT", "--from cassette"])
def test_a_recording_the_peer_made_imports_one_entry_per_call_with_its_failures(
    fmt: str, path: Path, named: bool
) -> None:
    suite = promoted(path, fmt if named else "cassette")
    (task,) = suite["tasks"]
    entries = task["fixtures"]["toolResponses"]
    assert [(entry["tool"], entry["args"]) for entry in entries] == CALLS
    assert [entry.get("isError", False) for entry in entries] == FAILURES
    assert entries[0]["response"]["content"][0]["text"] == "a: upstream unavailable"
    assert entries[1]["response"]["content"][0]["text"] == "a: done"
    assert "quota exceeded" in entries[3]["response"]["content"][0]["text"]
    assert [tool["name"] for tool in task["input"]["mcp"]["tools"]] == ["lookup", "flaky", "quota"]


@IMPORT
@pytest.mark.parametrize(("fmt", "path"), RECORDED, ids=[path.name for _, path in RECORDED])
def test_each_recording_is_recognized_as_its_peers_format(fmt: str, path: Path) -> None:
    text = path.read_text("utf-8")
    document = (
        [json.loads(line) for line in text.splitlines()]
        if path.suffix == ".jsonl"
        else json.loads(text)
    )
    assert detect_format(document) == fmt


@IMPORT
def test_the_imported_suite_replays_what_was_recorded_to_a_real_client() -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from support.mcp_servers import run_calls

    from toolcall_spec.mcp.fixture_server import FixtureReplay, build_server, select_task

    suite = promoted(DATA / "mcp-rec-0.1.1-stdio.jsonl", "mcp-rec")
    replay = FixtureReplay(suite, select_task(suite, None))
    seen = run_calls(build_server(replay), CALLS)
    assert [result.is_error for result in seen] == FAILURES  # the JSON-RPC error as a tool error
    assert [result.content[0].text for result in seen[:2]] == ["a: upstream unavailable", "a: done"]
    assert replay.summary()["fixtureMissCount"] == 0


# --- the pairing of both transcripts, over generated sessions ------------------------------------

RESULTS = st.one_of(st.just(True), st.just(False), st.none(), st.just("true"), st.just(1))
"""A call's isError as the server sent it: only the JSON boolean true is a failure."""


def _message(fmt: str, from_client: bool, payload: dict[str, Any]) -> dict[str, Any]:
    if fmt == "mcp-rec":
        return {
            "ts": 0.0,
            "dir": "client->server" if from_client else "server->client",
            "msg": payload,
        }
    sender, kind = ("client", "request") if from_client else ("server", "response")
    return {"seq": 0, "sender": sender, "kind": kind, "payload": payload}


@IMPORT
@given(
    fmt=st.sampled_from(["mcp-rec", "mcp-cassette"]),
    calls=st.lists(st.tuples(RESULTS, st.integers(0, 2)), min_size=1, max_size=8),
    order=st.randoms(use_true_random=False),
)
def test_each_call_pairs_with_the_response_of_its_id_in_any_order(
    fmt: str, calls: list[tuple[Any, int]], order: Any
) -> None:
    # Ids from a small pool: an id is used again once its request was answered; the answers
    # still open at the end come in the server's own order.
    messages: list[dict[str, Any]] = []
    open_answers: dict[int, dict[str, Any]] = {}
    for i, (flag, request_id) in enumerate(calls):
        if request_id in open_answers:
            messages.append(_message(fmt, False, open_answers.pop(request_id)))
        params = {"name": f"t{i}"}
        request = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        messages.append(_message(fmt, True, request))
        result: dict[str, Any] = {"content": [{"type": "text", "text": f"r{i}"}]}
        if flag is not None:
            result["isError"] = flag
        open_answers[request_id] = {"jsonrpc": "2.0", "id": request_id, "result": result}
    rest = list(open_answers.values())
    order.shuffle(rest)
    messages += [_message(fmt, False, answer) for answer in rest]
    document: Any = messages
    if fmt == "mcp-cassette":
        document = {"format_version": 3, "transport": "stdio", "messages": messages}
    found = import_cassette(document, suite_id="recorded.evals.x")
    assert found.suite is not None, found.problems
    entries = found.suite["tasks"][0]["fixtures"]["toolResponses"]
    assert [entry["tool"] for entry in entries] == [f"t{i}" for i in range(len(calls))]
    assert [entry.get("isError", False) for entry in entries] == [f is True for f, _ in calls]
    assert [entry["response"]["content"][0]["text"] for entry in entries] == [
        f"r{i}" for i in range(len(calls))
    ]
