"""The recorder behind ``toolcall-spec record``, fed JSON-RPC messages directly: whatever the
order in which answers arrive, the suite holds one entry per call in the order the client sent
them, each flagged by the one rule, and a call nobody answered is a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_spec.analytics.ingest import MAX_BATCH_EVENTS
from toolcall_spec.analytics.sinks import IngestPostSink
from toolcall_spec.mcp.record import Recorder
from toolcall_spec.replay.journal import read_journal
from toolcall_spec.rules import is_tool_error
from toolcall_spec.validation import validate

ENTRIES = pytest.mark.requirement("toolcall-spec.requirement.record.one-entry-per-call")
FAILURES = pytest.mark.requirement("toolcall-spec.requirement.record.failures-kept")
ON_DISK = pytest.mark.requirement("toolcall-spec.requirement.record.written-as-answered")

IS_ERROR = st.sampled_from([True, False, "true", 1, None, "absent"])
"""The values a server may put in isError: only the JSON boolean true is an error."""
OUTCOME = st.one_of(
    st.tuples(st.just("result"), IS_ERROR),
    st.tuples(st.just("jsonrpc-error"), st.just(None)),
    st.tuples(st.just("never"), st.just(None)),
)
CALL = st.tuples(
    st.sampled_from(["lookup", "billing:charge", "add"]),
    st.dictionaries(st.sampled_from(["id", "n"]), st.integers(0, 3), max_size=2),
    OUTCOME,
)


def result(is_error: Any, n: int) -> dict[str, Any]:
    body: dict[str, Any] = {"content": [{"type": "text", "text": f"answer {n}"}]}
    if is_error != "absent":
        body["isError"] = is_error
    return body


def answer(request_id: int, outcome: tuple[str, Any]) -> dict[str, Any] | None:
    kind, is_error = outcome
    if kind == "result":
        return {"jsonrpc": "2.0", "id": request_id, "result": result(is_error, request_id)}
    if kind == "jsonrpc-error":
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32001, "message": "no"}}
    return None


@ENTRIES
@FAILURES
@ON_DISK
@settings(max_examples=60, deadline=None)
@given(calls=st.lists(CALL, min_size=1, max_size=8), answer_order=st.randoms(use_true_random=False))
def test_entries_follow_the_calls_whatever_order_the_answers_come_in(
    tmp_path_factory: pytest.TempPathFactory, calls: list[Any], answer_order: Any
) -> None:
    out = tmp_path_factory.mktemp("rec") / "suite.json"
    warnings: list[str] = []
    recorder = Recorder(out, suite_id="recorded.evals.property", warn=warnings.append)
    requests = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}}
        for i, (t, a, _) in enumerate(calls, start=1)
    ]
    recorder.from_client("s", requests)  # a batch: all calls open at once
    answers = [answer(i, outcome) for i, (_, _, outcome) in enumerate(calls, start=1)]
    shuffled = [a for a in answers if a is not None]
    answer_order.shuffle(shuffled)
    answered: set[int] = set()
    for message in shuffled:
        assert recorder.from_server("s", message) == []
        answered.add(message["id"])
        # After every answer, the journal on disk rebuilds a valid suite holding every call
        # answered so far, in the order the client sent them.
        on_disk = read_journal(recorder.journal.read_bytes()).suite
        assert not [p for p in validate(on_disk, "suite") if p.severity == "error"]
        sent = [(t, a) for i, (t, a, _) in enumerate(calls, start=1) if i in answered]
        kept = on_disk["tasks"][0]["fixtures"]["toolResponses"]
        assert [(e["tool"], e["args"]) for e in kept] == sent
    recorder.close()
    assert not recorder.journal.exists()  # the suite is written: its journal is gone
    suite = orjson.loads(out.read_bytes())
    recorded = suite["tasks"][0]["fixtures"]["toolResponses"]
    assert [(e["tool"], e["args"]) for e in recorded] == [(t, a) for t, a, _ in calls]
    expected_flags = [
        outcome[0] != "result" or is_tool_error(result(outcome[1], 0)) for _, _, outcome in calls
    ]
    assert [e.get("isError", False) for e in recorded] == expected_flags
    assert len(warnings) == sum(outcome[0] != "result" for _, _, outcome in calls)


def test_a_response_to_an_unknown_id_is_reported_and_records_nothing(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path / "s.json", suite_id="recorded.evals.x")
    recorder.from_client("s", {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {}})
    unknown = recorder.from_server("s", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    assert unknown == [("int", 1)]
    # "a" and 1 are different ids: the string id is still open.
    assert recorder.pending_requests("s") == ["a"]


@ON_DISK
def test_the_suite_file_gets_ordinary_permissions_and_keeps_chosen_ones(tmp_path: Path) -> None:
    import os

    out = tmp_path / "s.json"
    recorder = Recorder(out, suite_id="recorded.evals.x")
    recorder.open_session("s")
    umask = os.umask(0o022)
    os.umask(umask)
    assert recorder.journal.stat().st_mode & 0o777 == 0o666 & ~umask
    recorder.close()
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not the temporary file's 0600
    out.chmod(0o640)
    again = Recorder(out, suite_id="recorded.evals.x")
    again.open_session("s")
    again.close()
    assert out.stat().st_mode & 0o777 == 0o640


def test_the_posting_sink_batches_no_more_than_the_endpoint_takes() -> None:
    """``IngestPostSink.MAX_BATCH`` is a copy (the sink does not import the validators)."""
    assert IngestPostSink.MAX_BATCH == MAX_BATCH_EVENTS


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
MEMBER = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
METHOD = st.sampled_from(["tools/call", "tools/list", "initialize", "notifications/cancelled"])
MESSAGE = st.dictionaries(
    MEMBER,
    st.one_of(JSON, METHOD, st.integers(0, 3)),
    max_size=5,
) | st.lists(st.dictionaries(MEMBER, st.one_of(JSON, METHOD, st.integers(0, 3))), max_size=3)
"""Messages of any shape a peer may send: ids of every JSON type, params that are not objects,
batches, answers to nothing."""


@settings(max_examples=80, deadline=None)
@given(traffic=st.lists(st.tuples(st.booleans(), MESSAGE), max_size=12))
def test_no_message_of_any_shape_is_a_failure_of_the_recorder(
    tmp_path_factory: pytest.TempPathFactory, traffic: list[tuple[bool, Any]]
) -> None:
    """The recorder never raises into the proxy, and no shape of message makes it fail on its
    own (a failure it counts as unexpected makes ``record`` exit 3)."""
    out = tmp_path_factory.mktemp("rec") / "suite.json"
    warnings: list[str] = []
    recorder = Recorder(out, suite_id="recorded.evals.shapes", warn=warnings.append)
    recorder.open_session("s")
    for from_client, message in traffic:
        if from_client:
            recorder.from_client("s", message)
        else:
            recorder.from_server("s", message)
    recorder.fail_pending("s", "the end")
    recorder.close()
    assert recorder.unexpected == 0, warnings
    assert recorder.failures == 0, warnings
    assert recorder.suite_written
