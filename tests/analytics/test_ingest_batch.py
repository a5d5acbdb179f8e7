"""Ingest answers for batches: per-event verdicts, indices as sent, limits, duplicates."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.repo import EXAMPLES
from support.strategies.analytics import (
    DEFECTS,
    REPAIRABLE,
    defective_events,
    repairable_events,
    small_events,
    tool_call_events,
)
from support.strategies.values import json_values, member_names

from toolcall_spec.analytics.ingest import (
    MAX_BATCH_EVENTS,
    MAX_BODY_BYTES,
    ingest_batch,
    ingest_body,
    ingest_jsonl,
    rejection,
)
from toolcall_spec.analytics.ingest_parallel import ingest_jsonl_file
from toolcall_spec.json_paths import format_path
from toolcall_spec.typed import IngestAnswer
from toolcall_spec.validation import validate

PER_EVENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.per-event-answer")
AS_SENT = pytest.mark.requirement("toolcall-spec.requirement.ingest.indices-as-sent")
LIMITS = pytest.mark.requirement("toolcall-spec.requirement.ingest.batch-limits")
DUPLICATES = pytest.mark.requirement("toolcall-spec.requirement.ingest.duplicate-event-id")
ENVELOPE = pytest.mark.requirement("toolcall-spec.requirement.ingest.envelope-never-rejects")


def load(name: str) -> Any:
    return json.loads((EXAMPLES / "analytics" / name).read_text(encoding="utf-8"))


def event(number: int, **members: Any) -> dict[str, Any]:
    return {
        "event_id": f"00000000-0000-4000-8000-{number:012d}",
        "event_type": "tool_call",
        "trace_id": "tr_1",
        "session_id": "ses_1",
        "timestamp": "2026-11-30T12:00:00Z",
        "source": "server",
        "event_name": "billing_lookup",
        **members,
    }


def answer_of(batch: Any) -> IngestAnswer:
    answer = ingest_batch(batch)
    assert validate(answer, "ingest-answer") == []
    return answer


@PER_EVENT
def test_a_batch_with_a_tool_error_event_is_accepted() -> None:
    batch = {"events": [load("tool-error-event.json")]}
    assert answer_of(batch) == {"status": 200, "accepted": 1, "rejected": 0, "errors": []}


@PER_EVENT
@AS_SENT
def test_an_unknown_category_rejects_that_event_only_with_207_naming_index_1() -> None:
    answer = answer_of(load("batch-unknown-category.json"))
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 2, 1)
    [rejection] = answer["errors"]
    assert rejection["index"] == 1
    assert len(rejection["issues"]) == 1
    assert rejection["issues"][0].startswith("error_category: ")
    assert "exploded" in rejection["issues"][0]


@PER_EVENT
def test_when_every_event_fails_the_answer_is_400_with_each_index() -> None:
    batch = {"events": [event(1, status="maybe"), event(2, is_retry="true")]}
    answer = answer_of(batch)
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (400, 0, 2)
    assert [e["index"] for e in answer["errors"]] == [0, 1]
    assert answer["errors"][1]["issues"][0].startswith("is_retry: ")
    assert answer["error"]["code"] == "all_rejected"


@PER_EVENT
def test_an_issue_names_the_path_inside_the_event() -> None:
    batch = {"events": [event(1, output_content=[1]), event(2, status="error", is_retry=2)]}
    errors = answer_of(batch)["errors"]
    assert errors[0]["issues"][0].startswith("output_content: ")
    assert any(issue.startswith("is_retry: ") for issue in errors[1]["issues"])


@DUPLICATES
@AS_SENT
def test_a_repeated_event_id_rejects_the_repeat_and_keeps_the_first() -> None:
    batch = {"events": [event(1), event(2), event(1, status="success"), event(1)]}
    answer = answer_of(batch)
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 2, 2)
    assert [e["index"] for e in answer["errors"]] == [2, 3]
    assert "index 0" in answer["errors"][0]["issues"][0]


@DUPLICATES
def test_event_ids_are_compared_as_uuids_whatever_their_case() -> None:
    first = event(1)
    upper = {**event(2), "event_id": first["event_id"].upper()}
    assert answer_of({"events": [first, upper]})["errors"][0]["index"] == 1


@DUPLICATES
@PER_EVENT
def test_an_invalid_event_never_claims_an_id_so_a_later_valid_one_is_kept() -> None:
    batch = {"events": [event(1, status="bogus"), event(1)]}
    answer = answer_of(batch)
    assert (answer["accepted"], [e["index"] for e in answer["errors"]]) == (1, [0])


@LIMITS
@pytest.mark.parametrize(
    ("batch", "code"),
    [
        ({"events": []}, "batch_size"),
        ({"events": [event(i) for i in range(MAX_BATCH_EVENTS + 1)]}, "batch_size"),
        ({"events": {"0": event(1)}}, "invalid_batch"),
        ({}, "invalid_batch"),
        ([event(1)], "invalid_batch"),
        ("events", "invalid_batch"),
    ],
)
def test_a_malformed_batch_is_refused_as_a_whole(batch: Any, code: str) -> None:
    answer = answer_of(batch)
    assert (answer["status"], answer["accepted"], answer["errors"]) == (400, 0, [])
    assert answer["error"]["code"] == code
    events = batch.get("events") if isinstance(batch, dict) else None
    assert answer["rejected"] == (len(events) if isinstance(events, list) else 0)


@ENVELOPE
@pytest.mark.parametrize(
    ("envelope", "warnings"),
    [
        ({"surprise": True}, ["surprise: not a member of a batch; ignored"]),
        ({"batch id": "b-1"}, ['["batch id"]: not a member of a batch; ignored']),
        ({"sdk_version": "0.3.1", "sent_at": "2026-11-30T12:00:04.000Z"}, None),
    ],
)
def test_the_envelope_is_checked_but_never_rejects_an_event(
    envelope: dict[str, Any], warnings: list[str] | None
) -> None:
    """Members beside ``events`` say nothing about any event: one that does not fit the batch
    schema is ignored with a warning, and every event is answered on its own merits."""
    answer = answer_of({"events": [event(1), event(2, status="bogus")], **envelope})
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 1, 1)
    assert answer.get("envelopeWarnings") == warnings


@ENVELOPE
@pytest.mark.parametrize(
    ("member", "value", "quoted"),
    [("sent_at", "yesterday", '"yesterday"'), ("sdk_version", 4, "4")],
)
def test_a_malformed_known_member_is_named_and_ignored(
    member: str, value: Any, quoted: str
) -> None:
    """The validator's own words say what is wrong; the warning names the member and its value
    and says it was ignored."""
    answer = answer_of({"events": [event(1)], member: value})
    assert answer["status"] == 200
    assert answer["envelopeWarnings"]
    for warning in answer["envelopeWarnings"]:
        assert warning.startswith(f"{member}: {quoted} ")
        assert warning.endswith("; ignored")


@LIMITS
def test_the_limits_themselves_are_accepted() -> None:
    full = {"events": [event(i) for i in range(MAX_BATCH_EVENTS)], "sdk_version": "0.4.0"}
    assert answer_of(full)["accepted"] == MAX_BATCH_EVENTS
    body = orjson.dumps({"events": [event(1, status="error", error_category="server")]})
    padded = body[:-1] + b" " * (MAX_BODY_BYTES - len(body)) + b"}"
    assert len(padded) == MAX_BODY_BYTES
    assert ingest_body(padded)["status"] == 200


@LIMITS
def test_a_body_over_512000_bytes_is_413_before_parsing() -> None:
    too_big = b"{" + b" " * MAX_BODY_BYTES  # not even JSON: never parsed
    answer = ingest_body(too_big)
    assert answer["status"] == 413
    assert answer["error"]["code"] == "payload_too_large"
    assert (answer["accepted"], answer["rejected"]) == (0, 0)
    assert validate(answer, "ingest-answer") == []


@PER_EVENT
@pytest.mark.parametrize("body", [b"{not json", b"\x00\x01", '{"events": [1,]}'])
def test_a_body_that_is_not_json_is_400(body: bytes | str) -> None:
    answer = ingest_body(body)
    assert (answer["status"], answer["error"]["code"]) == (400, "invalid_json")


# --- the property: whatever is planted, the answer accounts for every event as sent -----------


# Mostly small events (the property is about the batch); some with every kind of member (one_of
# would merge the repeats: sampled_from keeps the weights).
_VALID = st.sampled_from([small_events] * 3 + [tool_call_events]).flatmap(lambda events: events)
_DEFECTIVE = defective_events(small_events)
_REPAIRABLE = repairable_events(small_events)
_KINDS = st.sampled_from(["valid", "valid", "defect", "repeat", "repairable"])
_SIZES = st.integers(1, 20)


Planted = tuple[list[Any], dict[int, str], dict[int, str]]


@st.composite
def batches_with_planted_defects(draw: st.DrawFn) -> Planted:
    """A batch of valid events with defective events, repairable events and repeated ids
    planted at random positions; returns the batch, per planted index why it must be rejected,
    and per repairable index how its warning starts."""
    events: list[Any] = []
    expected: dict[int, str] = {}
    repaired: dict[int, str] = {}
    accepted_ids: list[str] = []
    for index in range(draw(_SIZES)):
        kind = draw(_KINDS)
        if kind == "repairable":
            fixable, warning = draw(_REPAIRABLE)
            if fixable["event_id"].lower() in accepted_ids:
                expected[index] = "repeat"
            else:
                accepted_ids.append(fixable["event_id"].lower())
                repaired[index] = warning
            events.append(fixable)
        elif kind == "repeat" and accepted_ids:
            original = accepted_ids[draw(st.integers(0, len(accepted_ids) - 1))]
            events.append({**draw(_VALID), "event_id": original})
            expected[index] = "repeat"
        elif kind == "defect":
            bad, name = draw(_DEFECTIVE)
            events.append(bad)
            expected[index] = name
        else:
            valid = draw(_VALID)
            if valid["event_id"].lower() in accepted_ids:  # only when Hypothesis shrinks uuids
                expected[index] = "repeat"
            else:
                accepted_ids.append(valid["event_id"].lower())
            events.append(valid)
    return events, expected, repaired


def check_answer(
    events: list[Any],
    expected: dict[int, str],
    answer: IngestAnswer,
    repaired: dict[int, str] | None = None,
) -> None:
    """The answer accounts for every event as sent: the rejected indices are exactly the planted
    ones, in the batch's own index space, and accepted + rejected is what was sent."""
    assert answer["accepted"] + answer["rejected"] == len(events)
    assert [rejected["index"] for rejected in answer["errors"]] == sorted(expected)
    assert answer["rejected"] == len(expected)
    for rejected in answer["errors"]:
        assert rejected["issues"]
    if not expected:
        assert answer["status"] == 200
    elif len(expected) == len(events):
        assert answer["status"] == 400
    else:
        assert answer["status"] == 207
    assert validate(answer, "ingest-answer") == []
    if repaired is not None:
        warnings = answer.get("warnings", [])
        assert {warning["index"] for warning in warnings} == set(repaired)
        for index, start in repaired.items():
            messages = [w["message"] for w in warnings if w["index"] == index]
            assert any(message.startswith(start) for message in messages), messages


@PER_EVENT
@AS_SENT
@DUPLICATES
@pytest.mark.requirement("toolcall-spec.requirement.ingest.repairs-with-warning")
@given(batches_with_planted_defects())
def test_every_event_sent_is_accounted_for_at_its_own_index(case: Planted) -> None:
    """Slow on purpose (over 10 s): a property over whole generated batches (up to 1,000 events)."""
    events, expected, repaired = case
    snapshot = copy.deepcopy(events)
    stored: list[dict[str, Any]] = []
    answer = ingest_batch({"events": events}, stored.append)
    check_answer(events, expected, answer, repaired)
    assert events == snapshot  # ingest never changes what it was sent
    assert len(stored) == answer["accepted"]
    assert all(validate(event, "tool-call-event") == [] for event in stored)


@AS_SENT
def test_the_property_catches_an_answer_in_a_filtered_index_space() -> None:
    """The mutation upstream shipped: indices counted among the events left after a filter. The
    property's check must reject such an answer."""
    events = [event(1), event(2, status="bogus"), event(3), event(4, is_retry=7)]
    expected = {1: "bad status", 3: "bad is_retry"}
    honest = ingest_batch({"events": events})
    check_answer(events, expected, honest)
    filtered: IngestAnswer = {
        **honest,
        "errors": [rejection(position, r["issues"]) for position, r in enumerate(honest["errors"])],
    }
    with pytest.raises(AssertionError):
        check_answer(events, expected, filtered)


def test_every_defect_in_the_strategy_makes_an_event_invalid() -> None:
    for name, defect in DEFECTS.items():
        answer = ingest_batch({"events": [defect(event(1))]})
        assert answer["rejected"] == 1, name


@pytest.mark.requirement("toolcall-spec.requirement.ingest.error-members-need-a-status")
@pytest.mark.parametrize(
    "members",
    [
        {"error_category": "tool_error"},
        {"error_category": "unknown", "error_message": "quota exceeded"},
        {"error_message": "quota exceeded"},
    ],
)
def test_error_members_without_a_status_reject_the_event_on_every_path(
    members: dict[str, Any], tmp_path: Path
) -> None:
    """Nothing says whether such a call failed: the batch path, the JSONL path (its pre-check
    leaves an event without ``status`` to the full check) and the parallel path all reject it,
    naming each error member; a valid event beside it is accepted."""
    sent = event(1, **members)
    expected = sorted(f"{member}: " for member in members)
    answer = ingest_batch({"events": [event(2, status="success"), sent]})
    assert (answer["status"], answer["accepted"], answer["rejected"]) == (207, 1, 1)
    assert "warnings" not in answer
    (rejected,) = answer["errors"]
    assert rejected["index"] == 1
    assert sorted(issue[: issue.index(" ") + 1] for issue in rejected["issues"]) == expected
    lines = [orjson.dumps(event(2, status="success")), orjson.dumps(sent)] * 3
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with path.open("rb") as handle:
        one = ingest_jsonl(handle)
    with path.open("rb") as handle:
        two = ingest_jsonl_file(handle, workers=2)
    for jsonl in (one, two):
        assert (jsonl["accepted"], jsonl["rejected"]) == (3, 3)
        assert [r["line"] for r in jsonl["errors"]] == [2, 4, 6]
        assert [r["issues"] for r in jsonl["errors"]] == [rejected["issues"]] * 3
        assert "warnings" not in jsonl
    assert one == two


def test_every_repairable_defect_is_accepted_with_its_warning() -> None:
    for name, (defect, start) in REPAIRABLE.items():
        sent = defect(event(1))
        assert validate(sent, "tool-call-event") != [], name  # the schema alone rejects it
        answer = ingest_batch({"events": [sent]})
        assert (answer["accepted"], answer["rejected"]) == (1, 0), name
        assert [w["message"][: len(start)] for w in answer.get("warnings", [])] == [start], name


@ENVELOPE
@given(
    batches_with_planted_defects(),
    st.dictionaries(member_names.filter(lambda name: name != "events"), json_values(), max_size=4),
)
def test_no_envelope_changes_any_events_verdict(case: Planted, envelope: dict[str, Any]) -> None:
    """Whatever lies beside the events (unknown members, known ones of any value), the answer's
    per-event part is the one for the events alone, and every member that does not fit has a
    warning that names it."""
    events, _, _ = case
    alone = ingest_batch({"events": events})
    answer = answer_of({"events": events, **envelope})
    assert {**answer, "envelopeWarnings": []} == {**alone, "envelopeWarnings": []}
    named = {warning.split(":", 1)[0] for warning in answer.get("envelopeWarnings", [])}
    unknown = {format_path([name]) for name in envelope if name not in ("sdk_version", "sent_at")}
    assert unknown <= named


@PER_EVENT
@pytest.mark.parametrize("value", [2**63, 9.3e18, 1.5e300])
def test_a_token_count_no_store_column_holds_is_refused_with_its_path(value: float) -> None:
    """Past 2^63 - 1 a count does not fit the stores' 64-bit columns: accepted, it would be
    acknowledged and then stop every load after it."""
    event = {
        "event_id": "123e4567-e89b-42d3-a456-426614174000",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": "2026-11-30T12:00:00Z",
        "source": "server",
    }
    fits = ingest_body(orjson.dumps({"events": [{**event, "tokens_in": 2**63 - 1}]}))
    assert fits["status"] == 200
    answer = ingest_body(orjson.dumps({"events": [{**event, "tokens_out": value}]}))
    assert answer["status"] == 400
    [issue] = answer["errors"][0]["issues"]
    assert issue.startswith("tokens_out: ")
    assert "greater than the maximum" in issue
