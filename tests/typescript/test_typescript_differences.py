"""Where the Python validator (jsonschema-rs) and @toolcall-spec/schemas (ajv + ajv-formats) read
a document differently, pinned: each difference listed in docs/typescript.md ("Where the two
validators differ") has a test here that fails when either library changes its reading. So do the
places where they could be expected to differ but agree (regular expression classes, leap
seconds, the nesting limit), so that the docs' "they agree" stays true."""

from __future__ import annotations

from typing import Any

import pytest
from support.node import NodeJudge

from toolcall_spec import validate

EVENT: dict[str, Any] = {
    "event_id": "123e4567-e89b-12d3-a456-426614174000",
    "event_type": "tool_call",
    "trace_id": "trace-1",
    "session_id": "session-1",
    "timestamp": "2026-11-30T12:00:00Z",
    "source": "server",
}
DISCOVERY: dict[str, Any] = {"protocolVersions": ["2.0"], "preferredVersion": "2.0"}


def verdicts(judge: NodeJudge, kind: str, document: Any) -> tuple[bool, bool]:
    """(Python's verdict, JavaScript's verdict): True for valid."""
    python = not [p for p in validate(document, kind) if p.severity == "error"]
    return python, bool(judge.judge(kind, document)["valid"])


def test_the_base_documents_are_valid_on_both_sides(node_judge: NodeJudge) -> None:
    assert verdicts(node_judge, "tool-call-event", EVENT) == (True, True)
    assert verdicts(node_judge, "capabilities", DISCOVERY) == (True, True)


# --- the differences ----------------------------------------------------------------------------


def test_an_integer_beyond_64_bits_is_refused_by_python_only(node_judge: NodeJudge) -> None:
    # Python refuses it (toolcall_spec.validation.INTEGER_RANGE: not every JSON reader can hold
    # it); JavaScript's JSON.parse has already turned 2**64 into the double 18446744073709552000
    # before ajv sees it, and a double of that size is an integer to JSON Schema.
    # (latency_ms: a number without a maximum; the token counts stop at 2^63 - 1 on both sides)
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "latency_ms": 2**64}) == (False, True)
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "latency_ms": 2**64 - 1}) == (
        True,
        True,
    )


def test_a_problem_under_an_empty_member_name_has_a_shorter_path_in_python(
    node_judge: NodeJudge,
) -> None:
    # jsonschema-rs (0.61) leaves an empty member name out of an error's instance path, so the
    # problem under `fixtureRuns[""]` is reported at `fixtureRuns`; ajv keeps the segment. When
    # this fails, jsonschema-rs has fixed it: drop `ajv_path` in test_typescript_differential.py.
    document = {
        "eventId": "0000000000000000",
        "runId": "0/0000000000000000",
        "schemaVersion": 1,
        "sequence": 0,
        "timestamp": "2026-12-01T00:00:00Z",
        "type": "eval.started",
        "payload": {
            "fixtureRuns": {"": None},
            "suiteId": "s",
            "suiteVersion": "1",
            "taskCount": 0,
            "modes": [],
        },
    }
    python = {p.path for p in validate(document, "run-event") if p.severity == "error"}
    ajv = {p["path"] for p in node_judge.judge("run-event", document)["problems"]}
    assert python == {"payload.fixtureRuns"}
    assert ajv == {"payload.fixtureRuns", 'payload.fixtureRuns[""]'}


def test_a_token_count_just_past_its_maximum_is_refused_by_python_only(
    node_judge: NodeJudge,
) -> None:
    # The maximum is 2^63 - 1; JavaScript's JSON.parse reads both it and 2^63 as the double
    # 2^63, so ajv cannot tell them apart. From 2^63 + 2048 on, the doubles differ and both
    # sides refuse.
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "tokens_in": 2**63 - 1}) == (
        True,
        True,
    )
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "tokens_in": 2**63}) == (False, True)
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "tokens_in": 2**63 + 2048}) == (
        False,
        False,
    )


def test_a_uri_with_an_empty_hier_part_is_refused_by_ajv_formats_only(
    node_judge: NodeJudge,
) -> None:
    # RFC 3986 allows `scheme ":"` with an empty path (jsonschema-rs accepts `x:`); the regular
    # expression of ajv-formats' `uri` wants something after the colon.
    document = {**DISCOVERY, "implementation": {"url": "x:"}}
    assert verdicts(node_judge, "capabilities", document) == (True, False)


# --- where they agree though they could differ --------------------------------------------------


@pytest.mark.parametrize(
    ("timestamp", "valid"),
    [
        ("2016-12-31T23:59:60Z", True),  # a leap second, at 23:59:60 UTC
        ("2016-12-31T22:59:60-01:00", True),  # the same instant in another zone
        ("2026-11-30T12:00:60Z", False),  # second 60 at any other time
        ("2016-12-31T23:59:60+01:00", False),  # 22:59:60 UTC
        ("2100-02-29T00:00:00Z", False),  # not a leap year
        ("0000-01-01T00:00:00Z", True),  # year zero
        ("2026-11-30t12:00:00z", True),  # lower-case T and Z (RFC 3339 allows them)
        ("2026-11-30T12:00:00", False),  # no time zone
    ],
)
def test_date_times_are_read_alike(node_judge: NodeJudge, timestamp: str, valid: bool) -> None:
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "timestamp": timestamp}) == (
        valid,
        valid,
    )


@pytest.mark.parametrize(
    ("event_id", "valid"),
    [
        ("123E4567-E89B-12D3-A456-426614174000", True),
        ("00000000-0000-0000-0000-000000000000", True),
        ("urn:uuid:123e4567-e89b-12d3-a456-426614174000", False),  # ajv-formats' uuid takes it;
        ("123e4567e89b12d3a456426614174000", False),  # the schema's pattern refuses both
    ],
)
def test_uuids_are_read_alike(node_judge: NodeJudge, event_id: str, valid: bool) -> None:
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "event_id": event_id}) == (
        valid,
        valid,
    )


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("US", True),
        ("US\n", False),  # `$` ends the text in both (no Python-style newline before the end)
        ("us", False),
    ],
)
def test_pattern_anchors_are_read_alike(node_judge: NodeJudge, text: str, valid: bool) -> None:
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "country_code": text}) == (
        valid,
        valid,
    )


@pytest.mark.parametrize(
    ("character", "whitespace"),
    [
        ("\u00a0", True),
        ("\u2028", True),
        ("\u3000", True),
        ("\ufeff", True),  # ECMA-262 \s has U+FEFF; Unicode's White_Space has not
        ("\u0085", False),  # Unicode's White_Space has U+0085; ECMA-262 \s has not
        ("\u180e", False),
        ("\u200b", False),
    ],
)
def test_the_whitespace_class_is_ecma_262s_on_both_sides(
    node_judge: NodeJudge, character: str, whitespace: bool
) -> None:
    # The run event's owner.subject.issuer has the pattern ^\S+$.
    event = {
        "eventId": "0000000000000000",
        "runId": "tenant/0000000000000000",
        "schemaVersion": 1,
        "sequence": 0,
        "timestamp": "2026-11-30T12:00:00Z",
        "type": "run.started",
        "payload": {
            "workflowId": "w",
            "inputs": {},
            "owner": {
                "tenant": "tenant",
                "subject": {
                    "issuer": f"a{character}b",
                    "subjectId": "s",
                    "tenant": "tenant",
                    "lane": "anonymous",
                    "kind": "anonymous",
                },
            },
        },
    }
    valid = not whitespace
    assert verdicts(node_judge, "run-event", event) == (valid, valid)


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def test_the_nesting_limit_is_the_same(node_judge: NodeJudge) -> None:
    # The event adds two levels (itself and metadata) to the nested value: 128 in all.
    assert verdicts(node_judge, "tool-call-event", {**EVENT, "metadata": nested(126)}) == (
        True,
        True,
    )
    deep = {**EVENT, "metadata": nested(127)}
    assert verdicts(node_judge, "tool-call-event", deep) == (False, False)
    python_paths = [p.path for p in validate(deep, "tool-call-event")]
    assert [p["path"] for p in node_judge.judge("tool-call-event", deep)["problems"]] == (
        python_paths
    )
