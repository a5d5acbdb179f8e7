"""Near misses: generic mutations, and mutations aimed at one kind's rules."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from hypothesis import event
from hypothesis import strategies as st

from support.strategies.capabilities import untils
from support.strategies.events import PAYLOADS, code_names, error_objects, tool_returned_payloads
from support.strategies.valid import valid_documents
from support.strategies.values import (
    BOOLEAN_LOOKALIKES,
    ERROR_CATEGORIES,
    JSON,
    Draw,
    T,
    free_text,
    json_integers,
    json_values,
)
from toolcall_spec.catalog import Kind

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
    entry = {"tool": draw(free_text(1)), "argsMatch": _choice(draw, ["exact", "subset"])}
    _entries_of(out, draw).append(entry)
    return out


def _entry_is_error_lookalike(draw: Draw, suite: JSON) -> JSON:
    out = copy.deepcopy(suite)
    entry = {"tool": draw(free_text(1)), "isError": _choice(draw, BOOLEAN_LOOKALIKES)}
    _entries_of(out, draw).insert(0, entry)
    return out


def _record_lifetime_broken(draw: Draw, doc: JSON) -> JSON:
    family = _choice(draw, ["agents", "toolHooks", "memory"])
    record = {k: v for k, v in (doc.get(family) or {}).items() if k != "until"}
    record.setdefault("since", "2.0")
    record.setdefault("witness", "claims-check")
    if draw(st.booleans()):
        return {**doc, family: {**record, "status": "stable", "until": draw(untils)}}
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
    payload.setdefault("error", draw(error_objects))
    payload.setdefault("outcome", draw(json_values()))
    return _tool_returned_event(event_doc, payload)


def _status_contradicts_members(draw: Draw, event_doc: JSON) -> JSON:
    payload = {
        k: v for k, v in draw(tool_returned_payloads).items() if k not in ("error", "outcome")
    }
    case = _choice(draw, ["ok-with-error", "error-without-error", "refusal-with-duration"])
    if case == "ok-with-error":
        payload.update(status="ok", error=draw(error_objects))
    elif case == "error-without-error":
        payload.update(status="error")
    else:
        status = _choice(draw, ["forbidden", "rate_limited"])
        payload.update(status=status, durationMs=draw(json_integers(0)))
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
    block = {"type": "resource", "resource": {"uri": "u", "text": draw(free_text()), "blob": ""}}
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
            "error": "openwop." + draw(code_names),
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
