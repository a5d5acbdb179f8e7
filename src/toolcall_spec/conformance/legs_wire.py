"""Wire legs: what an OpenWOP client trips on (spec/wire.md). Run ids in paths and links, the run
snapshot's members and its silence about suite content, the run.started/run.completed bracket,
the closed ``eval.scored``, the RunOptions members, and the RFC 0251/0252 gates.

Each leg reads the wire facts from ``toolcall_spec.openwop_wire``, the module the server uses."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from toolcall_spec.capabilities import (
    BASELINE_SELECTION,
    FIXTURE_ERRORS,
    FIXTURE_MATCHING,
    RECORDED_FIXTURES,
    dotted,
)
from toolcall_spec.conformance.adapter import HostAdapter, RunRefusal, RunRequest
from toolcall_spec.conformance.leg import CompletedRun, Context, Gate, Leg
from toolcall_spec.conformance.legs_replay import C1
from toolcall_spec.conformance.outcomes import LegNotRunError, Outcome, Verdict, check, passed
from toolcall_spec.conformance.suites import LOOKUP, REFUND, entry, suite, task
from toolcall_spec.openwop_wire import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    POLL,
    RUN_COMPLETED,
    RUN_STARTED,
    SEAMS_EXTENSION,
    TERMINAL_EVENT_TYPES,
    VALIDATION_ERROR,
    percent_encoded,
    project_id,
    run_path,
)

SNAPSHOT_MEMBERS = frozenset(
    {
        "runId",
        "workflowId",
        "status",
        "compensationStatus",
        "owner",
        "currentNodeId",
        "startedAt",
        "completedAt",
        "agent",
        "runOrchestrator",
        "nodeStates",
        "variables",
        "channels",
        "error",
        "engineVersion",
        "eventLogSchemaVersion",
        "tags",
        "metadata",
        "configurable",
        "metrics",
        "parentRunId",
        "inputs",
        "extensions",
    }
)
"""The members of upstream's closed run snapshot (openwop-sdks schemas/v2/run-snapshot.schema.json
at 04b5b6a0)."""
SUBJECT_MEMBERS = ("issuer", "subjectId", "tenant", "lane", "kind")
EVAL_SCORED_MEMBERS = frozenset(
    {"taskId", "score", "passed", "costUsd", "latencyMs", "schemaValid", "safetyFindingCount"}
)
"""Upstream's closed ``evalScored`` payload (run-event-payloads.schema.json)."""

MARKED = "wire-marked-response"
"""The recorded response text of the wire legs' suite: it must never reach the wire."""


def wire_suite() -> dict[str, Any]:
    """One served call, one miss and a task that fails its golden match: content (a marked
    response, recorded arguments) that a snapshot must not quote, and a failure reason."""
    failing = task("fails", [(REFUND, C1)], [entry(REFUND, f"{MARKED}-refund")])
    failing["expected"]["match"]["value"] = [{"tool": LOOKUP}]
    return suite(
        "wire",
        [task("served", [(LOOKUP, C1), (REFUND, C1)], [entry(LOOKUP, MARKED)]), failing],
    )


def wire_run(ctx: Context, **options: Any) -> CompletedRun:
    return ctx.run_request(RunRequest(wire_suite(), ctx.agent_id, options=options))


# -- run ids ----------------------------------------------------------------------------------


def run_id_projection(adapter: HostAdapter, ctx: Context) -> Verdict:
    created = ctx.adapter.create_run(RunRequest(wire_suite(), ctx.agent_id))
    check(not isinstance(created, RunRefusal), "the host refused the wire suite")
    assert not isinstance(created, RunRefusal)
    probe = adapter.raw_get(run_path(created.run_id))
    if probe is None:  # by design, not a missing seam: in process there are no paths
        raise LegNotRunError(Verdict(Outcome.INAPPLICABLE, "in process there is no HTTP wire"))
    projected = project_id(created.run_id)
    for name, link in (created.links or {}).items():
        if name in ("statusUrl", "eventsUrl"):
            check(f"/runs/{projected}" in link, f"{name} {link!r} is not in projected form")
    check(bool(created.links), "the create answer carries no links")
    forms = {"projected": projected, "percent-encoded": percent_encoded(created.run_id)}
    for form, segment in forms.items():
        for resource in ("", f"/{POLL}"):
            answer = adapter.raw_get(f"/runs/{segment}{resource}")
            assert answer is not None
            check(answer.status == 200, f"GET /runs/{segment}{resource} answered {answer.status}")
            body = answer.body if isinstance(answer.body, Mapping) else {}
            check(body.get("runId") == created.run_id, f"the {form} path names another run")
    return passed("projected and percent-encoded ids name the run; links are projected")


# -- the snapshot -------------------------------------------------------------------------------


def snapshot_members(adapter: HostAdapter, ctx: Context) -> Verdict:
    run = wire_run(ctx)
    snapshot = adapter.snapshot(run.run_id)
    for member in ("runId", "workflowId", "status", "owner", "eventLogSchemaVersion"):
        check(member in snapshot, f"the snapshot has no {member}")
    check(snapshot["runId"] == run.run_id, "the snapshot names another run")
    era = snapshot["eventLogSchemaVersion"]
    check(type(era) is int and era >= 2, f"eventLogSchemaVersion is {era!r}, not an integer >= 2")
    owner = snapshot["owner"]
    subject = owner.get("subject") if isinstance(owner, Mapping) else None
    check(isinstance(owner, Mapping) and "tenant" in owner, "owner has no tenant")
    check(isinstance(subject, Mapping), "owner has no subject")
    assert isinstance(subject, Mapping)
    missing = [m for m in SUBJECT_MEMBERS if m not in subject]
    check(not missing, f"owner.subject lacks {missing}")
    extra = sorted(set(snapshot) - SNAPSHOT_MEMBERS)
    check(not extra, f"members upstream's closed snapshot does not have: {extra}")
    shown = {k: v for k, v in snapshot.items() if k != "extensions"}
    extensions = snapshot.get("extensions")
    if isinstance(extensions, Mapping):  # the test seams may quote content; nothing else may
        shown["extensions"] = {k: v for k, v in extensions.items() if k != SEAMS_EXTENSION}
    check(MARKED not in orjson.dumps(shown).decode(), "the snapshot quotes a recorded response")
    return passed("required members present, no others, no suite content")


# -- the log bracket ----------------------------------------------------------------------------


def run_bracket(adapter: HostAdapter, ctx: Context) -> Verdict:
    run = wire_run(ctx)
    types = [event.get("type") for event in run.events]
    check(bool(types) and types[0] == RUN_STARTED, f"the log starts with {types[:1]}")
    check(types[-1] == RUN_COMPLETED, f"the log ends with {types[-1:]}")
    terminal = [t for t in types if t in TERMINAL_EVENT_TYPES]
    check(terminal == [RUN_COMPLETED], f"terminal events {terminal}, expected one run.completed")
    check(types.count(EVAL_COMPLETED) == 1, "eval.completed does not appear exactly once")
    check(types[-2] == EVAL_COMPLETED, "eval.completed is not right before run.completed")
    started = run.payloads(RUN_STARTED)[0]
    owner = adapter.snapshot(run.run_id).get("owner")
    check(started.get("owner") == owner, "run.started does not echo the snapshot's owner")
    return passed("run.started (echoing the owner) first; eval.completed, run.completed last")


def eval_scored_closed(adapter: HostAdapter, ctx: Context) -> Verdict:
    run = wire_run(ctx)
    scored = run.payloads(EVAL_SCORED)
    check(len(scored) == 2, f"{len(scored)} eval.scored events for 2 tasks")
    check(any(p.get("passed") is False for p in scored), "no task failed: nothing to hide")
    for payload in scored:
        extra = sorted(set(payload) - EVAL_SCORED_MEMBERS)
        check(not extra, f"eval.scored for {payload.get('taskId')!r} carries {extra}")
    return passed("every eval.scored has upstream's members only, a failed task's too")


# -- RunOptions -------------------------------------------------------------------------------

TAGS = ["conformance", "wire"]
METADATA = {"build": 7, "nested": {"ok": True}}
CONFIGURABLE = {"version": 1, "run": {"recursionLimit": 5}}


def run_options(adapter: HostAdapter, ctx: Context) -> Verdict:
    run = wire_run(ctx, tags=TAGS, metadata=METADATA, configurable=CONFIGURABLE)
    snapshot = adapter.snapshot(run.run_id)
    for member, sent in (("tags", TAGS), ("metadata", METADATA), ("configurable", CONFIGURABLE)):
        check(snapshot.get(member) == sent, f"the snapshot's {member} is {snapshot.get(member)!r}")
    started = run.payloads(RUN_STARTED)
    check(bool(started), "the log has no run.started")
    for member, sent in (("tags", TAGS), ("metadata", METADATA)):
        check(started[0].get(member) == sent, f"run.started does not echo {member}")
    bad = {
        "configurable": {"run": {}},
        "tags": ["x" * 257],
        "metadata": ["not", "an", "object"],
    }
    for member, value in bad.items():
        refused = ctx.adapter.create_run(
            RunRequest(wire_suite(), ctx.agent_id, options={member: value})
        )
        expect_validation_error(refused, member, f"an invalid {member}")
    return passed("accepted and surfaced unchanged; invalid values refused naming the member")


def expect_validation_error(answer: Any, member: str, what: str) -> RunRefusal:
    """``answer`` is a ``400 validation_error`` whose ``details.field`` starts with ``member``."""
    check(isinstance(answer, RunRefusal), f"the host accepted {what}")
    assert isinstance(answer, RunRefusal)
    check(answer.status == 400, f"{what}: status {answer.status}, expected 400")
    check(answer.envelope.get("error") == VALIDATION_ERROR, f"{what}: not a validation_error")
    field = answer.field or ""
    check(field.startswith(member), f"{what}: details.field is {field!r}, expected {member}")
    return answer


# -- RFC 0251 ---------------------------------------------------------------------------------


def eval_modes_gated(adapter: HostAdapter, ctx: Context) -> Verdict:
    modes = ctx.modes()
    base = modes[0] if modes else "golden"
    a_suite = suite("modes", [task("one", [(LOOKUP, C1)], [entry(LOOKUP, "modes-ok")])])
    a_suite["modes"] = sorted({base, *modes} - {"live-shadow"} or {base})
    if not ctx.advertises(BASELINE_SELECTION):
        for member, request in (
            ("evalModes", RunRequest(a_suite, ctx.agent_id, modes=(base,))),
            ("baselineRunId", RunRequest(a_suite, ctx.agent_id, baseline_run_id="x/y")),
        ):
            expect_validation_error(ctx.adapter.create_run(request), member, f"{member} unasked")
        return passed(f"without {dotted(BASELINE_SELECTION)}: evalModes, baselineRunId refused")
    chosen = (a_suite["modes"][0],)
    run = ctx.run_request(RunRequest(a_suite, ctx.agent_id, modes=chosen))
    echoed = run.payloads(EVAL_STARTED)[0].get("modes")
    check(echoed == list(chosen), f"eval.started.modes is {echoed!r}, expected {list(chosen)}")
    undeclared = next(
        (m for m in ("regression", "rubric", "adversarial") if m not in a_suite["modes"]), "rubric"
    )
    for what, request, member in (
        ("an empty evalModes", RunRequest(a_suite, ctx.agent_id, modes=()), "evalModes"),
        (
            f"the undeclared mode {undeclared}",
            RunRequest(a_suite, ctx.agent_id, modes=(undeclared,)),
            "evalModes",
        ),
        (
            "a baseline without regression",
            RunRequest(a_suite, ctx.agent_id, modes=chosen, baseline_run_id=run.run_id),
            "baselineRunId",
        ),
    ):
        expect_validation_error(ctx.adapter.create_run(request), member, what)
    return passed("evalModes run and echoed; empty, undeclared and baseline misuse refused")


# -- RFC 0252 ---------------------------------------------------------------------------------

RECORDED = "recorded-task"


def recorded_calls(with_error: bool) -> list[tuple[str, dict[str, Any]]]:
    """The recording's calls: a failing then a succeeding lookup, or (on a host that does not
    serve recorded errors) the succeeding one alone."""
    return [(LOOKUP, C1)] * (2 if with_error else 1)


def recording_suite(with_error: bool) -> dict[str, Any]:
    entries = [entry(LOOKUP, "recorded-failure", is_error=True)] if with_error else []
    entries.append(entry(LOOKUP, "recorded-success"))
    return suite("recording", [task(RECORDED, recorded_calls(with_error), entries)])


def replayed_suite(with_error: bool = False) -> dict[str, Any]:
    """The same task without fixtures of its own, plus one call the recording never made."""
    calls = [*recorded_calls(with_error), (REFUND, C1)]
    return suite("replaying", [task(RECORDED, calls)])


def fixture_runs_gated(adapter: HostAdapter, ctx: Context) -> Verdict:
    if not ctx.advertises(RECORDED_FIXTURES):
        request = RunRequest(replayed_suite(), ctx.agent_id, fixture_runs={RECORDED: "x/y"})
        expect_validation_error(
            ctx.adapter.create_run(request), "fixtureRuns", "fixtureRuns unasked"
        )
        return passed(f"without {dotted(RECORDED_FIXTURES)}: fixtureRuns refused")
    if not ctx.advertises(FIXTURE_MATCHING):
        reason = f"recorded calls match on their arguments: needs {dotted(FIXTURE_MATCHING)}"
        return Verdict(Outcome.INAPPLICABLE, reason, missing=True)
    with_error = ctx.advertises(FIXTURE_ERRORS)
    source = ctx.run(recording_suite(with_error))
    mapping = {RECORDED: source.run_id}
    replaying = replayed_suite(with_error)
    run = ctx.run_request(RunRequest(replaying, ctx.agent_id, fixture_runs=mapping))
    returned = run.returned()
    calls = len(replaying["tasks"][0]["input"]["calls"])
    check(len(returned) == calls, f"{len(returned)} tool returns for {calls} calls")
    if with_error:
        check(
            "error" in returned[0] and "outcome" not in returned[0],
            "the recorded failure was not served as an error",
        )
    check("outcome" in returned[-2], "the recorded success was not served")
    check("error" in returned[-1], "the unrecorded call was not a miss error (onMiss fail)")
    misses = [
        t.get("fixtureMissCount") for t in run.summary.get("tasks", []) if isinstance(t, dict)
    ]
    check(misses == [1], f"per-task fixtureMissCount {misses}, expected [1]")
    echoed = run.payloads(EVAL_STARTED)[0].get("fixtureRuns")
    check(echoed == mapping, f"eval.started.fixtureRuns is {echoed!r}")
    for what, fixture_runs in (
        ("an empty fixtureRuns", {}),
        ("an unknown source run", {RECORDED: "local/" + "0" * 32}),
        ("a task the suite lacks", {"no-such-task": source.run_id}),
    ):
        request = RunRequest(replayed_suite(), ctx.agent_id, fixture_runs=fixture_runs)
        expect_validation_error(ctx.adapter.create_run(request), "fixtureRuns", what)
    served = "a recorded failure and success" if with_error else "a recorded success"
    return passed(f"{served} served, the new call a miss; misuse refused")


# -- the discovery document --------------------------------------------------------------------

VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
METADATA_MEMBERS = frozenset(
    {
        "protocolVersion",
        "protocolVersions",
        "preferredVersion",
        "extensions",
        "implementation",
        "engineVersion",
        "eventLogSchemaVersion",
        "configurable",
        "observability",
        "minClientVersion",
        "runtimeCapabilities",
        "testing",
        "conformance",
        "fixtures",
        "compliance",
        "signingKeys",
        "discovery",
    }
)
"""Root members of upstream's closed discovery document that are metadata, not capability
records (openwop-sdks schemas/v2/capabilities.schema.json at 0bfac076)."""
CONFORMANCE_MEMBERS = frozenset({"mockAgent", "certificationBundleUrl", "seamsProfile"})
SEAMS_PROFILE = "openwop-conformance-seams-v2"
RECORD_STATUSES = frozenset({"stable", "experimental", "deprecated"})
WITNESSES = frozenset(
    {
        "witnessable-unaided",
        "witnessable-gated",
        "seam-gated",
        "claims-check",
        "negative-existence",
    }
)


def discovery_problems(document: Mapping[str, Any]) -> list[str]:
    """What in ``document`` breaks upstream's rules for the discovery root and its records."""
    problems: list[str] = []
    versions = document.get("protocolVersions")
    if not (
        isinstance(versions, list) and versions and len(set(map(str, versions))) == len(versions)
    ):
        problems.append("protocolVersions: a non-empty list without repeats is required")
    elif not all(isinstance(v, str) and VERSION.match(v) for v in versions):
        problems.append("protocolVersions: every entry is <major>.<minor>")
    preferred = document.get("preferredVersion")
    if not (isinstance(preferred, str) and VERSION.match(preferred)):
        problems.append("preferredVersion: required, <major>.<minor>")
    era = document.get("eventLogSchemaVersion")
    if "eventLogSchemaVersion" in document and not (type(era) is int and era >= 2):
        problems.append(f"eventLogSchemaVersion: an integer >= 2, not {era!r}")
    problems += _conformance_problems(document.get("conformance"))
    for name, value in document.items():
        if name not in METADATA_MEMBERS:
            problems += [f"{name}: {p}" for p in _record_problems(value)]
    return problems


def _conformance_problems(block: Any) -> list[str]:
    if block is None:
        return []
    if not isinstance(block, Mapping):
        return ["conformance: an object"]
    problems = [
        f"conformance.{k}: not a member upstream lists"
        for k in block
        if k not in CONFORMANCE_MEMBERS
    ]
    if "seamsProfile" in block and block["seamsProfile"] != SEAMS_PROFILE:
        problems.append(f"conformance.seamsProfile: upstream's one value is {SEAMS_PROFILE!r}")
    return problems


def _record_problems(record: Any) -> list[str]:
    """A capability family record: ``status``, ``since``, ``witness``; ``until`` exactly when it
    is not ``stable``; no ``supported`` (the presence of the record is the claim)."""
    if not isinstance(record, Mapping):
        return ["neither metadata upstream lists nor a capability record"]
    problems: list[str] = []
    if record.get("status") not in RECORD_STATUSES:
        problems.append(f"status is {record.get('status')!r}")
    if not isinstance(record.get("since"), str):
        problems.append("since is required")
    if record.get("witness") not in WITNESSES:
        problems.append(f"witness is {record.get('witness')!r}")
    stable = record.get("status") == "stable"
    if stable and "until" in record:
        problems.append("a stable record has no until")
    if not stable and "until" not in record:
        problems.append(f"an {record.get('status')} record says until when it ends")
    if "supported" in record:
        problems.append("supported does not exist in v2")
    return problems


def discovery_valid(adapter: HostAdapter, ctx: Context) -> Verdict:
    problems = discovery_problems(ctx.capabilities)
    check(not problems, f"the discovery document breaks upstream's rules: {problems[:3]}")
    return passed("root, conformance block and every capability record keep upstream's rules")


DISCOVERY_LEG = Leg(
    "toolcall-spec.requirement.wire.discovery-valid",
    "the discovery document keeps upstream's root and capability record rules",
    discovery_valid,
)
"""Upstream's discovery rules checked from the document alone, so the leg holds any host to them."""


LEGS: tuple[Leg, ...] = (
    Leg(
        "toolcall-spec.requirement.wire.run-id-projection",
        "run paths take projected and percent-encoded ids; links are projected",
        run_id_projection,
        Gate(seams=("HTTP wire",)),  # in process the leg is inapplicable
    ),
    Leg(
        "toolcall-spec.requirement.wire.snapshot-members",
        "the snapshot has runs.md's required members, no others, and no suite content",
        snapshot_members,
    ),
    Leg(
        "toolcall-spec.requirement.wire.run-bracket",
        "run.started first echoing the owner; eval.completed once, then run.completed last",
        run_bracket,
    ),
    Leg(
        "toolcall-spec.requirement.wire.eval-scored-closed",
        "eval.scored carries upstream's members only",
        eval_scored_closed,
    ),
    Leg(
        "toolcall-spec.requirement.wire.run-options",
        "configurable, tags, metadata accepted and surfaced; invalid ones refused",
        run_options,
    ),
    Leg(
        "openwop.requirement.0251.eval-modes-gated",
        "evalModes and baselineRunId only with baselineSelection; checked when advertised",
        eval_modes_gated,
    ),
    Leg(
        "openwop.requirement.0252.fixture-runs-gated",
        "fixtureRuns only with recordedFixtures; recorded calls served under onMiss fail",
        fixture_runs_gated,
    ),
    DISCOVERY_LEG,
)
