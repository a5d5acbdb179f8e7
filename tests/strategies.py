"""Hand-written Hypothesis strategies for every document kind (``toolcall_spec.catalog.KINDS``).

The API (tests import it as ``from strategies import valid_documents, near_miss``):

- ``valid_documents(kind)``: documents the schema of ``kind`` accepts. They exercise every
  optional member, OpenWOP's identifier grammars, registered and vendor event types and error
  codes, foreign members of open objects, every content block and capability record shape, and
  integral floats (``3.0``) for integer members (JSON Schema counts them as integers).
- ``near_misses_of(kind, document)``: one mutation of a valid ``document``: a boolean spelled
  ``"true"``, ``1``, ``1.0`` or ``null``; ``error`` beside ``outcome``; an unknown
  ``error_category``; an extra or a missing member; a category on a success; ``argsMatch`` without
  ``args``; a stable capability record with ``until``; a uuid or date-time of the wrong shape; and
  so on. Most are invalid; a few stay valid (an extra member of an open object), which a
  differential test welcomes. Each draw records its mutation as a Hypothesis ``event``
  (``pytest --hypothesis-show-statistics`` shows the mix).
- ``near_miss(kind)``: ``near_misses_of`` a freshly drawn valid document.
- ``events_of_type(type, payloads=None)``: run events of one type; ``tool_returned_payloads``
  draws every legal ``agent.tool-returned`` payload shape.
- ``json_values()``: any JSON value. ``BOOLEAN_LOOKALIKES``: JSON values that are not ``true`` but
  are often mistaken for a boolean.

Left out on purpose, each pinned by a test in tests/test_models_strict.py: strings ending in a
newline where a pattern applies, leap seconds and the year 0000 in date-times (the pure-Python
oracle misreads them), and numbers beyond the float range (the models refuse them).

Every strategy is built once (module constants or cached factories), and nesting is bounded by
hand rather than with ``st.recursive``: built per draw, or recursive, they made runs several times
slower.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from functools import cache
from typing import Any, Protocol, TypeVar

from hypothesis import event
from hypothesis import strategies as st

from toolcall_spec.catalog import Kind, all_schemas
from toolcall_spec.validation import INTEGER_RANGE

JSON = Any
T = TypeVar("T")


class Draw(Protocol):
    """A typed draw: what ``@st.composite`` passes and what ``st.data().draw`` is (hypothesis's
    own ``st.DrawFn`` also demands a ``__signature__`` that the bound ``data.draw`` lacks)."""

    def __call__(self, strategy: st.SearchStrategy[T], /) -> T: ...


BOOLEAN_LOOKALIKES: tuple[JSON, ...] = ("true", "True", "false", 1, 0, 1.0, 0.0, None, "1", [], {})
"""JSON values that are not the boolean ``true`` but are often read as one (or as ``false``)."""

EVAL_MODES = ("golden", "rubric", "adversarial", "regression", "live-shadow")
ERROR_CATEGORIES = (
    "auth",
    "validation",
    "timeout",
    "rate_limit",
    "server",
    "unknown",
    "tool_error",
)
LOWER, DIGITS = "abcdefghijklmnopqrstuvwxyz", "0123456789"

# --- scalars and JSON values --------------------------------------------------------------------

_text_chars = st.characters(exclude_categories=["Cs"])


@cache
def _text(min_size: int = 0, max_size: int = 12) -> st.SearchStrategy[str]:
    """Free text, any Unicode; never ending in a newline (see the module doc)."""
    return st.text(_text_chars, min_size=min_size, max_size=max_size).filter(
        lambda s: not s.endswith("\n")
    )


@cache
def _word(first: str, rest: str, max_rest: int = 8) -> st.SearchStrategy[str]:
    """``[first][rest]*``: the cheap way to a string that matches a simple pattern."""
    return st.builds(str.__add__, st.sampled_from(first), st.text(rest, max_size=max_rest))


_names = st.text(LOWER + DIGITS + "_-.$ ", max_size=8)
"""Member names of open objects: plain and odd ones (``""``, ``"a.b"``, ``"$x"``) alike."""


@cache
def _integers(min_value: int = 0, max_value: int | None = None) -> st.SearchStrategy[int | float]:
    """JSON integers: small, big (beyond 64 bits), and integral floats such as ``2.0``."""
    top = max_value if max_value is not None else 2**70
    return st.one_of(
        st.integers(min_value, min(top, min_value + 100)),
        st.integers(min_value, top),
        st.integers(min_value, min(top, 2**53)).map(float),
    )


@cache
def _numbers(
    min_value: float | None = None, max_value: float | None = None
) -> st.SearchStrategy[int | float]:
    low = int(min_value) if min_value is not None else INTEGER_RANGE.start
    high = int(max_value) if max_value is not None else INTEGER_RANGE.stop - 1
    floats = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False)
    return st.integers(low, high) | floats


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    # Integers within what every reader of the package takes (larger ones are refused: their
    # own tests cover that).
    st.integers(INTEGER_RANGE.start, INTEGER_RANGE.stop - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _text(),
)


@cache
def json_values(depth: int = 2) -> st.SearchStrategy[JSON]:
    """Any JSON value, arrays and objects nested up to ``depth`` levels (a hand-rolled bound:
    ``st.recursive`` costs more per draw and retries often)."""
    if depth == 0:
        return _scalars
    inner = json_values(depth - 1)
    return st.one_of(
        _scalars,
        st.lists(inner, max_size=2),
        st.dictionaries(_names, inner, max_size=2),
    )


_json_objects = st.dictionaries(_names, json_values(1), max_size=2)


@cache
def _foreign_keys(declared: frozenset[str]) -> st.SearchStrategy[str]:
    """Member names an open object may carry beside its declared members."""
    return _names.filter(lambda k: k not in declared)


def _obj(
    required: Mapping[str, st.SearchStrategy[Any]],
    optional: Mapping[str, st.SearchStrategy[Any]] | None = None,
    *,
    open_values: st.SearchStrategy[Any] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """An object with its required members, any subset of its optional members, and foreign
    members with ``open_values`` when the object is open."""
    declared = frozenset(required) | frozenset(optional or {})
    base = st.fixed_dictionaries(dict(required), optional=dict(optional or {}))
    extras: list[st.SearchStrategy[dict[str, Any]]] = []
    if open_values is not None:
        extras.append(st.dictionaries(_foreign_keys(declared), open_values, max_size=2))
    if not extras:
        return base
    return st.tuples(base, *extras).map(_merge)


def _merge(parts: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in reversed(parts):  # declared members (first) win over extras of the same name
        merged.update(part)
    return merged


# --- shared formats -----------------------------------------------------------------------------

_FIRST_DAY = date(1, 1, 1)
_days = st.one_of(
    st.integers(0, (date(9999, 12, 31) - _FIRST_DAY).days).map(
        lambda n: _FIRST_DAY + timedelta(days=n)
    ),
    st.integers(0, 20_000).map(lambda n: date(2000, 1, 1) + timedelta(days=n)),
    st.sampled_from([date(2000, 2, 29), date(2024, 2, 29), date(9999, 12, 31)]),
)
_zones = st.sampled_from(["Z", "z", "+00:00", "-00:00", "+05:30", "-08:00", "+23:59", "-23:59"])


@st.composite
def _timestamps(draw: Draw) -> str:
    day = draw(_days)
    minutes, second = divmod(draw(st.integers(0, 24 * 3600 - 1)), 60)
    fraction = draw(st.sampled_from(["", ".0", ".5", ".123", ".123456789"]))
    separator = draw(st.sampled_from("TTTt"))
    return (
        f"{day.year:04d}-{day.month:02d}-{day.day:02d}{separator}"
        f"{minutes // 60:02d}:{minutes % 60:02d}:{second:02d}{fraction}{draw(_zones)}"
    )


timestamps = _timestamps()
"""RFC 3339 date-times with a time zone: real calendar days (29 February included), fractions,
``Z``/``z``/offsets, a lowercase ``t`` now and then. No leap second, no year 0000."""

uuids = st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())

# --- MCP CallToolResult -------------------------------------------------------------------------

_annotations = _obj(
    {},
    {
        "audience": st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
        "priority": _numbers(0, 1),
        "lastModified": _text(),
    },
    open_values=json_values(1),
)


def _block(kind: str, required: Mapping[str, st.SearchStrategy[Any]], **optional: Any) -> Any:
    return _obj(
        {"type": st.just(kind), **required},
        {"annotations": _annotations, "_meta": _json_objects, **optional},
        open_values=json_values(1),
    )


_resource_members = _obj({"uri": _text(1)}, {"mimeType": _text(), "_meta": _json_objects})


@st.composite
def _resource_contents(draw: Draw) -> dict[str, Any]:
    """Resource contents hold exactly one of ``text`` and ``blob``."""
    contents = draw(_resource_members)
    contents[draw(st.sampled_from(["text", "blob"]))] = draw(_text())
    return contents


content_blocks = st.one_of(
    _block("text", {"text": _text()}),
    _block("image", {"data": _text(), "mimeType": _text(1)}),
    _block("audio", {"data": _text(), "mimeType": _text(1)}),
    _block(
        "resource_link",
        {"uri": _text(1), "name": _text(1)},
        title=_text(),
        description=_text(),
        mimeType=_text(),
        size=_integers(0),
    ),
    _block("resource", {"resource": _resource_contents()}),
)

call_tool_results = _obj(
    {"content": st.lists(content_blocks, max_size=2)},
    {"structuredContent": _json_objects, "_meta": _json_objects, "isError": st.booleans()},
    open_values=json_values(1),
)

# --- OpenWOP v2 identifiers (the packaged schemas/common/ids.schema.json) ----------------------

ID_CHARS = LOWER + LOWER.upper() + DIGITS + "._~-"
_opaque_ids = st.text(ID_CHARS, min_size=16, max_size=24)
event_ids = _opaque_ids
run_ids = st.builds("{}/{}".format, st.text(ID_CHARS, min_size=1, max_size=8), _opaque_ids)
author_ids = st.text(ID_CHARS + ":", min_size=1, max_size=12)
"""agentId, workflowId, nodeId: author-chosen, 1 to 128 of ``A-Z a-z 0-9 . _ ~ : -``."""
tenant_ids = st.builds(
    str.__add__, st.sampled_from(["", "anon:"]), st.text(ID_CHARS, min_size=1, max_size=8)
)
_subject_ids = st.text(LOWER + DIGITS + "@:|._-", min_size=1, max_size=12)
_LANES = ("api-key", "oauth2", "oidc", "mtls", "saml", "scim", "ldap", "workload", "session")


@st.composite
def _subjects(draw: Draw, depth: int = 0) -> dict[str, Any]:
    """A run owner's subject: anonymous exactly on the anonymous lane, ``keyClass`` exactly on the
    saml and scim lanes, and an actor chain at most four deep."""
    anonymous = draw(st.booleans())
    lane = "anonymous" if anonymous else draw(st.sampled_from(_LANES))
    kind = "anonymous" if anonymous else draw(st.sampled_from(["user", "agent", "workload"]))
    subject: dict[str, Any] = {
        "issuer": draw(st.text(LOWER + DIGITS + ":/.", min_size=1, max_size=12)),
        "subjectId": draw(_subject_ids),
        "tenant": draw(tenant_ids),
        "lane": lane,
        "kind": kind,
    }
    if lane in ("saml", "scim"):
        subject["keyClass"] = draw(st.sampled_from(["opaque-idp", "configured-immutable"]))
    if depth < 4 and draw(st.integers(0, 3)) == 0:
        subject["actor"] = draw(_subjects(depth + 1))
    return subject


owners = _obj(
    {"tenant": tenant_ids, "subject": _subjects()},
    {"workspace": st.text(ID_CHARS, min_size=1, max_size=8)},
)

_opaque = json_values() | call_tool_results
"""Opaque payloads (a fixture response, an outcome): any JSON, often an MCP result."""

# --- suite --------------------------------------------------------------------------------------


@st.composite
def _fixture_entries(draw: Draw) -> dict[str, Any]:
    """``{tool, args?, argsMatch?, response?, isError?}``; ``argsMatch`` only with ``args``. A
    success entry may carry an MCP result with ``isError`` in its opaque response."""
    entry: dict[str, Any] = {"tool": draw(_text(1))}
    if draw(st.booleans()):
        entry["args"] = draw(_json_objects)
        if draw(st.booleans()):
            entry["argsMatch"] = draw(st.sampled_from(["exact", "subset"]))
    if draw(st.booleans()):
        entry["isError"] = draw(st.booleans())
    if draw(st.integers(0, 3)):
        entry["response"] = draw(_opaque)
    return entry


_expected = _obj(
    {"kind": st.sampled_from(["golden", "rubric"])},
    {
        "match": _obj(
            {
                "strategy": st.sampled_from(["exact", "contains", "json-match"]),
                "value": json_values(),
            }
        ),
        "rubric": st.lists(
            _obj({"criterion": _text(1), "weight": _numbers(0, 1)}), min_size=1, max_size=2
        ),
    },
)

_fixtures = _obj(
    {},
    {
        "toolResponses": st.lists(_fixture_entries(), max_size=3),
        "onMiss": st.sampled_from(["fail", "live", "error"]),
        "memorySeed": st.lists(_json_objects, max_size=2),
    },
)

_eval_task = _obj(
    {
        "taskId": _word(LOWER + DIGITS, LOWER + DIGITS + "-"),
        "input": json_values(),
        "expected": _expected,
    },
    {"fixtures": _fixtures},
)

_semver = st.builds("{}.{}.{}".format, *(st.integers(0, 120) for _ in range(3)))

suites = _obj(
    {
        "suiteId": st.builds(
            "{}.evals.{}".format,
            st.text(LOWER + DIGITS + ".-", min_size=1, max_size=10),
            st.text(LOWER + DIGITS + "-", min_size=1, max_size=10),
        ),
        "version": _semver,
        "modes": st.lists(st.sampled_from(EVAL_MODES), min_size=1, unique=True),
        "tasks": st.lists(_eval_task, min_size=1, max_size=2),
    },
    {
        "targetAgentId": author_ids,
        "allowedModels": st.lists(
            st.sampled_from(
                ["reasoning", "writing", "coding", "research", "classification", "general"]
            ),
            unique=True,
        ),
        "thresholds": _obj(
            {},
            {
                "passScore": _numbers(0, 1),
                "maxCostUsd": _numbers(0),
                "maxP95LatencyMs": _integers(0),
            },
        ),
    },
)

# --- capabilities -------------------------------------------------------------------------------

_witnesses = st.sampled_from(
    ["witnessable-unaided", "witnessable-gated", "seam-gated", "claims-check", "negative-existence"]
)
_minors = st.builds("{}.{}".format, st.integers(0, 99), st.integers(0, 99))
_untils = _minors | st.dates().map(date.isoformat).filter(lambda d: len(d) == 10)


def _capability_records(
    facets: Mapping[str, st.SearchStrategy[Any]] | None = None, *, open_facets: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Family records: ``until`` exactly when the record is not stable; ``facets`` beside the
    record members, and foreign facets too when the family is one this package leaves open."""
    members = _obj(
        {"since": _minors, "witness": _witnesses},
        dict(facets or {}),
        open_values=json_values(1) if open_facets else None,
    )

    @st.composite
    def records(draw: Draw) -> dict[str, Any]:
        record = draw(members)
        record["status"] = draw(st.sampled_from(["stable", "experimental", "deprecated"]))
        record.pop("until", None)
        if record["status"] != "stable":
            record["until"] = draw(_untils)
        return record

    return records()


_eval_suite_capability = _obj(
    {},
    {
        "modes": st.lists(st.sampled_from(EVAL_MODES), unique=True),
        "maxTasksPerSuite": _integers(1),
        "maxCostUsdPerSuite": _numbers(0),
        "fixtureMatching": st.booleans(),
        "fixtureErrors": st.booleans(),
        "baselineSelection": st.booleans(),
        "recordedFixtures": st.booleans(),
    },
)

_DISCOVERY = all_schemas()["capabilities/discovery.schema.json"]
OTHER_FAMILIES = tuple(
    name
    for name, member in _DISCOVERY["properties"].items()
    if member.get("$ref") == "#/$defs/CapabilityRecord"
)
"""The OpenWOP v2 families this package checks as bare records (their facets stay open)."""
UNCHECKED_METADATA = tuple(
    name for name, member in _DISCOVERY["properties"].items() if set(member) == {"description"}
)
UNCHECKED_AGENT_FACETS = tuple(
    name
    for name, member in _DISCOVERY["$defs"]["AgentsFamily"]["properties"].items()
    if set(member) == {"description"}
)
_extension_keys = st.builds(
    "{}.{}".format, _word(LOWER, LOWER + DIGITS, 5), _word(LOWER, LOWER + DIGITS, 5)
)

capabilities = st.tuples(
    _obj(
        {
            "protocolVersions": st.lists(_minors, min_size=1, max_size=3, unique=True),
            "preferredVersion": _minors,
        },
        {
            "protocolVersion": _minors,
            "extensions": st.dictionaries(_extension_keys, _json_objects, max_size=2),
            "implementation": _obj(
                {},
                {
                    "name": _text(),
                    "version": _text(),
                    "vendor": _text(),
                    "url": st.just("https://example.com/h"),
                },
            ),
            "engineVersion": _integers(0),
            "eventLogSchemaVersion": _integers(2),
            "conformance": _obj(
                {},
                {
                    "mockAgent": st.booleans(),
                    "certificationBundleUrl": st.just("https://example.com/bundle.json"),
                    "seamsProfile": st.just("openwop-conformance-seams-v2"),
                },
            ),
            "fixtures": st.lists(_text(1), max_size=3, unique=True),
            "agents": _capability_records(
                {
                    "evalSuite": _eval_suite_capability,
                    **{facet: json_values(1) for facet in UNCHECKED_AGENT_FACETS},
                }
            ),
            "toolHooks": _capability_records(
                {
                    "prePostEvents": st.booleans(),
                    "perToolAuthorization": st.booleans(),
                    "perToolRateLimit": st.booleans(),
                }
            ),
            **{member: json_values(1) for member in UNCHECKED_METADATA},
        },
    ),
    # Other families: records whose facets this package leaves open.
    st.dictionaries(
        st.sampled_from(OTHER_FAMILIES), _capability_records(open_facets=True), max_size=2
    ),
).map(lambda parts: {**parts[1], **parts[0]})

# --- run events ---------------------------------------------------------------------------------

_error_objects = _obj(
    {"code": _text(1), "message": _text(1)},
    {"details": _json_objects, "retryable": st.booleans()},
)

_tool_called = _obj(
    {"agentId": author_ids, "toolName": _text(1), "callId": _text(1)},
    {
        "inputs": json_values(),
        "argsHash": st.text("0123456789abcdef", min_size=64, max_size=64) | _text(),
        "principal": _text(),
        "transport": st.sampled_from(["mcp", "http", "native"]),
        "causationHostId": _text(1),
    },
)

_tool_returned_base = _obj(
    {"agentId": author_ids, "toolName": _text(1), "callId": _text(1)},
    {"causationHostId": _text(1)},
)


@st.composite
def _tool_returned_payloads(draw: Draw) -> dict[str, Any]:
    payload = draw(_tool_returned_base)
    shape = draw(st.sampled_from(["success", "failure", "refusal", "bare"]))
    status: str | None = None
    if shape == "success":
        status = draw(st.sampled_from([None, "ok"]))
        if draw(st.booleans()):
            payload["outcome"] = draw(_opaque)
    elif shape == "failure":
        status = draw(st.sampled_from([None, "error"]))
        payload["error"] = draw(_error_objects)
    elif shape == "refusal":
        status = draw(st.sampled_from(["forbidden", "rate_limited"]))
        member = draw(st.sampled_from([None, "error", "outcome"]))
        if member == "error":
            payload["error"] = draw(_error_objects)
        elif member == "outcome":
            payload["outcome"] = draw(json_values())
    if status is not None:
        payload["status"] = status
    if status not in ("forbidden", "rate_limited") and draw(st.booleans()):
        payload["durationMs"] = draw(_integers(0))
    return payload


tool_returned_payloads = _tool_returned_payloads()
"""``agent.tool-returned`` payloads in each legal shape: a success (``outcome``), a failure
(``error``), a refusal (``forbidden``/``rate_limited``, no ``durationMs``), or neither."""

PAYLOADS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "run.started": _obj(
        {"workflowId": author_ids},
        {
            "inputs": _json_objects,
            "transport": st.sampled_from(["rest", "mcp", "a2a", "ui"]),
            "engineVersion": _integers(0),
            "owner": owners,
            "tags": st.lists(_text(), max_size=2),
            "metadata": _json_objects,
        },
    ),
    "run.completed": _obj({"outputs": _json_objects}, {"durationMs": _integers(0)}),
    "run.failed": _obj(
        {"error": _error_objects}, {"failedNodeId": author_ids, "durationMs": _integers(0)}
    ),
    "agent.tool-called": _tool_called,
    "agent.tool-returned": tool_returned_payloads,
    "eval.started": _obj(
        {
            "suiteId": _text(1),
            "suiteVersion": _text(1),
            "taskCount": _integers(0),
            "modes": st.lists(st.sampled_from(EVAL_MODES), unique=True),
        },
        {
            "baselineRunId": run_ids,
            "fixtureRuns": st.dictionaries(
                _word(LOWER + DIGITS, LOWER + DIGITS + "-"), run_ids, min_size=1, max_size=2
            ),
        },
    ),
    "eval.scored": _obj(
        {"taskId": _text(1), "score": _numbers(0, 1), "passed": st.booleans()},
        {
            "costUsd": _numbers(0),
            "latencyMs": _integers(0),
            "schemaValid": st.booleans(),
            "safetyFindingCount": _integers(0),
        },
    ),
    "eval.completed": _obj(
        {
            "aggregateScore": _numbers(0, 1),
            "passed": st.booleans(),
            "taskCount": _integers(0),
            "passedCount": _integers(0),
        },
        {"regressionVsBaseline": _numbers(-1, 1)},
    ),
}
"""The payload strategy of each event type the run-event schema checks."""

_segment = st.builds(
    str.__add__, _word(LOWER, LOWER + DIGITS, 5), st.sampled_from(["", "-x", "-a1", "-2"])
)
_RUN_EVENT = all_schemas()["events/run-event.schema.json"]
REGISTERED_EVENT_TYPES: tuple[str, ...] = tuple(_RUN_EVENT["$defs"]["RegisteredEventType"]["enum"])
REGISTERED_DOMAINS = frozenset(t.partition(".")[0] for t in REGISTERED_EVENT_TYPES)
_vendor_event_types = (
    st.lists(_segment, min_size=2, max_size=3)
    .filter(lambda parts: parts[0] != "openwop" and parts[0] not in REGISTERED_DOMAINS)
    .map(".".join)
)
_other_event_types = (
    st.sampled_from(REGISTERED_EVENT_TYPES).filter(lambda t: t not in PAYLOADS)
    | _vendor_event_types
    | st.just("toolcall-spec.eval.task-failed")
)

_envelopes = _obj(
    {
        "eventId": event_ids,
        "runId": run_ids,
        "schemaVersion": _integers(1),
        "sequence": _integers(0),
        "timestamp": timestamps,
    },
    {"nodeId": author_ids, "engineVersion": _integers(0), "causationId": event_ids},
)

_typed_payloads = st.one_of(
    *(st.tuples(st.just(name), payload) for name, payload in PAYLOADS.items()),
    st.tuples(_other_event_types, _json_objects),
)


def _event(envelope: dict[str, Any], typed: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {**envelope, "type": typed[0], "payload": typed[1]}


run_events = st.builds(_event, _envelopes, _typed_payloads)


def events_of_type(
    event_type: str, payloads: st.SearchStrategy[dict[str, Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    """Run events of one type whose payloads ``payloads`` draws (by default, the type's own)."""
    default = PAYLOADS.get(event_type, _json_objects)
    typed = st.tuples(st.just(event_type), default if payloads is None else payloads)
    return st.builds(_event, _envelopes, typed)


# --- eval summary, error envelope ---------------------------------------------------------------

_suite_ids = st.builds(
    "{}.evals.{}".format,
    st.text(LOWER + DIGITS + ".-", min_size=1, max_size=10),
    st.text(LOWER + DIGITS + "-", min_size=1, max_size=10),
)
_task_ids = _word(LOWER + DIGITS, LOWER + DIGITS + "-")
_MODEL_CLASSES = ("reasoning", "writing", "coding", "research", "classification", "general")

eval_summaries = _obj(
    {
        "suiteId": _suite_ids,
        "suiteVersion": _semver,
        "aggregateScore": _numbers(0, 1),
        "passed": st.booleans(),
        "taskCount": _integers(0),
        "passedCount": _integers(0),
        "tasks": st.lists(
            _obj(
                {"taskId": _task_ids, "score": _numbers(0, 1), "passed": st.booleans()},
                {
                    "costUsd": _numbers(0),
                    "latencyMs": _integers(0),
                    "schemaValid": st.booleans(),
                    "fixtureMissCount": _integers(0),
                    "safetyFindings": st.lists(
                        _obj(
                            {
                                "kind": _text(1),
                                "severity": st.sampled_from(["low", "medium", "high", "critical"]),
                            }
                        ),
                        max_size=2,
                    ),
                },
            ),
            max_size=2,
        ),
    },
    {
        "evaluatedModelClass": st.sampled_from(_MODEL_CLASSES),
        "totalCostUsd": _numbers(0),
        "fixtureMissCount": _integers(0),
        "pinnedNodeIds": st.lists(author_ids, max_size=2, unique=True),
        "regression": _obj(
            {"baselineRunId": run_ids, "scoreDelta": _numbers(-1, 1)}, {"diffRef": _text()}
        ),
    },
)

_code_names = _word(LOWER, LOWER + DIGITS + "_", 10)
_vendor_orgs = st.builds(
    str.__add__, _word(LOWER, LOWER + DIGITS, 6), st.sampled_from(["", "-x", "-ab1"])
).filter(lambda org: org != "openwop")
_ERROR_ENVELOPE = all_schemas()["events/error-envelope.schema.json"]
REGISTERED_ERROR_CODES: tuple[str, ...] = tuple(
    _ERROR_ENVELOPE["$defs"]["RegisteredErrorCode"]["enum"]
)
_error_codes = st.sampled_from(REGISTERED_ERROR_CODES) | st.builds(
    "{}.{}".format, _vendor_orgs, _code_names
)


def is_code_specific_details(details: dict[str, Any]) -> bool:
    """Details shaped like one of OpenWOP's code-specific details (see ErrorDetails)."""
    supported = details.get("supported")
    modes = ("values", "updates", "messages", "debug")
    if isinstance(supported, list) and supported and all(m in modes for m in supported):
        return True
    if isinstance(details.get("runStatus"), str):
        return True
    keys = details.get("keys")
    return (
        {"type", "keys"} <= details.keys() <= {"type", "keys", "eventId", "sequence"}
        and isinstance(details["type"], str)
        and isinstance(keys, list)
        and bool(keys)
        and all(isinstance(k, str) for k in keys)
    )


error_envelopes = _obj(
    {"error": _error_codes, "message": _text(1)},
    {
        "details": _obj({}, {"field": _text(1)}, open_values=json_values(1)).filter(
            lambda d: not is_code_specific_details(d)
        )
    },
)

# --- analytics ----------------------------------------------------------------------------------

_tool_call_base = _obj(
    {
        "event_id": uuids,
        "event_type": st.just("tool_call"),
        "trace_id": _text(1, 128),
        "session_id": _text(1, 128),
        "timestamp": timestamps,
        "source": st.sampled_from(["server", "widget"]),
    },
    {
        "event_name": _text(max_size=20),
        "metadata": _json_objects,
        "user_id": _text(),
        "platform": _text(),
        "sdk_version": _text(max_size=64),
        "workspace_id": _text(1),
        "project_id": _text(1),
        "ingested_at": timestamps,
        "latency_ms": _numbers(0),
        "is_retry": _integers(0, 1),
        "input_keys": _json_objects,
        "input_types": _json_objects,
        "input_values": _json_objects,
        "output_content": _json_objects,
        "intent_signals": _json_objects,
        "tokens_in": _integers(0),
        "tokens_out": _integers(0),
        "country_code": st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2),
        "locale": _text(max_size=35),
        "end_user_agent": _text(),
        "subject_id": _text(),
    },
)
_error_messages = _text(max_size=40) | st.just("m" * 500)


@st.composite
def _tool_call_events(draw: Draw) -> dict[str, Any]:
    event_doc = draw(_tool_call_base)
    status = draw(st.sampled_from([None, "success", "error"]))
    if status is not None:
        event_doc["status"] = status
    if status == "error":
        event_doc["error_category"] = draw(st.sampled_from(ERROR_CATEGORIES))
        if draw(st.booleans()):
            event_doc["error_message"] = draw(_error_messages)
    return event_doc


tool_call_events = _tool_call_events()
"""Analytics ``tool_call`` events: no status, a success, or an error that names a category (and
maybe a message of up to 500 characters, the limit itself included)."""

ingest_batches = _obj(
    {"events": st.lists(tool_call_events, min_size=1, max_size=2)},
    {"sdk_version": _text(max_size=64), "sent_at": timestamps},
)

ingest_answers = _obj(
    {
        "status": st.sampled_from([200, 207, 400, 413, 200.0, 413.0]),
        "accepted": _integers(0),
        "rejected": _integers(0),
        "errors": st.lists(
            _obj(
                {"index": _integers(0), "issues": st.lists(_text(1), min_size=1, max_size=2)},
                {"line": _integers(1)},
            ),
            max_size=2,
        ),
    },
    {
        "warnings": st.lists(_obj({"index": _integers(0), "message": _text(1)}), max_size=2),
        "error": _obj({"code": _text(1), "message": _text(1)}),
        "requestId": _text(1),
    },
)

_VALID: dict[Kind, st.SearchStrategy[Any]] = {
    "suite": suites,
    "capabilities": capabilities,
    "run-event": run_events,
    "eval-summary": eval_summaries,
    "error-envelope": error_envelopes,
    "call-tool-result": call_tool_results,
    "tool-call-event": tool_call_events,
    "ingest-batch": ingest_batches,
    "ingest-answer": ingest_answers,
}


def valid_documents(kind: Kind) -> st.SearchStrategy[Any]:
    """Documents the schema of ``kind`` accepts."""
    return _VALID[kind]


# --- near misses: generic mutations -------------------------------------------------------------


def _choice(draw: Draw, options: Sequence[T]) -> T:
    """One of ``options``: an index draw, cheaper than building ``sampled_from`` per draw."""
    return options[draw(st.integers(0, len(options) - 1))]


Path = tuple[str | int, ...]
Mutation = Callable[[Draw, Any], Any]
"""Takes a draw function and a valid document; returns it mutated (a copy), or ``None`` when the
mutation does not apply to that document."""


def _nodes(value: JSON, path: Path = ()) -> list[tuple[Path, JSON]]:
    """Every node of a JSON value with its path, the root first."""
    found = [(path, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_nodes(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_nodes(item, (*path, index)))
    return found


def _set(document: JSON, path: Path, value: JSON) -> JSON:
    """A copy of ``document`` with the node at ``path`` replaced (the root when empty)."""
    if not path:
        return value
    out = copy.deepcopy(document)
    parent = out
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return out


def _pick(draw: Draw, document: JSON, accept: Callable[[JSON], bool]) -> tuple[Path, JSON] | None:
    """A node that ``accept``s, its depth drawn first: the few shallow nodes (the document's own
    structure) are hit as often as the many deep ones (mostly opaque or open content)."""
    by_depth: dict[int, list[tuple[Path, JSON]]] = {}
    for path, value in _nodes(document):
        if accept(value):
            by_depth.setdefault(len(path), []).append((path, value))
    if not by_depth:
        return None
    return _choice(draw, by_depth[_choice(draw, sorted(by_depth))])


def _is_nonempty_object(value: JSON) -> bool:
    return isinstance(value, dict) and bool(value)


def _boolean_lookalike(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, lambda v: isinstance(v, bool))
    if picked is None:
        return None
    return _set(document, picked[0], _choice(draw, BOOLEAN_LOOKALIKES))


def _null_member(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, _is_nonempty_object)
    if picked is None:
        return None
    path, obj = picked
    return _set(document, (*path, _choice(draw, sorted(obj))), None)


def _drop_member(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, _is_nonempty_object)
    if picked is None:
        return None
    path, obj = picked
    key = _choice(draw, sorted(obj))
    return _set(document, path, {k: v for k, v in obj.items() if k != key})


def _extra_member(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, lambda v: isinstance(v, dict))
    if picked is None:
        return None
    path, obj = picked
    key = _choice(draw, ["extra", "isError ", "Status", "X-vendor", "x_vendor", "vendor"])
    return _set(document, path, {**obj, key: draw(json_values(1))})


_OTHER_TYPES: dict[type, tuple[JSON, ...]] = {
    str: (1, None, ["x"], ""),
    int: ("1", 1.5, True, -1),
    float: ("0.5", False, -1.0, 2.5),
    bool: ("false", 0, None),
    list: ({}, "[]", []),
    dict: ([], "{}", {"": None}),
}


def _wrong_type(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, lambda v: v is not None)
    if picked is None:
        return None
    path, value = picked
    return _set(document, path, _choice(draw, _OTHER_TYPES[type(value)]))


def _looks_formatted(value: JSON) -> bool:
    if not isinstance(value, str):
        return False
    is_uuid = len(value) == 36 and value.count("-") == 4
    is_timestamp = len(value) >= 20 and value[4:5] == "-" and value[10:11] in ("T", "t")
    return is_uuid or is_timestamp


def _broken_formats(value: str) -> list[str]:
    """Near-right shapes of a uuid or a date-time."""
    if value.count("-") == 4 and len(value) == 36:
        return [
            value.replace("-", ""),
            value[:-1],
            value + "0",
            "{" + value + "}",
            value[:-1] + "g",
        ]
    return [
        value[:19],  # no time zone
        value[:10],  # a date alone
        value[:10] + " " + value[11:],  # a space for the T
        value[:5] + "13" + value[7:],  # month 13
        value[:8] + "32" + value[10:],  # day 32
        value[:5] + "02-30" + value[10:],  # 30 February
        value[:5] + "04-31" + value[10:],  # 31 April
        value[:11] + "24" + value[13:],  # hour 24
        value[:17] + "61" + value[19:],  # second 61
        value[:19] + "+0100",  # an offset without its colon
    ]


def _bad_format(draw: Draw, document: JSON) -> JSON:
    picked = _pick(draw, document, _looks_formatted)
    if picked is None:
        return None
    path, value = picked
    return _set(document, path, _choice(draw, _broken_formats(value)))


GENERIC_MUTATIONS: dict[str, Mutation] = {
    "wrong-type": _wrong_type,
    "boolean-lookalike": _boolean_lookalike,
    "bad-format": _bad_format,
    "null-member": _null_member,
    "drop-member": _drop_member,
    "extra-member": _extra_member,
}
"""Mutations that apply to any kind; the member mutations and ``wrong-type`` apply to every
document of every kind (each is a non-empty object)."""

# --- near misses: mutations aimed at one kind's rules -------------------------------------------


def _entries_of(suite: JSON, draw: Draw) -> list[JSON]:
    """The fixture entries of one of the suite's tasks, created when the task has none."""
    task = _choice(draw, suite["tasks"])
    entries: list[JSON] = task.setdefault("fixtures", {}).setdefault("toolResponses", [])
    return entries


def _args_match_without_args(draw: Draw, suite: JSON) -> JSON:
    out = copy.deepcopy(suite)
    entry = {"tool": draw(_text(1)), "argsMatch": _choice(draw, ["exact", "subset"])}
    _entries_of(out, draw).append(entry)
    return out


def _entry_is_error_lookalike(draw: Draw, suite: JSON) -> JSON:
    out = copy.deepcopy(suite)
    entry = {"tool": draw(_text(1)), "isError": _choice(draw, BOOLEAN_LOOKALIKES)}
    _entries_of(out, draw).insert(0, entry)
    return out


def _record_lifetime_broken(draw: Draw, doc: JSON) -> JSON:
    family = _choice(draw, ["agents", "toolHooks", "memory"])
    record = {k: v for k, v in (doc.get(family) or {}).items() if k != "until"}
    record.setdefault("since", "2.0")
    record.setdefault("witness", "claims-check")
    if draw(st.booleans()):
        return {**doc, family: {**record, "status": "stable", "until": draw(_untils)}}
    return {**doc, family: {**record, "status": _choice(draw, ["experimental", "deprecated"])}}


def _family_not_a_record(draw: Draw, doc: JSON) -> JSON:
    name = _choice(draw, ["search", "memory", "X-acme", "openwop", "x-build", "vendor.acme"])
    return {**doc, name: draw(json_values(1))}


def _wrong_grammar(draw: Draw, doc: JSON) -> JSON:
    """A value just outside an OpenWOP grammar: a short opaque id, a bad minor, a reserved type."""
    bad = {
        "eventId": "e" * 15,
        "runId": "tenant-only",
        "agentId": "a b",
        "type": _choice(draw, ["openwop.x", "run.startd", "agent.toolCalled", "a.b.c.d"]),
        "since": "2",
        "until": "soon",
        "eventLogSchemaVersion": 1,
        "seamsProfile": "toolcall-spec.reference",
        "suiteId": "no-infix",
        "taskId": "Task",
        "error": _choice(draw, ["not_registered", "openwop.x"]),
    }
    picked = _pick(draw, doc, lambda v: isinstance(v, dict) and bool(set(v) & set(bad)))
    if picked is None:
        return None
    path, obj = picked
    key = _choice(draw, sorted(set(obj) & set(bad)))
    return _set(doc, (*path, key), bad[key])


def _tool_returned_event(event_doc: JSON, payload: JSON) -> JSON:
    return {**event_doc, "type": "agent.tool-returned", "payload": payload}


def _error_with_outcome(draw: Draw, event_doc: JSON) -> JSON:
    payload = dict(draw(tool_returned_payloads))
    payload.setdefault("error", draw(_error_objects))
    payload.setdefault("outcome", draw(json_values()))
    return _tool_returned_event(event_doc, payload)


def _status_contradicts_members(draw: Draw, event_doc: JSON) -> JSON:
    payload = {
        k: v for k, v in draw(tool_returned_payloads).items() if k not in ("error", "outcome")
    }
    case = _choice(draw, ["ok-with-error", "error-without-error", "refusal-with-duration"])
    if case == "ok-with-error":
        payload.update(status="ok", error=draw(_error_objects))
    elif case == "error-without-error":
        payload.update(status="error")
    else:
        status = _choice(draw, ["forbidden", "rate_limited"])
        payload.update(status=status, durationMs=draw(_integers(0)))
    return _tool_returned_event(event_doc, payload)


def _payload_of_another_type(draw: Draw, event_doc: JSON) -> JSON:
    others = sorted(name for name in PAYLOADS if name != event_doc["type"])
    return {**event_doc, "type": _choice(draw, others)}


def _without_error_fields(event_doc: JSON) -> JSON:
    return {k: v for k, v in event_doc.items() if k not in ("error_category", "error_message")}


def _category_on_success(draw: Draw, event_doc: JSON) -> JSON:
    out = _without_error_fields(event_doc)
    out["status"] = _choice(draw, ["success", None])
    if out["status"] is None:
        del out["status"]
    field = _choice(draw, ["error_category", "error_message"])
    return {**out, field: _choice(draw, ERROR_CATEGORIES)}


def _unknown_category(draw: Draw, event_doc: JSON) -> JSON:
    category = _choice(draw, ["tool-error", "TOOL_ERROR", "network", "", "rate-limit"])
    return {**event_doc, "status": "error", "error_category": category}


def _error_without_category(draw: Draw, event_doc: JSON) -> JSON:
    return {**_without_error_fields(event_doc), "status": "error"}


def _long_error_message(draw: Draw, event_doc: JSON) -> JSON:
    return {
        **event_doc,
        "status": "error",
        "error_category": _choice(draw, ERROR_CATEGORIES),
        "error_message": "m" * 501,
    }


def _event_near_miss(draw: Draw, batch: JSON) -> JSON:
    index = draw(st.integers(0, len(batch["events"]) - 1))
    events = list(batch["events"])
    events[index] = draw(near_misses_of("tool-call-event", events[index]))
    return {**batch, "events": events}


def _is_error_lookalike(draw: Draw, result: JSON) -> JSON:
    return {**result, "isError": _choice(draw, BOOLEAN_LOOKALIKES)}


def _resource_text_and_blob(draw: Draw, result: JSON) -> JSON:
    block = {"type": "resource", "resource": {"uri": "u", "text": draw(_text()), "blob": ""}}
    return {**result, "content": [*result["content"], block]}


TARGETED_MUTATIONS: dict[Kind, dict[str, Mutation]] = {
    "suite": {
        "args-match-without-args": _args_match_without_args,
        "entry-is-error-lookalike": _entry_is_error_lookalike,
    },
    "capabilities": {
        "record-lifetime-broken": _record_lifetime_broken,
        "family-not-a-record": _family_not_a_record,
        "wrong-grammar": _wrong_grammar,
    },
    "run-event": {
        "error-with-outcome": _error_with_outcome,
        "status-contradicts-members": _status_contradicts_members,
        "payload-of-another-type": _payload_of_another_type,
        "wrong-grammar": _wrong_grammar,
    },
    "eval-summary": {"wrong-grammar": _wrong_grammar},
    "error-envelope": {
        "reserved-vendor-org": lambda draw, doc: {
            **doc,
            "error": "openwop." + draw(_code_names),
        },
    },
    "call-tool-result": {
        "is-error-lookalike": _is_error_lookalike,
        "resource-text-and-blob": _resource_text_and_blob,
    },
    "tool-call-event": {
        "category-on-success": _category_on_success,
        "unknown-category": _unknown_category,
        "error-without-category": _error_without_category,
        "long-error-message": _long_error_message,
    },
    "ingest-batch": {
        "event-near-miss": _event_near_miss,
        "no-events": lambda draw, batch: {**batch, "events": []},
    },
    "ingest-answer": {
        "unknown-status": lambda draw, answer: {
            **answer,
            "status": _choice(draw, [201, 500, "200", 200.5]),
        },
    },
}
"""Mutations aimed at each kind's own rules; they apply to every valid document of the kind."""


@st.composite
def _mutated(draw: Draw, kind: Kind, document: JSON) -> JSON:
    targeted = TARGETED_MUTATIONS[kind]
    if len(targeted) > 0 and draw(st.booleans()):
        name = _choice(draw, list(targeted))
        aimed = targeted[name](draw, document)
        if aimed is not None:  # wrong-grammar needs a member it knows
            event(f"near miss: {name}")
            return aimed
    # Hypothesis favours the first options: the ones that break a document most often come first.
    name = _choice(draw, list(GENERIC_MUTATIONS))
    mutated = GENERIC_MUTATIONS[name](draw, document)
    if mutated is None:  # e.g. no boolean in the document: these apply to every document
        name = _choice(draw, ["wrong-type", "null-member", "drop-member", "extra-member"])
        mutated = GENERIC_MUTATIONS[name](draw, document)
    event(f"near miss: {name}")
    return mutated


def near_misses_of(kind: Kind, document: JSON) -> st.SearchStrategy[Any]:
    """One mutation of ``document``, a valid document of ``kind`` (left unchanged): half of the
    draws aim at the kind's own rules, the others are generic."""
    return _mutated(kind, document)


@cache
def near_miss(kind: Kind) -> st.SearchStrategy[Any]:
    """A near miss of a freshly drawn valid document of ``kind``; mostly invalid."""
    return valid_documents(kind).flatmap(lambda document: near_misses_of(kind, document))
