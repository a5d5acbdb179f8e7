"""Mutant hosts: the reference host with exactly one behaviour broken, each paired with the leg
that must catch it. They prove the legs can fail: a leg that passes a mutant named for it is
vacuous. ``tests/conformance/test_conformance_mutants.py`` runs every one in process and
``tests/http/test_http_conformance.py`` every one over HTTP. Test code: no shipped command uses
them.

Each mutant overrides one method or attribute of ``ReferenceHost``; ``capabilities`` says what it
advertises when that matters (a host that accepts what it does not advertise must not advertise it).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolcall_spec.conformance.in_process import InProcessAdapter, restricted
from toolcall_spec.host import RunRecord
from toolcall_spec.host.reference import CallResult, ReferenceHost, TaskRun
from toolcall_spec.replay import refusal
from toolcall_spec.replay.fixtures import Served
from toolcall_spec.replay.refusal import RunRefused, RunRequest
from toolcall_spec.typed import AgentToolReturned


class ServesErrorAsSuccess(ReferenceHost):
    """Serves an ``isError: true`` entry like a success entry (RFC 0245's negative behaviour)."""

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        return self.serve_success_entry(task, served)


class AgentSeesSuccess(ReferenceHost):
    """Logs the served error correctly but hands the agent a success."""

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        return dataclasses.replace(super().serve_error_entry(task, served), is_error=False)


class OutcomeBesideError(ReferenceHost):
    """Records the recorded payload as ``outcome`` beside ``error``."""

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        payload = super().tool_returned(call_id, tool, result, duration_ms)
        if result.error is not None and result.entry_index is not None:
            payload["outcome"] = {"content": result.content}
        return payload


class CountsServedErrorAsMiss(ReferenceHost):
    """Adds a served error entry to ``fixtureMissCount``."""

    def counts_as_miss(self, result: CallResult) -> bool:
        return result.miss or (result.is_error and result.entry_index is not None)


class CallsLiveForError(ReferenceHost):
    """Calls the live tool for an error entry (then still answers with the error)."""

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        self.call_live(str(served.entry["tool"]), {})
        return super().serve_error_entry(task, served)


class IgnoresIsError(ReferenceHost):
    """Advertises ``fixtureErrors`` but never looks at an entry's ``isError``."""

    def resolve_call(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        if task.mode == "live-shadow":
            return self.call_live(tool, args)
        served = task.server.serve(tool, args)
        if isinstance(served, Served):
            return self.serve_success_entry(task, served)
        return self.answer_miss(task, tool, args)


def _without_check(check: refusal.Check) -> tuple[refusal.Check, ...]:
    return tuple(c for c in refusal.RUN_CREATE_CHECKS if c is not check)


class AcceptsUnadvertisedIsError(ReferenceHost):
    """Accepts an ``isError`` suite although it does not advertise ``fixtureErrors``."""

    refusal_checks: ClassVar[tuple[refusal.Check, ...]] = _without_check(
        refusal.check_fixture_errors
    )


class OmitsErrorStatus(ReferenceHost):
    """Advertises ``toolHooks.prePostEvents`` but leaves ``status`` off a failed call."""

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        payload = super().tool_returned(call_id, tool, result, duration_ms)
        if result.error is not None:
            payload.pop("status", None)
        return payload


class EchoesPayload(ReferenceHost):
    """Puts the recorded error payload into ``error.message``."""

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        result = super().serve_error_entry(task, served)
        text = str(served.response)
        return dataclasses.replace(result, error={"code": "vendor.tool_failed", "message": text})


class NeverConsumesEntries(ReferenceHost):
    """Serves the first matching entry every time, consumed or not."""

    def resolve_call(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        pristine = getattr(task, "pristine_server", None)
        if pristine is None:
            pristine = copy.deepcopy(task.server)
            setattr(task, "pristine_server", pristine)  # noqa: B010  (TaskRun has no such field)
        task.server = copy.deepcopy(pristine)  # a server that never consumed anything
        return super().resolve_call(task, tool, args)


class CoercesOneToTrue(ReferenceHost):
    """Reads the integer 1 in a call's arguments as ``true`` before matching (a lax JSON layer)."""

    def resolve_call(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        lax = {k: True if type(v) is int and v == 1 else v for k, v in args.items()}
        return super().resolve_call(task, tool, lax)


class LiveShadowServesFixtures(ReferenceHost):
    """Serves fixtures in ``live-shadow`` mode as in any other."""

    def resolve_call(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        if task.mode == "live-shadow":
            task.mode = "golden"
        return super().resolve_call(task, tool, args)


class AcceptsUnadvertisedArgs(ReferenceHost):
    """Accepts an ``args`` suite although it does not advertise ``fixtureMatching``."""

    refusal_checks: ClassVar[tuple[refusal.Check, ...]] = _without_check(
        refusal.check_fixture_matching
    )


class AcceptsAnyMode(ReferenceHost):
    """Runs any mode, declared or advertised or not."""

    refusal_checks: ClassVar[tuple[refusal.Check, ...]] = tuple(
        c
        for c in refusal.RUN_CREATE_CHECKS
        if c not in (refusal.check_mode_declared, refusal.check_mode_advertised)
    )


class EnvelopeWithoutDetails(ReferenceHost):
    """Refuses with an envelope that names no field."""

    def check(self, request: RunRequest) -> RunRefused | None:
        refused = super().check(request)
        if refused is not None:
            refused.envelope.pop("details", None)
        return refused


class MismatchedCallId(ReferenceHost):
    """Gives ``agent.tool-returned`` a callId its ``agent.tool-called`` does not have."""

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        return super().tool_returned(f"{call_id}-returned", tool, result, duration_ms)


class NegativeDuration(ReferenceHost):
    """Emits ``durationMs: -1``, which the run-event schema rejects."""

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        return super().tool_returned(call_id, tool, result, -1)


class MissTotalFromLastTask(ReferenceHost):
    """Reports the last task's miss count as the summary's total."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        record = super().execute(run_id, request)
        summary = record.summary
        if summary.get("tasks"):
            summary["fixtureMissCount"] = summary["tasks"][-1].get("fixtureMissCount", 0)
        return record


class LeaksAgentOutput(ReferenceHost):
    """Puts what the agent received (recorded payloads) in the snapshot, as hosts once did."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        record = super().execute(run_id, request)
        return LeakySnapshotRecord(**{f.name: getattr(record, f.name) for f in _fields(record)})


class LeakySnapshotRecord(RunRecord):
    def snapshot(self) -> dict[str, Any]:
        return {**super().snapshot(), "x-toolcall-spec": {"agentOutput": self.agent_output}}


def _fields(record: RunRecord) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(record)


class StartsWithAnotherOwner(ReferenceHost):
    """Echoes an owner in ``run.started`` that is not the snapshot's."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        record = super().execute(run_id, request)
        started = record.events[0]["payload"]
        started["owner"] = {**started["owner"], "tenant": "someone-else"}
        return record


class ReasonInEvalScored(ReferenceHost):
    """Writes a failed task's reason into ``eval.scored`` under a vendor key."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        record = super().execute(run_id, request)
        for event in record.events:
            if event["type"] == "eval.scored" and event["payload"]["passed"] is False:
                event["payload"]["vendor.toolcall-spec.reason"] = "json-match: mismatch"
        return record


class ForgetsRunOptions(ReferenceHost):
    """Accepts RunOptions but does not persist them on the run."""

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        return dataclasses.replace(super().execute(run_id, request), options={})


class AcceptsUnadvertisedEvalModes(ReferenceHost):
    """Takes ``evalModes`` and ``baselineRunId`` without advertising ``baselineSelection``."""

    refusal_checks: ClassVar[tuple[refusal.Check, ...]] = _without_check(
        refusal.check_eval_modes_allowed
    )


class AcceptsUnadvertisedFixtureRuns(ReferenceHost):
    """Takes ``fixtureRuns`` without advertising ``recordedFixtures``."""

    refusal_checks: ClassVar[tuple[refusal.Check, ...]] = _without_check(refusal.check_fixture_runs)


class BreaksUpstreamDiscovery(ReferenceHost):
    """Serves a discovery document upstream refuses: era 1, and an experimental record without
    ``until`` (the reference host validates its own document, so the breakage comes after)."""

    def discovery(self) -> dict[str, Any]:
        document = copy.deepcopy(super().discovery())
        document["eventLogSchemaVersion"] = 1
        document["agents"].pop("until", None)
        return document


def _without_members(cls: type[ReferenceHost], *members: str) -> Callable[[], ReferenceHost]:
    return lambda: cls().without(*members)


@dataclass(frozen=True, slots=True)
class Mutant:
    """A broken host and the leg named to catch it."""

    name: str
    host: Callable[[], ReferenceHost]
    caught_by: str

    def adapter(self) -> InProcessAdapter:
        return InProcessAdapter(self.host(), f"mutant {self.name}")


def _restricted(cls: type[ReferenceHost]) -> Callable[[], ReferenceHost]:
    return lambda: restricted(cls())


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "serves an error entry as a success",
        ServesErrorAsSuccess,
        "openwop.requirement.0245.fixture-error-replayed",
    ),
    Mutant(
        "emits outcome beside error",
        OutcomeBesideError,
        "toolcall-spec.requirement.events.error-outcome-exclusive",
    ),
    Mutant(
        "counts a served error as a miss",
        CountsServedErrorAsMiss,
        "toolcall-spec.requirement.replay.miss-handling",
    ),
    Mutant(
        "calls the live tool for an error entry",
        CallsLiveForError,
        "toolcall-spec.requirement.replay.error-never-live",
    ),
    Mutant(
        "advertises fixtureErrors but ignores isError",
        IgnoresIsError,
        "toolcall-spec.requirement.capabilities.advertise-what-implemented",
    ),
    Mutant(
        "accepts an isError suite without advertising fixtureErrors",
        _restricted(AcceptsUnadvertisedIsError),
        "openwop.requirement.0245.unadvertised-refused",
    ),
    Mutant(
        "omits status error under prePostEvents",
        OmitsErrorStatus,
        "openwop.requirement.0245.fixture-error-replayed",
    ),
    Mutant(
        "logs the error but hands the agent a success",
        AgentSeesSuccess,
        "toolcall-spec.requirement.replay.agent-receives-tool-error",
    ),
    Mutant(
        "echoes the error payload in error.message",
        EchoesPayload,
        "toolcall-spec.requirement.replay.fixed-error-message",
    ),
    Mutant(
        "never consumes a served entry",
        NeverConsumesEntries,
        "toolcall-spec.requirement.replay.first-unconsumed-match",
    ),
    Mutant(
        "reads the integer 1 as true when matching",
        CoercesOneToTrue,
        "toolcall-spec.requirement.replay.args-matching",
    ),
    Mutant(
        "serves fixtures in live-shadow mode",
        LiveShadowServesFixtures,
        "toolcall-spec.requirement.replay.live-shadow-ignores-fixtures",
    ),
    Mutant(
        "accepts an args suite without advertising fixtureMatching",
        _restricted(AcceptsUnadvertisedArgs),
        "toolcall-spec.requirement.capabilities.fixture-matching-refused",
    ),
    Mutant(
        "runs modes it should refuse",
        AcceptsAnyMode,
        "toolcall-spec.requirement.capabilities.mode-refused",
    ),
    Mutant(
        "refuses without details.field",
        EnvelopeWithoutDetails,
        "toolcall-spec.requirement.capabilities.refusal-envelope",
    ),
    Mutant(
        "gives a return a callId its call does not have",
        MismatchedCallId,
        "toolcall-spec.requirement.events.log-order",
    ),
    Mutant(
        "emits a negative durationMs",
        NegativeDuration,
        "toolcall-spec.requirement.events.schema-valid",
    ),
    Mutant(
        "reports the last task's misses as the total",
        MissTotalFromLastTask,
        "toolcall-spec.requirement.events.summary-miss-count",
    ),
    Mutant(
        "quotes recorded payloads in the snapshot",
        LeaksAgentOutput,
        "toolcall-spec.requirement.wire.snapshot-members",
    ),
    Mutant(
        "echoes another owner in run.started",
        StartsWithAnotherOwner,
        "toolcall-spec.requirement.wire.run-bracket",
    ),
    Mutant(
        "writes the failure reason into eval.scored",
        ReasonInEvalScored,
        "toolcall-spec.requirement.wire.eval-scored-closed",
    ),
    Mutant(
        "does not persist RunOptions",
        ForgetsRunOptions,
        "toolcall-spec.requirement.wire.run-options",
    ),
    Mutant(
        "takes evalModes without advertising baselineSelection",
        _without_members(AcceptsUnadvertisedEvalModes, "baselineSelection"),
        "openwop.requirement.0251.eval-modes-gated",
    ),
    Mutant(
        "takes fixtureRuns without advertising recordedFixtures",
        _without_members(AcceptsUnadvertisedFixtureRuns, "recordedFixtures"),
        "openwop.requirement.0252.fixture-runs-gated",
    ),
    Mutant(
        "serves a discovery document upstream refuses",
        BreaksUpstreamDiscovery,
        "toolcall-spec.requirement.wire.discovery-valid",
    ),
)


class PercentEncodedLinks:
    """An HTTP mutant (ASGI middleware around the server): links carry the percent-encoded run
    id, and a projected id in a path finds no run, as before hosts knew identity.md §5."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = scope.get("raw_path") or b""
        if scope["type"] == "http" and b"~" in raw:
            body = b'{"error":"not_found","message":"no such run"}'
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 404, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return

        async def rewriting(message: Message) -> None:
            if message["type"] == "http.response.body":  # same length: ~2F and %2F
                message = {**message, "body": message.get("body", b"").replace(b"~2F", b"%2F")}
            elif message["type"] == "http.response.start":
                headers = [(k, v.replace(b"~2F", b"%2F")) for k, v in message["headers"]]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, rewriting)
