"""An "upstream rules" validator and document generator, built from the validation facts of the
OpenWOP v2 published schemas transcribed in tests/data/upstream/openwop-v2-rules.json (each fact
with its source file and commit there). Nothing of upstream is vendored: the facts are a small
rule language (objects with required and closed member lists; members with a type, grammar, enum,
bounds), and this module turns them into

- a draft 2020-12 JSON Schema per document kind, checked by the pure-Python ``jsonschema``
  (``upstream_validator``), with or without the members this package adds (the facts'
  ``additions``), and
- a Hypothesis strategy of documents those rules accept (``upstream_documents``).

Members the facts mark ``uninterpreted`` (discovery metadata and facets this package leaves
unchecked) are never generated, and ``without_uninterpreted`` removes them before a document
of this package is put to the upstream rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from support.repo import REPO
from support.strategies import json_values, timestamps

Rule = dict[str, Any]
FACTS: dict[str, Any] = json.loads(
    (REPO / "tests/data/upstream/openwop-v2-rules.json").read_text(encoding="utf-8")
)
OBJECTS: dict[str, Any] = FACTS["objects"]
ENUMS: dict[str, list[str]] = {**FACTS["enums"], **FACTS["additions"]["enums"]}
KINDS: dict[str, str] = FACTS["kinds"]
"""Each document kind of this package that OpenWOP v2 speaks about, and its root object."""
RECORD_MEMBERS = ("status", "since", "until", "witness")


# --- the rules as JSON Schema -------------------------------------------------------------------


def ecma(pattern: str) -> str:
    """A pattern read as JSON Schema reads it (ECMA-262), for Python's ``re``: ``\\d`` is an
    ASCII digit there, not any Unicode digit."""
    return pattern.replace("\\d", "[0-9]")


def _schema(rule: Rule) -> dict[str, Any]:
    """One member rule as JSON Schema."""
    if "object" in rule:
        return {"$ref": f"#/$defs/{rule['object']}"}
    if "anyOf" in rule or "oneOf" in rule:
        word = "anyOf" if "anyOf" in rule else "oneOf"
        return {word: [_schema(part) for part in rule[word]]}
    if "const" in rule:
        return {"const": rule["const"]}
    kind = rule["type"]
    if kind == "any":
        return {}
    if kind == "object":
        return _inline_object(rule)
    schema: dict[str, Any] = {"type": kind}
    for fact, keyword in (
        ("minLength", "minLength"),
        ("maxLength", "maxLength"),
        ("min", "minimum"),
        ("max", "maximum"),
        ("minItems", "minItems"),
        ("format", "format"),
    ):
        if fact in rule:
            schema[keyword] = rule[fact]
    if "grammar" in rule:
        schema["pattern"] = ecma(FACTS["grammars"][rule["grammar"]])
    if "enum" in rule:
        schema["enum"] = ENUMS[rule["enum"]]
    if "items" in rule:
        schema["items"] = _schema(rule["items"])
    if rule.get("unique"):
        schema["uniqueItems"] = True
    return schema


def _inline_object(rule: Rule) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _schema(member) for name, member in rule["members"].items()},
        "additionalProperties": not rule.get("closed", False),
    }
    if "keys" in rule:
        schema["patternProperties"] = {
            ecma(FACTS["grammars"][rule["keys"]]): _schema(rule["values"])
        }
    if "minMembers" in rule:
        schema["minProperties"] = rule["minMembers"]
    return schema


_CONDITIONS: dict[str, list[dict[str, Any]]] = {
    "anonymousKindIffAnonymousLane": [
        {
            "if": {"properties": {"kind": {"const": "anonymous"}}},
            "then": {"properties": {"lane": {"const": "anonymous"}}},
        },
        {
            "if": {"properties": {"lane": {"const": "anonymous"}}},
            "then": {"properties": {"kind": {"const": "anonymous"}}},
        },
    ],
    "keyClassIffSamlOrScim": [
        {
            "if": {"properties": {"lane": {"enum": ["saml", "scim"]}}},
            "then": {"required": ["keyClass"]},
            "else": {"not": {"required": ["keyClass"]}},
        }
    ],
    "untilOnlyWhenNotStable": [
        {
            "if": {"properties": {"status": {"const": "stable"}}},
            "then": {"not": {"required": ["until"]}},
        },
        {
            "if": {"properties": {"status": {"enum": ["experimental", "deprecated"]}}},
            "then": {"required": ["until"]},
        },
    ],
}
"""The cross-member rules the facts name, as OpenWOP v2 writes them (no ``required`` in ``if``)."""


def _additions(name: str) -> dict[str, Rule]:
    return {a["member"]: a["rule"] for a in FACTS["additions"]["members"] if a["object"] == name}


def _object(name: str, with_additions: bool) -> dict[str, Any]:
    facts = OBJECTS[name]
    members = dict(facts["members"])
    if with_additions:
        members.update(_additions(name))
    schema: dict[str, Any] = {
        "type": "object",
        "required": facts["required"],
        "properties": {member: _schema(rule) for member, rule in members.items()},
        "additionalProperties": not facts["closed"],
    }
    conditions = [c for rule in facts.get("rules", []) for c in _CONDITIONS[rule]]
    if name == "RunEvent":
        conditions += [
            {
                "if": {"properties": {"type": {"const": event_type}}, "required": ["type"]},
                "then": {"properties": {"payload": {"$ref": f"#/$defs/{payload}"}}},
            }
            for event_type, payload in FACTS["payloadOfType"].items()
        ]
    if conditions:
        schema["allOf"] = conditions
    return schema


@cache
def upstream_schema(kind: str, with_additions: bool = False) -> dict[str, Any]:
    """The upstream rules for ``kind`` as one self-contained JSON Schema."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": f"#/$defs/{KINDS[kind]}",
        "$defs": {name: _object(name, with_additions) for name in OBJECTS},
    }


@cache
def upstream_validator(kind: str, with_additions: bool = False) -> Draft202012Validator:
    return Draft202012Validator(
        upstream_schema(kind, with_additions), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def upstream_accepts(kind: str, document: Any, with_additions: bool = False) -> bool:
    return bool(upstream_validator(kind, with_additions).is_valid(document))


# --- members this package leaves unchecked ------------------------------------------------------


def without_uninterpreted(kind: str, document: Any) -> Any:
    """``document`` without the members the facts mark ``uninterpreted`` (this package does not
    check them: discovery metadata it does not read, facets of families it does not interpret)."""
    if kind != "capabilities" or not isinstance(document, dict):
        return document
    out: dict[str, Any] = {}
    for name, value in document.items():
        rule = OBJECTS["Discovery"]["members"].get(name, {})
        if rule.get("uninterpreted") and rule.get("object") == "Record":
            out[name] = _record_core(value)
        elif not rule.get("uninterpreted"):
            out[name] = value
    agents = out.get("agents")
    if isinstance(agents, dict):
        facets = OBJECTS["AgentsFamily"]["members"]
        out["agents"] = {
            k: v for k, v in agents.items() if not facets.get(k, {}).get("uninterpreted")
        }
    return out


def _record_core(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if k in RECORD_MEMBERS}


def addition_members() -> list[tuple[str, str]]:
    """``(object, member)`` of every listed addition."""
    return [(a["object"], a["member"]) for a in FACTS["additions"]["members"]]


# --- documents the upstream rules accept --------------------------------------------------------

_SAFE = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_NO_SPACE_ALPHABET = _SAFE + "._~-:@|+=!"
"""For grammars built on ``\\S``: ASCII only, where every regex engine agrees on what a space is."""


def _without_lookaheads(pattern: str) -> str:
    """``pattern`` with its ``(?!...)`` groups removed (Hypothesis cannot generate from them);
    the full pattern filters the draws."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("(?!", i):
            depth, i = 1, i + 3
            while depth:
                depth += {"(": 1, ")": -1}.get(pattern[i], 0) if pattern[i - 1] != "\\" else 0
                i += 1
            continue
        out.append(pattern[i])
        i += 1
    return "".join(out)


@cache
def _grammar(name: str) -> st.SearchStrategy[str]:
    pattern = FACTS["grammars"][name]
    if "\\s" in pattern or "\\S" in pattern:
        size = (1, 256) if name == "subjectId" else (1, 24)
        alphabet = _NO_SPACE_ALPHABET.replace("/", "")
        return st.text(alphabet, min_size=size[0], max_size=min(size[1], 24))
    full = re.compile(ecma(pattern))
    return st.from_regex(_without_lookaheads(pattern), fullmatch=True).filter(
        lambda s: full.fullmatch(s) is not None and "\n" not in s
    )


def _strategy(rule: Rule) -> st.SearchStrategy[Any]:
    if "object" in rule:
        return _object_documents(rule["object"])
    alternatives: list[Rule] = rule.get("anyOf") or rule.get("oneOf") or []
    if alternatives:
        return st.one_of([_strategy(part) for part in alternatives])
    if "const" in rule:
        return st.just(rule["const"])
    kind = rule["type"]
    maker: Callable[[Rule], st.SearchStrategy[Any]] = _MAKERS[kind]
    return maker(rule)


def _strings(rule: Rule) -> st.SearchStrategy[str]:
    if "grammar" in rule:
        return _grammar(rule["grammar"])
    if "enum" in rule:
        return st.sampled_from(ENUMS[rule["enum"]])
    if rule.get("format") == "date-time":
        return timestamps
    if rule.get("format") == "uri":
        return st.just("https://example.com/x")
    return st.text(_SAFE + " ", min_size=rule.get("minLength", 0), max_size=8)


def _numbers(rule: Rule) -> st.SearchStrategy[Any]:
    low, high = rule.get("min"), rule.get("max")
    integers = st.integers(
        low if low is not None else -(2**40), high if high is not None else 2**40
    )
    if rule["type"] == "integer":
        return integers
    floats = st.floats(low, high, allow_nan=False, allow_infinity=False)
    return integers | floats


def _arrays(rule: Rule) -> st.SearchStrategy[list[Any]]:
    items = _strategy(rule["items"])
    unique = bool(rule.get("unique"))
    key = (lambda v: json.dumps(v, sort_keys=True)) if unique else None
    return st.lists(items, min_size=rule.get("minItems", 0), max_size=3, unique_by=key)


def _inline_objects(rule: Rule) -> st.SearchStrategy[dict[str, Any]]:
    if "keys" in rule:
        return st.dictionaries(
            _grammar(rule["keys"]),
            _strategy(rule["values"]),
            min_size=rule.get("minMembers", 0),
            max_size=2,
        )
    return st.dictionaries(st.text(_SAFE, max_size=6), json_values(1), max_size=2)


_MAKERS: dict[str, Callable[[Rule], st.SearchStrategy[Any]]] = {
    "string": _strings,
    "integer": _numbers,
    "number": _numbers,
    "boolean": lambda rule: st.booleans(),
    "any": lambda rule: json_values(),
    "array": _arrays,
    "object": _inline_objects,
}


def _deferred(rule: Rule) -> st.SearchStrategy[Any]:
    """``rule``'s strategy, built when first drawn: the subject's actor chain refers onwards."""
    return st.deferred(lambda: _strategy(rule))


@cache
def _object_documents(name: str) -> st.SearchStrategy[dict[str, Any]]:
    facts = OBJECTS[name]
    members = {
        member: rule for member, rule in facts["members"].items() if not rule.get("uninterpreted")
    }
    required = {m: _deferred(members[m]) for m in facts["required"]}
    optional = {m: _deferred(rule) for m, rule in members.items() if m not in facts["required"]}
    documents = st.fixed_dictionaries(required, optional=optional)
    for rule in facts.get("rules", []):
        documents = documents.map(_FIXES[rule])
    return documents


def _anonymous_agrees(doc: dict[str, Any]) -> dict[str, Any]:
    if "anonymous" in (doc.get("kind"), doc.get("lane")):
        return {**doc, "kind": "anonymous", "lane": "anonymous"}
    return doc


def _key_class_agrees(doc: dict[str, Any]) -> dict[str, Any]:
    if doc.get("lane") in ("saml", "scim"):
        return {"keyClass": "opaque-idp", **doc}
    return {k: v for k, v in doc.items() if k != "keyClass"}


def _until_agrees(doc: dict[str, Any]) -> dict[str, Any]:
    if doc.get("status") == "stable":
        return {k: v for k, v in doc.items() if k != "until"}
    return {"until": "3.0", **doc}


_FIXES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "anonymousKindIffAnonymousLane": _anonymous_agrees,
    "keyClassIffSamlOrScim": _key_class_agrees,
    "untilOnlyWhenNotStable": _until_agrees,
}
"""Each cross-member rule, applied to a generated object so that it holds."""


@cache
def upstream_documents(kind: str, event_type: str | None = None) -> st.SearchStrategy[Any]:
    """Documents of ``kind`` the upstream rules (without this package's additions) accept. A run
    event's payload follows its type's payload rules when the facts have them; ``event_type``
    draws only run events of that type (a search for one payload's boundary then needs no luck
    among the 118 types)."""
    documents = _object_documents(KINDS[kind])
    if kind == "run-event":
        types = st.sampled_from(
            sorted(FACTS["payloadOfType"]) if event_type is None else [event_type]
        )
        typed = types.flatmap(
            lambda t: st.tuples(st.just(t), _object_documents(FACTS["payloadOfType"][t]))
        )
        tagged = st.tuples(documents, typed).map(
            lambda p: {**p[0], "type": p[1][0], "payload": p[1][1]}
        )
        documents = tagged if event_type is not None else st.one_of(documents, tagged)
    return documents.filter(lambda d: upstream_accepts(kind, d))
