"""This package's schemas held against OpenWOP v2's published rules (the facts transcribed in
tests/data/upstream/openwop-v2-rules.json, each with its source file and commit), both ways:

- nothing this package accepts is refused by OpenWOP v2, except through a listed addition
  (RFC 0244, 0245, 0251, 0252 members) or a member this package leaves uninterpreted;
- nothing OpenWOP v2 accepts is refused here, except by a listed rule of this package that is
  deliberately stricter (each named by its requirement id).

Both directions run on generated documents: this package's strategies (valid documents and near
misses) for the first, documents generated from the upstream facts for the second.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.checks import fast, schema_copy
from support.repo import REPO
from support.search import found
from support.strategies import near_misses_of, valid_documents
from support.upstream_rules import (
    FACTS,
    KINDS,
    OBJECTS,
    addition_members,
    upstream_accepts,
    upstream_documents,
    without_uninterpreted,
)

from toolcall_spec import validate
from toolcall_spec.catalog import Kind, is_kind
from toolcall_spec.loading import read_json_file as load_json_file
from toolcall_spec.validation import structure_problems

OPENWOP_KINDS: list[Kind] = [kind for kind in KINDS if is_kind(kind)]
PROPERTY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def accepted_here(kind: Kind, document: Any) -> bool:
    return not any(p.severity == "error" for p in validate(document, kind))


# --- the deliberately stricter rules of this package --------------------------------------------


def stricter_rules_refusing(kind: str, document: Any) -> list[str]:
    """The requirement ids of this package's deliberately stricter rules that ``document``
    breaks (spec/run-events.md lists them with their reasons; spec/limits.md the limits every
    reader applies, whatever the kind)."""
    limits = [
        "toolcall-spec.requirement.input.integer-range"
        if problem.message.startswith("integer")
        else "toolcall-spec.requirement.input.max-depth"
        for problem in structure_problems(document)
    ]
    if limits:
        return limits
    if kind != "run-event" or not isinstance(document, dict):
        return []
    payload = document.get("payload")
    if not isinstance(payload, dict):
        return ["toolcall-spec.requirement.events.payload-object"]
    if document.get("type") != "agent.tool-returned":
        return []
    broken = []
    if "error" in payload and "outcome" in payload:
        broken.append("toolcall-spec.requirement.events.error-outcome-exclusive")
    status = payload.get("status")
    if (
        (status == "ok" and "error" in payload)
        or (status == "error" and "error" not in payload)
        or (status in ("forbidden", "rate_limited") and "durationMs" in payload)
    ):
        broken.append("toolcall-spec.requirement.events.status-agrees")
    return broken


# --- the facts ------------------------------------------------------------------------------------


def test_every_fact_names_its_source() -> None:
    commits = [f["commit"] for f in FACTS["sources"]["files"]]
    assert sum(bool(re.fullmatch("[0-9a-f]{40}", c)) for c in commits) >= 8
    assert all(obj.get("source") for obj in OBJECTS.values())
    assert all(a.get("source") for a in FACTS["additions"]["members"])


@pytest.mark.parametrize(
    ("kind", "document"),
    [
        ("run-event", {"type": "openwop.custom"}),
        ("run-event", {"type": "run.startd"}),
        ("run-event", {"type": "agent.toolCalled"}),
        ("run-event", {"eventId": "e" * 15}),
        ("run-event", {"runId": "tenant-only"}),
        ("run-event", {"x-trace": 1}),
        ("run-event", {"type": "run.completed", "payload": {"durationMs": 1}}),
        ("error-envelope", {"error": "not_registered"}),
        ("error-envelope", {"details": {"runStatus": "running"}}),
        ("eval-summary", {"suiteId": "no-infix"}),
        (
            "capabilities",
            {"search": {"status": "stable", "since": "2.0", "witness": "claims-check"}},
        ),
        (
            "capabilities",
            {"toolHooks": {"status": "experimental", "since": "2.0", "witness": "claims-check"}},
        ),
        ("capabilities", {"eventLogSchemaVersion": 1}),
        ("capabilities", {"conformance": {"seamsProfile": "toolcall-spec.reference"}}),
    ],
    ids=repr,
)
@pytest.mark.requirement("toolcall-spec.requirement.schemas.upstream-strictness")
def test_both_refuse_what_upstream_refuses(kind: Kind, document: dict[str, Any]) -> None:
    # The upstream validator built from the facts is not blind (each case is refused upstream),
    # and this package refuses the same documents.
    base = copy.deepcopy(BASES[kind])
    base.update(document)
    assert upstream_accepts(kind, BASES[kind], with_additions=True)
    assert not upstream_accepts(kind, base, with_additions=True)
    assert not accepted_here(kind, base)


BASES: dict[str, dict[str, Any]] = {
    "run-event": {
        "eventId": "run-000000000001-0000",
        "runId": "acme/run-000000000001",
        "schemaVersion": 1,
        "sequence": 0,
        "timestamp": "2026-11-30T12:00:00.000Z",
        "type": "run.completed",
        "payload": {"outputs": {}},
    },
    "error-envelope": {"error": "validation_error", "message": "m", "details": {"field": "f"}},
    "eval-summary": {
        "suiteId": "core.openwop.evals.billing",
        "suiteVersion": "1.0.0",
        "aggregateScore": 1,
        "passed": True,
        "taskCount": 0,
        "passedCount": 0,
        "tasks": [],
    },
    "capabilities": load_json_file(REPO / "examples/capabilities/host-without-fixture-errors.json"),
}
for _name, _value in list(BASES["capabilities"]["agents"]["evalSuite"].items()):
    if ("EvalSuite", _name) in addition_members():
        del BASES["capabilities"]["agents"]["evalSuite"][_name]


# --- item 7: the reference host's discovery document ---------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.capabilities.upstream-root")
@pytest.mark.requirement("toolcall-spec.requirement.capabilities.event-log-era")
def test_the_reference_discovery_document_is_upstream_valid_but_for_the_additions() -> None:
    document = load_json_file(REPO / "examples/capabilities/reference-host.json")
    assert accepted_here("capabilities", document)
    assert upstream_accepts("capabilities", document, with_additions=True)
    # The evalSuite members RFC 0244/0245/0251/0252 add are the only difference.
    eval_suite = document["agents"]["evalSuite"]
    added = {m for o, m in addition_members() if o == "EvalSuite"}
    assert {"fixtureMatching", "fixtureErrors", "baselineSelection", "recordedFixtures"} <= set(
        eval_suite
    )
    assert not upstream_accepts("capabilities", document)
    document["agents"]["evalSuite"] = {k: v for k, v in eval_suite.items() if k not in added}
    assert upstream_accepts("capabilities", document)
    assert document["eventLogSchemaVersion"] == 3
    # conformance.seamsProfile claims that upstream's /conformance/seams/ space is served (RFC 0168
    # §C.1); this host serves its own test seams instead, so it makes no such claim.
    assert "seamsProfile" not in document.get("conformance", {})


def test_every_valid_example_is_valid_under_the_upstream_rules() -> None:
    index = load_json_file(REPO / "examples/index.json")["examples"]
    checked = 0
    for example in index:
        kind = example["kind"]
        if kind not in KINDS or not example["valid"]:
            continue
        path = REPO / "examples" / example["file"]
        documents = (
            [load_json_file(path)]
            if path.suffix == ".json"
            else [json.loads(line) for line in path.read_text().splitlines()]
        )
        for document in documents:
            assert upstream_accepts(kind, without_uninterpreted(kind, document), True), path
            checked += 1
    assert checked >= 8


# --- both ways, on generated documents ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.requirement("toolcall-spec.requirement.schemas.upstream-strictness")
@pytest.mark.requirement("toolcall-spec.requirement.events.upstream-ids")
@pytest.mark.requirement("toolcall-spec.requirement.events.type-registered-or-vendor")
@pytest.mark.requirement("toolcall-spec.requirement.events.closed-payloads")
@pytest.mark.requirement("toolcall-spec.requirement.events.error-code-registered-or-vendor")
@pytest.mark.parametrize("kind", OPENWOP_KINDS)
@PROPERTY
@given(data=st.data())
def test_nothing_accepted_here_is_refused_upstream(kind: Kind, data: st.DataObject) -> None:
    document = data.draw(valid_documents(kind), label="document")
    if data.draw(st.booleans(), label="mutate"):
        document = data.draw(near_misses_of(kind, document), label="near miss")
    if accepted_here(kind, document):
        put = without_uninterpreted(kind, document)
        assert upstream_accepts(kind, put, with_additions=True), "accepted here, refused upstream"


@pytest.mark.slow
@pytest.mark.requirement("toolcall-spec.requirement.schemas.upstream-strictness")
@pytest.mark.parametrize("kind", OPENWOP_KINDS)
@PROPERTY
@given(data=st.data())
def test_what_upstream_accepts_is_accepted_here(kind: Kind, data: st.DataObject) -> None:
    """Slow on purpose (over 10 s): each example is generated from and judged by upstream's
    published schemas."""
    document = data.draw(upstream_documents(kind), label="upstream-valid document")
    if accepted_here(kind, document):
        return
    assert stricter_rules_refusing(kind, document), "refused here, with no listed stricter rule"


@pytest.mark.requirement("toolcall-spec.requirement.events.status-agrees")
@pytest.mark.requirement("toolcall-spec.requirement.events.payload-object")
@pytest.mark.parametrize(
    "payload",
    [
        {
            "agentId": "a",
            "toolName": "t",
            "callId": "c",
            "status": "ok",
            "error": {"code": "c", "message": "m"},
        },
        {"agentId": "a", "toolName": "t", "callId": "c", "status": "error"},
        {"agentId": "a", "toolName": "t", "callId": "c", "status": "forbidden", "durationMs": 0},
        [1],
    ],
    ids=["ok-with-error", "error-without-error", "forbidden-with-duration", "array-payload"],
)
def test_the_listed_stricter_rules_are_the_differences(payload: Any) -> None:
    # Upstream accepts each of these; this package refuses it, by the rule named.
    document = {**BASES["run-event"], "type": "agent.tool-returned", "payload": payload}
    if isinstance(payload, list):
        document["type"] = "node.started"
    assert upstream_accepts("run-event", document)
    assert not accepted_here("run-event", document)
    assert stricter_rules_refusing("run-event", document)


# --- the properties can fail --------------------------------------------------------------------


def _found(condition: Any, strategy: st.SearchStrategy[Any]) -> Any:
    # 5,000: the searches below took 22 to 509 calls depending on the worker (support.search
    # says why), and CI once ran out at 1,000. A found counterexample ends the search early.
    return found(strategy, condition, max_examples=5000)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "plant", "kind"),
    [
        (
            "common/ids.schema.json",
            lambda s: s["$defs"]["EventId"].update(pattern="^.+$"),
            "run-event",
        ),
        (
            "events/run-event.schema.json",
            lambda s: s["$defs"]["VendorEventType"].update(pattern="^[a-z.-]+$"),
            "run-event",
        ),
        (
            "capabilities/discovery.schema.json",
            lambda s: s.update(additionalProperties=True),
            "capabilities",
        ),
    ],
    ids=["loose-event-id", "loose-vendor-type", "open-discovery-root"],
)
def test_a_planted_looseness_is_found_upstream_refuses_it(
    path: str, plant: Any, kind: Kind
) -> None:
    """Slow on purpose (over 10 s): a search for the planted looseness's counterexample, each
    candidate judged by upstream's published schemas."""
    planted = schema_copy(path)
    plant(planted)
    accepts = fast(kind, {path: planted})
    document = _found(
        lambda d: accepts(d) and not upstream_accepts(kind, without_uninterpreted(kind, d), True),
        st.one_of(
            valid_documents(kind), valid_documents(kind).flatmap(lambda d: near_misses_of(kind, d))
        ),
    )
    assert accepts(document)


@pytest.mark.slow
def test_a_planted_strictness_is_found_upstream_accepts_it() -> None:
    """Slow on purpose (over 10 s): a search for the planted strictness's counterexample, each
    candidate judged by upstream's published schemas."""
    path = "events/run-event-payloads.schema.json"
    planted = schema_copy(path)
    planted["$defs"]["AgentToolCalled"]["properties"]["principal"]["minLength"] = 1
    accepts = fast("run-event", {path: planted})
    document = _found(
        lambda d: not accepts(d) and not stricter_rules_refusing("run-event", d),
        upstream_documents("run-event", event_type="agent.tool-called"),
    )
    assert document["payload"]["principal"] == ""
