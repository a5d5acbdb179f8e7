"""The fast validator used for bulk ingest (jsonschema-rs, compiled, formats on) agrees with the
pure-Python oracle (jsonschema's Draft202012Validator with its format checker and a registry of
the packaged schemas) on generated tool_call events, formats included."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jsonschema_rs
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from support.checks import default_oracle
from support.search import found
from support.strategies.analytics import defective_events, tool_call_events

from toolcall_spec import loading
from toolcall_spec.analytics.ingest import (
    event_issues,
    ingest_jsonl,
    jsonl_answer,
    rejection,
)
from toolcall_spec.analytics.precheck import (
    GROUP_LINES,
    STRICT_DATE_TIME,
    UnsupportedSchemaError,
    build_precheck,
    event_precheck,
)
from toolcall_spec.catalog import all_schemas, load_schema, registry, validator
from toolcall_spec.loading import iter_jsonl, parse_jsonl_line
from toolcall_spec.typed import EventRejection, IngestAnswer

FAITHFUL = pytest.mark.requirement("toolcall-spec.requirement.ingest.faithful-fast-validator")


COND = ("if", "then", "else")
VALID_EVENT = {
    "event_id": "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
    "event_type": "tool_call",
    "trace_id": "t",
    "session_id": "s",
    "timestamp": "2026-02-28T12:00:00Z",
    "source": "server",
}


def load_schema_defs() -> dict[str, Any]:
    defs: dict[str, Any] = all_schemas()["common/formats.schema.json"]["$defs"]
    return defs


FORMAT_DEFS = load_schema_defs()


def oracle() -> Draft202012Validator:
    return default_oracle("tool-call-event")


def fast_says_valid(event: Any) -> bool:
    return event_issues(event) == []


def format_variants() -> st.SearchStrategy[dict[str, Any]]:
    """A valid event whose uuid or date-time is replaced by a near miss or an unusual form."""
    uuids = st.sampled_from(
        [
            "0B6F3A52-9C1E-4D7A-8F0E-2F4B6C8D1E3A",  # upper case: valid
            "00000000-0000-0000-0000-000000000000",  # the nil uuid: valid
            "0b6f3a52-9c1e-1d7a-8f0e-2f4b6c8d1e3a",  # version 1: valid
            "0b6f3a529c1e4d7a8f0e2f4b6c8d1e3a",
            "{0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a}",
            "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3g",
            "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3",
            "urn:uuid:0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        ]
    )
    times = st.sampled_from(
        [
            "2024-02-29T12:00:00Z",  # a leap day: valid
            "2000-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",  # no leap day in 1900
            "2026-02-29T12:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-11-30t12:00:00z",  # lower-case separators: valid
            "2026-11-30T12:00:00.123456789+05:30",
            "2026-11-30T12:00:00+24:00",
            "2026-11-30T12:00:00",  # no zone
            "2026-11-30 12:00:00Z",
            "2026-11-30T24:00:00Z",
        ]
    )
    return st.one_of(
        st.builds(lambda e, u: {**e, "event_id": u}, tool_call_events, uuids),
        st.builds(lambda e, t: {**e, "timestamp": t}, tool_call_events, times),
        st.builds(lambda e, t: {**e, "ingested_at": t}, tool_call_events, times),
    )


@FAITHFUL
@given(
    st.one_of(
        tool_call_events,
        defective_events(repairable_too=True).map(lambda pair: pair[0]),
        format_variants(),
    )
)
def test_the_fast_validator_and_the_oracle_agree(event: Any) -> None:
    assert fast_says_valid(event) is oracle().is_valid(event)


@FAITHFUL
def test_the_comparison_can_tell_the_two_apart() -> None:
    """Guard against a vacuous property: both sides see valid and invalid events."""
    valid = {
        "event_id": "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": "2026-02-28T12:00:00Z",
        "source": "server",
    }
    invalid = {**valid, "timestamp": "2026-02-29T12:00:00Z"}  # the pattern passes, the format not
    assert (fast_says_valid(valid), oracle().is_valid(valid)) == (True, True)
    assert (fast_says_valid(invalid), oracle().is_valid(invalid)) == (False, False)


@pytest.mark.parametrize(
    "timestamp",
    [
        "2026-12-31T23:59:60Z",  # a leap second: RFC 3339 allows it, the schema's pattern too
        "0000-01-01T00:00:00Z",  # year 0000: RFC 3339 allows it
    ],
)
def test_known_divergence_the_oracle_misreads_valid_rfc3339(timestamp: str) -> None:
    """Python's datetime cannot hold a leap second or year 0, so the oracle's format check
    refuses both; the fast validator reads RFC 3339 as written. The property above leaves these
    two shapes out; this test pins the divergence so a change on either side is noticed."""
    event = {
        "event_id": "0b6f3a52-9c1e-4d7a-8f0e-2f4b6c8d1e3a",
        "event_type": "tool_call",
        "trace_id": "t",
        "session_id": "s",
        "timestamp": timestamp,
        "source": "server",
    }
    assert fast_says_valid(event) is True
    assert oracle().is_valid(event) is False


@FAITHFUL
def test_the_property_catches_a_validator_that_skips_formats() -> None:
    """A planted mutation: the same schema compiled without format checks. The generated format
    variants must expose it (a calendar day that does not exist passes the pattern)."""
    lax = jsonschema_rs.Draft202012Validator(
        load_schema("tool-call-event"), registry=registry(), validate_formats=False
    )
    disagreement = found(
        format_variants(),
        lambda event: lax.is_valid(event) != oracle().is_valid(event),
        max_examples=500,
    )
    assert lax.is_valid(disagreement) is True
    assert oracle().is_valid(disagreement) is False


# --- the byte-level pre-check of JSONL ingest (toolcall_spec.analytics.precheck) ----------------

WRITINGS = (
    "compact",
    "spaced",
    "reordered",
    "byte order mark",
    "carriage return",
    "repeated member",
    "repeated status",
    "integral float",
    "huge integer inside",
    "exponent overflow inside",
    "huge integer member",
    "invalid utf-8",
    "lone surrogate",
    "deep nesting",
    "trailing garbage",
    "two objects",
)


def dumps(value: Any) -> bytes:
    """Compact JSON as orjson writes it, for any integer (orjson refuses those beyond 64 bits)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def write_line(event: Any, how: str) -> bytes:
    """One JSONL line for ``event``, written in one of many ways a reader must handle alike (a
    defect that is not an object is written as it is)."""
    compact = dumps(event)
    if not isinstance(event, dict):
        return compact
    inside = b'"input_values":{"n":%s},'
    edits: dict[str, Callable[[], bytes]] = {
        "compact": lambda: compact,
        "spaced": lambda: json.dumps(event, separators=(" , ", " : ")).encode(),
        "reordered": lambda: dumps(dict(reversed(list(event.items())))),
        "byte order mark": lambda: b"\xef\xbb\xbf" + compact,
        "carriage return": lambda: compact + b"\r",
        "repeated member": lambda: compact[:-1] + b',"source":"browser"}',
        "repeated status": lambda: compact[:-1] + b',"status":"success"}',
        "integral float": lambda: dumps({**event, "is_retry": 1.0}),
        "huge integer inside": lambda: b"{" + inside % (b"9" * 400) + compact[1:],
        "exponent overflow inside": lambda: b"{" + inside % b"1e400" + compact[1:],
        "huge integer member": lambda: dumps({**event, "tokens_in": 0})[:-2] + b"9" * 30 + b"}",
        "invalid utf-8": lambda: compact.replace(
            b'"tool_call"', b'"tool_call","platform":"\xed\xa0\x80"'
        ),
        "lone surrogate": lambda: compact.replace(
            b'"tool_call"', b'"tool_call","platform":"\\ud800"'
        ),
        "deep nesting": lambda: b"{" + inside % b'[[[[{"a":[1]}]]]]' + compact[1:],
        "trailing garbage": lambda: compact + b" x",
        "two objects": lambda: compact + b"," + compact,
    }
    return edits[how]()


def full_path_accepts(line: bytes) -> bool:
    """What the ingest path decides without the pre-check: orjson (then the slow reader), then
    the pure-Python oracle."""
    settled = parse_jsonl_line(line)
    if settled is None or settled[1] is not None:
        return False
    return bool(oracle().is_valid(settled[0]))


any_events = st.one_of(
    tool_call_events,
    defective_events().map(lambda pair: pair[0]),
    format_variants(),
)


@FAITHFUL
@given(any_events, st.sampled_from(WRITINGS))
@settings(max_examples=400)
def test_what_the_precheck_accepts_the_oracle_accepts(event: Any, how: str) -> None:
    """The pre-check's promise is one-sided: a line it settles as valid is valid for the oracle
    (and for the package's validator); anything else is left to the full path."""
    line = write_line(event, how)
    if event_precheck().accepts(line):
        assert full_path_accepts(line)
        assert validator("tool-call-event").is_valid(orjson.loads(line))


@FAITHFUL
@given(st.lists(st.tuples(any_events, st.sampled_from((*WRITINGS, "blank"))), max_size=12))
@settings(max_examples=150)
def test_ingest_answers_as_the_line_by_line_path(pairs: list[tuple[Any, str]]) -> None:
    """The whole JSONL answer (counts, indices, line numbers, issues) equals the one the plain
    line-by-line reading gives (every line parsed, checked by the validator, issues on failure),
    at any block size."""
    lines = [b"  " if how == "blank" else write_line(event, how) for event, how in pairs]
    body = b"\n".join(lines) + b"\n"
    expected = reference_answer(body)
    for block in (7, 64, 1 << 20):
        with patch_block_bytes(block):
            assert ingest_jsonl(io.BytesIO(body)) == expected


def reference_answer(body: bytes) -> IngestAnswer:
    accepted = 0
    errors: list[EventRejection] = []
    for index, (number, value, error) in enumerate(iter_jsonl(io.BytesIO(body))):
        issues = [f"(root): {error}"] if error is not None else event_issues(value)
        if issues:
            errors.append(rejection(index, issues, number))
        else:
            accepted += 1
    return jsonl_answer(accepted, len(errors), errors)


@contextmanager
def patch_block_bytes(size: int) -> Iterator[None]:
    """Read JSONL in blocks of ``size`` bytes, so lines cross block boundaries."""
    defaults = loading.iter_jsonl_blocks.__kwdefaults__
    assert defaults is not None
    original = defaults["block_bytes"]
    defaults["block_bytes"] = size
    try:
        yield
    finally:
        defaults["block_bytes"] = original


@FAITHFUL
def test_the_precheck_settles_the_common_valid_events() -> None:
    """Guard against a vacuous promise: ordinary valid events, with and without an error, are
    settled by the pre-check (otherwise it would only cost time)."""
    success = {**VALID_EVENT, "status": "success", "latency_ms": 12.5, "input_keys": {"q": True}}
    failure = {**VALID_EVENT, "status": "error", "error_category": "tool_error"}
    assert event_precheck().accepts(orjson.dumps(success))
    assert event_precheck().accepts(orjson.dumps(failure))
    assert not event_precheck().accepts(orjson.dumps({**failure, "status": "success"}))


@FAITHFUL
def test_the_property_catches_a_precheck_without_the_condition() -> None:
    """A planted mutation: the pre-check built without the schema's if/then/else (a success
    may then carry an error category). The byte-level property finds a line it wrongly
    settles."""
    schema = {k: v for k, v in load_schema("tool-call-event").items() if k not in COND}
    refs = {"../common/formats.schema.json#/$defs/" + n: d for n, d in FORMAT_DEFS.items()}
    lax = build_precheck(schema, refs)
    line = found(
        st.builds(
            write_line,
            defective_events(repairable_too=True).map(lambda pair: pair[0]),
            st.just("compact"),
        ),
        lambda line: lax.accepts(line) and not full_path_accepts(line),
    )
    assert not full_path_accepts(line)


def test_the_strict_date_time_is_inside_the_schema_pattern() -> None:
    """Every date-time the pre-check vouches for also matches the schema's own pattern."""
    schema_pattern = re.compile(load_schema_defs()["Timestamp"]["pattern"])
    for text in (
        "2026-11-30T12:00:00Z",
        "2024-01-31T23:59:59.5+14:00",
        "0001-12-30T00:00:00-23:59",
    ):
        assert re.fullmatch(STRICT_DATE_TIME, text)
        assert schema_pattern.search(text)
    for text in (
        "2024-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-12-31T23:59:60Z",
        "2026-11-30t12:00:00z",
        "2026-11-30 12:00:00Z",
    ):
        assert not re.fullmatch(STRICT_DATE_TIME, text)


def test_schema_keywords_the_precheck_cannot_translate_are_refused() -> None:
    base = {"type": "object", "additionalProperties": False, "properties": {}}
    for member in (
        {"type": "string", "format": "email"},
        {"type": "string", "pattern": "^a.b$"},
        {"type": "array"},
        {"type": "object", "additionalProperties": False},
        {"enum": [1, 2]},
        {"type": "string", "contentEncoding": "base64"},
    ):
        with pytest.raises(UnsupportedSchemaError):
            build_precheck({**base, "properties": {"m": member}}, {})


@FAITHFUL
@pytest.mark.requirement("toolcall-spec.requirement.input.no-repeated-members")
@pytest.mark.parametrize(
    "line",
    [
        # the plain repeat: msgspec would keep the second value
        b'{"source":"widget","source":"server",',
        # a repeat inside an open object
        b'{"source":"server","input_values":{"a":1,"a":2},',
        # a repeat whose missing count a quote-colon written as \u0022 would make up for
        b'{"source":"server","source":"server","metadata":{"x":"y\\u0022:"},',
        # a repeat whose count a spaced colon would hide
        b'{"source" :"server","source":"server",',
    ],
)
def test_the_precheck_never_settles_a_line_that_repeats_a_member(line: bytes) -> None:
    """What the pre-check settles skips the full path, so a repeated member must never be
    settled: each of these decodes (last wins) into a valid event, which the pre-check settles
    once the repeat is taken out."""
    rest = orjson.dumps({**{k: v for k, v in VALID_EVENT.items() if k != "source"}, "status": "ok"})
    rest = rest.replace(b'"status":"ok"', b'"status":"success"')
    raw = line + rest[1:]
    assert event_precheck().accepts(raw) is False
    assert full_path_accepts(raw) is False
    once = orjson.dumps(orjson.loads(raw))  # the same event, each member once
    assert event_precheck().accepts(once) is True


@FAITHFUL
@pytest.mark.requirement("toolcall-spec.requirement.input.no-repeated-members")
@pytest.mark.parametrize("at", [0, 77, GROUP_LINES - 1, GROUP_LINES, 2 * GROUP_LINES + 5])
def test_one_repeat_among_many_valid_lines_is_the_only_line_left_unsettled(at: int) -> None:
    """The repeat guard runs once per group of lines; a group that fails it is looked at line
    by line, so exactly the line with the repeat is left to the full path, wherever it sits."""
    valid = [
        orjson.dumps({**VALID_EVENT, "status": "success", "latency_ms": float(n)})
        for n in range(3 * GROUP_LINES)
    ]
    repeat = valid[at][:-1] + b',"source":"server"}'
    assert full_path_accepts(repeat) is False
    lines: list[bytes | None] = [*valid[:at], repeat, *valid[at + 1 :]]
    assert event_precheck().unsettled(lines) == [at]
