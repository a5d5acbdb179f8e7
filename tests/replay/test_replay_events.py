"""The event log a replay records: envelope, order, tool-hook members, reproducibility."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from support.replay import FixedClock, counter_ids, example, oracle_errors, tool_pairs

from toolcall_spec.clock import elapsed_ms, format_timestamp
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.replay.events import args_hash
from toolcall_spec.typed import RunEvent

RFC_SUITE = "suites/rfc0245-fail-then-succeed.json"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def two_task_suite() -> dict[str, Any]:
    suite: dict[str, Any] = example(RFC_SUITE)
    second = json.loads(json.dumps(suite["tasks"][0]))
    second["taskId"] = "second"
    second["fixtures"]["onMiss"] = "live"
    second["input"]["calls"].append({"tool": "crm:find", "args": {"q": "x"}})
    suite["tasks"].append(second)
    return suite


def run_events(host: ReferenceHost, suite: dict[str, Any]) -> list[RunEvent]:
    return host.events(host.create_run(suite))


@pytest.mark.requirement("toolcall-spec.requirement.events.schema-valid")
def test_every_event_validates_with_the_oracle() -> None:
    for host in (ReferenceHost(), ReferenceHost(_without_tool_hooks())):
        events = run_events(host, two_task_suite())
        assert [oracle_errors("run-event", e) for e in events] == [[]] * len(events)


@pytest.mark.requirement("toolcall-spec.requirement.events.log-order")
def test_log_order_and_envelope() -> None:
    host = ReferenceHost(tenant="acme")
    events = run_events(host, two_task_suite())
    types = [e["type"] for e in events]
    called, returned = "agent.tool-called", "agent.tool-returned"
    assert types == [
        "run.started", "eval.started",
        called, returned, called, returned, "eval.scored",
        called, returned, called, returned, called, returned, "eval.scored",
        "toolcall-spec.eval.task-failed",
        "eval.completed", "run.completed",
    ]  # fmt: skip
    assert [e["sequence"] for e in events] == list(range(len(events)))
    assert len({e["eventId"] for e in events}) == len(events)
    run_id = events[0]["runId"]
    assert re.fullmatch(r"acme/[^/]+", run_id)
    assert all(e["runId"] == run_id and e["schemaVersion"] == 1 for e in events)
    assert all(TIMESTAMP.match(e["timestamp"]) for e in events)
    pairs = list(tool_pairs(events))  # asserts each call is followed by its return
    assert len({c["callId"] for c, _ in pairs}) == len(pairs) == 5
    scored = [e["payload"]["taskId"] for e in events if e["type"] == "eval.scored"]
    assert scored == ["lookup-recovers", "second"]
    started = events[1]["payload"]
    assert (started["taskCount"], started["modes"]) == (2, ["golden"])


def test_tool_hook_members_follow_the_capability() -> None:
    hooked = run_events(ReferenceHost(), example(RFC_SUITE))
    for called, returned in tool_pairs(hooked):
        assert called["transport"] == "native"
        assert re.fullmatch(r"[0-9a-f]{64}", called["argsHash"])
        assert returned["status"] in ("ok", "error")
        assert isinstance(returned["durationMs"], int)
    plain = run_events(ReferenceHost(_without_tool_hooks()), example(RFC_SUITE))
    for called, returned in tool_pairs(plain):
        assert not {"argsHash", "transport", "principal"} & called.keys()
        assert not {"status", "durationMs"} & returned.keys()
    first_returned = next(tool_pairs(plain))[1]
    assert "error" in first_returned
    assert "outcome" not in first_returned


def test_args_hash_is_sha256_of_the_jcs_text() -> None:
    # For ASCII keys, strings and small integers JCS is sorted keys without whitespace.
    args = {"z": [1, "two", None, True], "a": {"y": 2, "b": "c-1"}}
    text = json.dumps(args, sort_keys=True, separators=(",", ":"))
    assert args_hash(args) == hashlib.sha256(text.encode()).hexdigest()
    assert args_hash({"n": 1.0}) == args_hash({"n": 1})  # JCS writes 1.0 as 1
    assert args_hash({"b": 1, "a": 2}) == args_hash({"a": 2, "b": 1})
    # an integer past double precision hashes as the double it denotes, as JCS reads it
    assert args_hash({"n": 2**60}) == args_hash({"n": float(2**60)})


def test_a_fixed_clock_and_ids_reproduce_the_log() -> None:
    def run() -> list[RunEvent]:
        host = ReferenceHost(clock=FixedClock(), ids=counter_ids())
        return run_events(host, two_task_suite())

    first, second = run(), run()
    assert first == second
    assert first[0]["runId"] == "local/run-000000000001"
    # the host reads the clock once when it is built, to check it returns a datetime
    assert first[0]["timestamp"] == "2026-11-30T12:00:00.005Z"
    durations = [r["durationMs"] for _, r in tool_pairs(first)]
    assert durations == [5] * 5  # one 5 ms clock step between the two readings around a call


def test_timestamps() -> None:
    aware = datetime(2026, 1, 2, 3, 4, 5, 678999, tzinfo=timezone(timedelta(hours=2)))
    assert format_timestamp(aware) == "2026-01-02T01:04:05.678Z"
    assert format_timestamp(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05.000Z"
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert elapsed_ms(start, start + timedelta(seconds=1.5)) == 1500
    assert elapsed_ms(start, start - timedelta(seconds=1)) == 0


@pytest.mark.requirement("toolcall-spec.requirement.replay.fixed-error-message")
def test_a_served_error_message_is_fixed_and_never_the_payload() -> None:
    messages = set()
    for payload in ("upstream_down", "secret-token-123", "x" * 500):
        suite = example(RFC_SUITE)
        entry = suite["tasks"][0]["fixtures"]["toolResponses"][0]
        entry["response"] = {"content": [{"type": "text", "text": payload}]}
        events = run_events(ReferenceHost(), suite)
        error = next(tool_pairs(events))[1]["error"]
        assert payload not in json.dumps(error)
        assert len(error["message"]) <= 80
        messages.add(error["message"])
    assert len(messages) == 1


def _without_tool_hooks() -> dict[str, Any]:
    caps = ReferenceHost().capabilities
    del caps["toolHooks"]
    return caps
