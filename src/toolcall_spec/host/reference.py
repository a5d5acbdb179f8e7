"""The reference host: runs eval suites with fixture replay (RFC 0244 §D, RFC 0245), the
implementation of the host port (``toolcall_spec.host.port``) every consumer uses.

``ReferenceHost`` checks a run request against its capability document (replay/refusal.py), then
runs every task with the scripted conformance agent: each call is answered by the task's fixtures,
by a live tool (``onMiss: live`` and ``live-shadow``) or by a miss error, and recorded as
``agent.tool-called`` then ``agent.tool-returned``. Live tools count their invocations, so "never
called live" is observable. A finished run's log is a recorded fact: ``replay`` reads it back and
never serves a fixture or calls a live tool again.

Each behaviour a conformance leg checks is one overridable method (``serve_error_entry``,
``answer_miss``, ``call_live``, ``counts_as_miss``, ``tool_returned``) or class attribute
(``refusal_checks``), so a test's mutant host changes exactly one thing.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any, ClassVar, TypeVar, cast

import orjson

from toolcall_spec.capabilities import EVAL_SUITE, PRE_POST_EVENTS, advertises, without
from toolcall_spec.clock import Clock, IdSource, elapsed_ms, random_id, utc_now
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.host.inputs import checked_clock, checked_id_source, checked_tenant
from toolcall_spec.host.port import owner_for
from toolcall_spec.host.store import RunRecord, RunStore
from toolcall_spec.loading import parse_json
from toolcall_spec.openwop_wire import RUN_COMPLETED, RUN_STARTED, TASK_FAILED
from toolcall_spec.package_data import read_text
from toolcall_spec.replay.agent import (
    SCRIPTED_AGENT_ID,
    ScriptedAgent,
    ToolAnswer,
    agent_content,
)
from toolcall_spec.replay.events import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    FIXTURE_MISS,
    TOOL_CALLED,
    TOOL_FAILED,
    TOOL_RAISED,
    TOOL_RETURNED,
    ErrorCode,
    EventLog,
    tool_called_payload,
    tool_returned_payload,
)
from toolcall_spec.replay.fixtures import FixtureServer, Miss, Served
from toolcall_spec.replay.promote import recorded_fixtures
from toolcall_spec.replay.refusal import (
    RUN_CREATE_CHECKS,
    Check,
    CheckContext,
    RunRefused,
    RunRequest,
    first_refusal,
)
from toolcall_spec.replay.scoring import score_task
from toolcall_spec.rules import is_tool_error
from toolcall_spec.typed import (
    AgentToolReturned,
    ErrorObject,
    EvalCompleted,
    EvalScored,
    EvalStarted,
    EvalSummary,
    Owner,
    RunCompleted,
    RunEvent,
    RunStarted,
    TaskSummary,
)
from toolcall_spec.validation import validate

T = TypeVar("T")

LiveTool = Callable[[dict[str, Any]], Any]
"""A live tool: the call's arguments in, its result (a ``CallToolResult``-shaped object) out."""

CAPABILITIES_FILE = "data/reference-host.json"
"""The reference host's discovery document, runtime package data (examples/capabilities/ holds
an identical copy for the docs)."""

RECORDED_ON_MISS = "fail"
"""How a task served from a ``fixtureRuns`` source answers an unmatched call (RFC 0252)."""

DEFAULT_PASS_SCORE = 1.0
"""A suite without ``thresholds.passScore`` passes only when every task passes."""


class InvalidCapabilitiesError(ValueError):
    """The capability document given to the host is not a valid discovery document."""


@cache
def _packaged_text(relative: str) -> str:
    return read_text(relative)


def load_packaged_json(relative: str) -> Any:
    """A JSON file shipped in the package (``examples/...``, ``schemas/...``), freshly parsed."""
    return parse_json(_packaged_text(relative))


def default_capabilities() -> dict[str, Any]:
    """The reference host's discovery document: exactly what this module implements."""
    document: dict[str, Any] = load_packaged_json(CAPABILITIES_FILE)
    return document


def capabilities_without(capabilities: Mapping[str, Any], member: str) -> dict[str, Any]:
    """A copy of ``capabilities`` that no longer advertises ``agents.evalSuite.<member>``."""
    return without(capabilities, (*EVAL_SUITE, member))


def default_live_answer(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """What the default live tool answers: deterministic, names the tool and echoes the args."""
    text = orjson.dumps({"tool": tool, "args": args, "live": True}, option=orjson.OPT_SORT_KEYS)
    return {"content": [{"type": "text", "text": text.decode()}]}


@dataclasses.dataclass(frozen=True, slots=True)
class CallResult:
    """How one call was answered: what the agent receives (``is_error``, ``content``) and what the
    log records (``error`` object, or ``outcome`` when ``error`` is ``None``)."""

    is_error: bool
    content: list[Any]
    error: ErrorObject | None = None
    outcome: Any = None
    miss: bool = False
    """No entry matched the call (whatever answered it then)."""
    entry_index: int | None = None
    """The fixture entry served, if one was."""
    live: bool = False
    """A live tool answered."""

    def answer(self) -> ToolAnswer:
        return ToolAnswer(self.is_error, self.content)


def failure(code: ErrorCode, content: list[Any] | None = None, **flags: Any) -> CallResult:
    """A tool error: the agent reads ``content`` (default: the fixed message), the log the code."""
    text = [{"type": "text", "text": code.message}]
    return CallResult(True, content if content is not None else text, code.error_object(), **flags)


def served_success(served: Served) -> CallResult:
    """A success entry: the response, opaque, is the outcome (an ``isError`` key inside it
    changes nothing: only the entry's own ``isError`` counts)."""
    response = served.response
    return CallResult(False, agent_content(response), outcome=response, entry_index=served.index)


def served_failure(served: Served) -> CallResult:
    """An ``isError: true`` entry (RFC 0245 §B): the agent gets a tool error with the recorded
    payload as content; the log gets ``error`` with a fixed message, never the payload; no live
    tool is called, whatever ``onMiss`` says; it is not a miss. Every server of fixtures answers
    with it (this host, ``serve-fixtures``)."""
    content = agent_content(served.response) if "response" in served.entry else None
    return failure(TOOL_FAILED, content, entry_index=served.index)


def live_result(result: Any) -> CallResult:
    """A live tool's result (``CallToolResult``-shaped): a tool error, recorded as one, exactly
    when its ``isError`` is ``true``; otherwise the outcome."""
    if is_tool_error(result):
        return failure(TOOL_FAILED, agent_content(result), live=True)
    return CallResult(False, agent_content(result), outcome=result, live=True)


@dataclasses.dataclass
class TaskRun:
    """The state of one task while it runs."""

    task_id: str
    index: int
    mode: str
    on_miss: str
    server: FixtureServer
    calls: int = 0
    misses: int = 0


@dataclasses.dataclass
class RunState:
    """What one run gathers while it executes (the log is appended in place)."""

    log: EventLog
    agent_output: dict[str, list[dict[str, Any]]] = dataclasses.field(default_factory=dict)
    served: dict[str, list[int]] = dataclasses.field(default_factory=dict)


class ReferenceHost:
    """An OpenWOP v2 eval host in process. ``create_run`` checks, executes and stores a run
    synchronously; the HTTP server calls ``check`` and ``execute`` itself and keeps its own
    store. Finished runs are served as shared read-only views (never mutate what is returned)."""

    refusal_checks: ClassVar[tuple[Check, ...]] = RUN_CREATE_CHECKS
    """The run-create checks this host applies (a mutant host drops or replaces one)."""

    def __init__(
        self,
        capabilities: Mapping[str, Any] | None = None,
        *,
        live_tools: Mapping[str, LiveTool] | None = None,
        clock: Clock | None = None,
        ids: IdSource | None = None,
        tenant: str = "local",
        store: RunStore | None = None,
    ) -> None:
        document = default_capabilities() if capabilities is None else copy.deepcopy(capabilities)
        errors = [p for p in validate(document, "capabilities") if p.severity == "error"]
        if errors:
            raise InvalidCapabilitiesError(f"invalid capabilities: {errors[0]}")
        checked_tenant(tenant)
        self.capabilities: dict[str, Any] = dict(document)
        self.live_tools: dict[str, LiveTool] = dict(live_tools or {})
        self.clock: Clock = utc_now if clock is None else checked_clock(clock)
        self.ids: IdSource = random_id if ids is None else checked_id_source(ids, tenant)
        self.tenant = tenant
        self.store = store if store is not None else RunStore()
        self._live_counts: Counter[str] = Counter()
        self._lock = threading.RLock()

    # -- variants --------------------------------------------------------------------------

    def with_capabilities(self, capabilities: Mapping[str, Any]) -> ReferenceHost:
        """A new host of the same class, live tools, clock and ids, advertising ``capabilities``."""
        return type(self)(
            capabilities,
            live_tools=self.live_tools,
            clock=self.clock,
            ids=self.ids,
            tenant=self.tenant,
            store=RunStore(self.store.max_runs),
        )

    def without(self, *members: str) -> ReferenceHost:
        """The same host advertising none of these ``agents.evalSuite`` members: without
        ``fixtureErrors`` it is RFC 0245 §C's negative host, without ``fixtureMatching`` the
        host that must refuse ``args``/``argsMatch``."""
        document: Mapping[str, Any] = self.capabilities
        for member in members:
            document = capabilities_without(document, member)
        return self.with_capabilities(document)

    def without_fixture_errors(self) -> ReferenceHost:
        """The same host without ``agents.evalSuite.fixtureErrors`` (RFC 0245 §C's negative)."""
        return self.with_capabilities(capabilities_without(self.capabilities, "fixtureErrors"))

    @property
    def tool_hooks(self) -> bool:
        """Whether tool events carry the RFC 0064 members (``toolHooks.prePostEvents``)."""
        return advertises(self.capabilities, PRE_POST_EVENTS)

    def fixture_suite(self, fixture_id: str) -> dict[str, Any]:
        """The suite behind a conformance fixture id listed in discovery ``fixtures``."""
        return load_fixture(fixture_id)

    # -- the host port ---------------------------------------------------------------------------

    def discovery(self) -> dict[str, Any]:
        """The discovery document (a copy: callers may add what they serve, e.g. ``fixtures``)."""
        return dict(self.capabilities)

    def check(self, request: RunRequest) -> RunRefused | None:
        """The run-create checks against this host's document: the refusal, or ``None``."""
        return first_refusal(self.check_context(request), self.refusal_checks)

    def check_context(self, request: RunRequest) -> CheckContext:
        """What the checks see: the request, the document, the finished runs of the store and
        the recorded entries of every usable ``fixtureRuns`` source."""
        return CheckContext(
            request,
            self.capabilities,
            self.store.finished_among(request.baseline_run_id),
            self.recorded_for(request.fixture_runs or {}),
        )

    def recorded_for(self, fixture_runs: Mapping[str, str]) -> dict[str, list[dict[str, Any]]]:
        """Per task id of ``fixture_runs``, the entries its source run recorded for that task;
        a task whose source is unknown, or did not record it, is left out (and refused)."""
        recorded: dict[str, list[dict[str, Any]]] = {}
        for task_id, source_id in fixture_runs.items():
            source = self.store.find(source_id) if isinstance(source_id, str) else None
            entries = recorded_fixtures(source.events).get(task_id) if source else None
            if entries is not None:
                recorded[task_id] = entries
        return recorded

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        """Run a request ``check`` accepted, to completion; the record is not stored."""
        with paused_gc():
            return self._execute(run_id, request)

    def _execute(self, run_id: str, request: RunRequest) -> RunRecord:
        log = EventLog(run_id, self.clock)
        state = RunState(log)
        suite: Mapping[str, Any] = request.suite
        owner = dict(request.owner) if request.owner else owner_for(self.tenant)
        log.append(RUN_STARTED, run_started_payload(suite["suiteId"], owner, request))
        recorded = self.recorded_for(request.fixture_runs or {})
        log.append(EVAL_STARTED, eval_started_payload(suite, request))
        tasks: list[dict[str, Any]] = suite["tasks"]
        mode = "live-shadow" if request.effective_modes == ("live-shadow",) else "golden"
        task_summaries = [
            self._run_task(state, index, task, mode, recorded.get(task["taskId"]))
            for index, task in enumerate(tasks)
        ]
        summary = self._summarize(suite, task_summaries, request.baseline_run_id)
        completed: EvalCompleted = {
            "aggregateScore": summary["aggregateScore"],
            "passed": summary["passed"],
            "taskCount": summary["taskCount"],
            "passedCount": summary["passedCount"],
        }
        if "regression" in summary:
            completed["regressionVsBaseline"] = summary["regression"]["scoreDelta"]
        log.append(EVAL_COMPLETED, completed)
        run_completed: RunCompleted = {"outputs": {}}
        log.append(RUN_COMPLETED, run_completed)
        return RunRecord(
            run_id=run_id,
            workflow_id=str(suite["suiteId"]),
            agent_id=request.agent_id,
            modes=request.effective_modes,
            owner=owner,
            events=log.events,
            summary=summary,
            agent_output=state.agent_output,
            served=state.served,
            options=dict(request.options),
        )

    # -- the in-process API -----------------------------------------------------------------------

    def check_run(
        self,
        suite: Any,
        *,
        mode: str = "golden",
        agent_id: str = SCRIPTED_AGENT_ID,
        baseline_run_id: str | None = None,
    ) -> None:
        """Raise ``RunRefused`` if a run of ``suite`` would be refused; run nothing."""
        refusal = self.check(RunRequest(suite, agent_id, mode, baseline_run_id=baseline_run_id))
        if refusal is not None:
            raise refusal

    def create_run(
        self,
        suite: Any,
        *,
        mode: str = "golden",
        agent_id: str = SCRIPTED_AGENT_ID,
        baseline_run_id: str | None = None,
    ) -> str:
        """Check, then run ``suite`` to completion; return the run id (``<tenant>/<opaque>``).
        Raises ``RunRefused`` (``status`` 400, ``envelope``) before anything runs."""
        return self.submit(RunRequest(suite, agent_id, mode, baseline_run_id=baseline_run_id))

    def submit(self, request: RunRequest) -> str:
        """Check, execute and store one run request; return its id. The suite is copied once,
        here, so the log stays what happened whatever the caller later does to it."""
        with self._lock:
            refusal = self.check(request)
            if refusal is not None:
                raise refusal
            run_id = f"{self.tenant}/{self.ids()}"
            if run_id in self.store:
                raise ValueError(f"the id source repeated the run id {run_id!r}")
            owned = dataclasses.replace(request, suite=fresh_json(request.suite))
            self.store.put(self.execute(run_id, owned))
        return run_id

    # -- reading finished runs --------------------------------------------------------------------
    # The record itself (``record``) is shared and read-only; these readers return fresh copies,
    # so a caller may change what it gets without touching the recorded fact.

    def _record(self, run_id: str) -> RunRecord:
        return self.store.get(run_id)

    def run_ids(self) -> list[str]:
        return self.store.run_ids()

    def record(self, run_id: str) -> RunRecord:
        """The run's one record (raises ``UnknownRunError``)."""
        return self.store.get(run_id)

    def events(self, run_id: str) -> list[RunEvent]:
        """The run's event log, in sequence order (a copy)."""
        return fresh_json(self._record(run_id).events)

    def summary(self, run_id: str) -> EvalSummary:
        """The eval summary, with ``fixtureMissCount`` in total and per task (a copy)."""
        return fresh_json(self._record(run_id).summary)

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """What the scripted agent received, per task id: ``[{tool, isError, content}]``
        (a copy)."""
        return fresh_json(self._record(run_id).agent_output)

    def served_entries(self, run_id: str) -> dict[str, list[int]]:
        """Per task id, the indices of the fixture entries served, in serving order."""
        return {task: list(served) for task, served in self._record(run_id).served.items()}

    def live_invocations(self) -> dict[str, int]:
        """How often each live tool was invoked over this host's life."""
        with self._lock:
            return dict(self._live_counts)

    def replay(self, run_id: str) -> list[RunEvent]:
        """A replay (or fork) of a finished run: its recorded log, read back. Nothing is served
        or called again: a served error stays the recorded fact it is (RFC 0245 §D)."""
        return self.events(run_id)

    # -- running ------------------------------------------------------------------------------

    def _run_task(
        self,
        state: RunState,
        index: int,
        task: Mapping[str, Any],
        mode: str,
        recorded: Sequence[Mapping[str, Any]] | None,
    ) -> TaskSummary:
        fixtures = task.get("fixtures") or {}
        if recorded is not None:  # RFC 0252: the source run's calls replace the task's fixtures
            fixtures = {"toolResponses": list(recorded), "onMiss": RECORDED_ON_MISS}
        run = TaskRun(
            task_id=task["taskId"],
            index=index,
            mode=mode,
            on_miss=fixtures.get("onMiss", RECORDED_ON_MISS),
            server=FixtureServer.for_task({"fixtures": fixtures}),
        )

        def call_tool(tool: str, args: dict[str, Any]) -> ToolAnswer:
            return self._call(state.log, run, tool, args)

        output = ScriptedAgent().run(task["input"], call_tool)
        state.agent_output[run.task_id] = output
        state.served[run.task_id] = list(run.server.served)
        score = score_task(task.get("expected"), output)
        scored: EvalScored = {"taskId": run.task_id, "score": score.score, "passed": score.passed}
        state.log.append(EVAL_SCORED, scored)
        if score.reason is not None:
            state.log.append(TASK_FAILED, {"taskId": run.task_id, "reason": score.reason})
        return {
            "taskId": run.task_id,
            "score": score.score,
            "passed": score.passed,
            "fixtureMissCount": run.misses,
        }

    def _call(self, log: EventLog, task: TaskRun, tool: str, args: dict[str, Any]) -> ToolAnswer:
        task.calls += 1
        call_id = f"{task.task_id}-{task.calls}"
        hooks = self.tool_hooks
        log.append(
            TOOL_CALLED, tool_called_payload(SCRIPTED_AGENT_ID, tool, call_id, args, hooks=hooks)
        )
        start = self.clock()
        result = self.resolve_call(task, tool, args)
        duration = elapsed_ms(start, self.clock())
        if self.counts_as_miss(result):
            task.misses += 1
        log.append(TOOL_RETURNED, self.tool_returned(call_id, tool, result, duration))
        return result.answer()

    # -- the behaviours a conformance leg checks, one method each ------------------------------

    def resolve_call(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        """Answer one call: live in ``live-shadow``; else the fixtures, then ``onMiss``."""
        if task.mode == "live-shadow":
            return self.call_live(tool, args)
        served = task.server.serve(tool, args)
        if isinstance(served, Miss):
            return self.answer_miss(task, tool, args)
        if served.is_error:
            return self.serve_error_entry(task, served)
        return self.serve_success_entry(task, served)

    def serve_success_entry(self, task: TaskRun, served: Served) -> CallResult:
        """A success entry (``served_success``)."""
        return served_success(served)

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        """An ``isError: true`` entry (``served_failure``)."""
        return served_failure(served)

    def answer_miss(self, task: TaskRun, tool: str, args: dict[str, Any]) -> CallResult:
        """A call no entry matched: the live tool under ``onMiss: live``, else a tool error."""
        if task.on_miss == "live":
            return dataclasses.replace(self.call_live(tool, args), miss=True)
        return failure(FIXTURE_MISS, miss=True)

    def counts_as_miss(self, result: CallResult) -> bool:
        """Whether the call adds 1 to ``fixtureMissCount``: only when no entry was served."""
        return result.miss

    def call_live(self, tool: str, args: dict[str, Any]) -> CallResult:
        """Invoke the live tool (counted). A result whose ``isError`` is ``true`` is a tool
        error, recorded as one; a tool that raises is one too."""
        with self._lock:
            self._live_counts[tool] += 1
        live_tool = self.live_tools.get(tool)
        try:
            result = default_live_answer(tool, args) if live_tool is None else live_tool(args)
        except Exception:  # any failure of user code is the tool's failure
            return failure(TOOL_RAISED, live=True)
        return live_result(copy.deepcopy(result))  # the tool may reuse or mutate what it returned

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> AgentToolReturned:
        """The ``agent.tool-returned`` payload for an answered call."""
        return tool_returned_payload(
            SCRIPTED_AGENT_ID,
            tool,
            call_id,
            error=result.error,
            outcome=result.outcome,
            hooks=self.tool_hooks,
            duration_ms=duration_ms,
        )

    # -- summary ------------------------------------------------------------------------------

    def _summarize(
        self,
        suite: Mapping[str, Any],
        tasks: list[TaskSummary],
        baseline_run_id: str | None,
    ) -> EvalSummary:
        aggregate = sum(task["score"] for task in tasks) / len(tasks) if tasks else 0.0
        pass_score = (suite.get("thresholds") or {}).get("passScore", DEFAULT_PASS_SCORE)
        summary: EvalSummary = {
            "suiteId": suite["suiteId"],
            "suiteVersion": suite["version"],
            "aggregateScore": aggregate,
            "passed": aggregate >= pass_score,
            "taskCount": len(tasks),
            "passedCount": sum(1 for task in tasks if task["passed"]),
            "fixtureMissCount": sum(task.get("fixtureMissCount", 0) for task in tasks),
            "tasks": tasks,
        }
        if baseline_run_id is not None:
            baseline = self.store.get(baseline_run_id).summary["aggregateScore"]
            delta = max(-1.0, min(1.0, aggregate - baseline))
            summary["regression"] = {"baselineRunId": baseline_run_id, "scoreDelta": delta}
        return summary


_gc_lock = threading.Lock()
_gc_pausers = 0
_gc_was_enabled = False


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a run executes (on any thread). A run allocates many
    small objects and creates no cycles; collections over its growing log made the cost per task
    grow with the suite (benchmarks/bench_replay.py). The collector is restored, as it was, when
    the last run in progress ends."""
    global _gc_pausers, _gc_was_enabled  # noqa: PLW0603  (the collector is process state)
    with _gc_lock:
        if _gc_pausers == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pausers += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pausers -= 1
            if _gc_pausers == 0 and _gc_was_enabled:
                gc.enable()


def fresh_json(value: T) -> T:
    """A deep copy of a JSON value: through orjson (several times faster than ``deepcopy``),
    falling back to ``deepcopy`` for what orjson cannot write (integers beyond 64 bits)."""
    try:
        copied: T = orjson.loads(orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError):
        copied = copy.deepcopy(value)
    return copied


def run_started_payload(
    workflow_id: str, owner: Mapping[str, Any], request: RunRequest
) -> RunStarted:
    """``run.started``: the workflow (the suite id: an eval run executes its suite), the owner
    exactly as the snapshot carries it, the transport, and the request's tags and metadata."""
    payload: RunStarted = {"workflowId": workflow_id, "owner": cast("Owner", dict(owner))}
    if request.transport is not None:
        payload["transport"] = request.transport
    for key in ("tags", "metadata"):
        if key in request.options:
            payload[key] = request.options[key]
    return payload


def eval_started_payload(suite: Mapping[str, Any], request: RunRequest) -> EvalStarted:
    """``eval.started``: suite id and version, task count, the modes, and (RFC 0251/0252) the
    baseline and the accepted fixture runs, echoed."""
    payload: EvalStarted = {
        "suiteId": suite["suiteId"],
        "suiteVersion": suite["version"],
        "taskCount": len(suite["tasks"]),
        # Checked against the modes the suite declares (check_mode_declared) before a run starts.
        "modes": list(request.effective_modes),  # type: ignore[arg-type]
    }
    if request.baseline_run_id is not None:
        payload["baselineRunId"] = request.baseline_run_id
    if request.fixture_runs:
        payload["fixtureRuns"] = dict(request.fixture_runs)
    return payload
