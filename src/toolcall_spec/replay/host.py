"""The in-process reference host: runs eval suites with fixture replay (RFC 0244 §D, RFC 0245).

``ReferenceHost`` checks a run request against its capability document (refusal.py), then runs
every task with the scripted conformance agent: each call is answered by the task's fixtures, by a
live tool (``onMiss: live`` and ``live-shadow``) or by a miss error, and recorded as
``agent.tool-called`` then ``agent.tool-returned``. Live tools count their invocations, so "never
called live" is observable. A finished run's log is a recorded fact: ``replay`` reads it back and
never serves a fixture or calls a live tool again.

Each behaviour a conformance leg checks is one overridable method (``serve_error_entry``,
``answer_miss``, ``call_live``, ``counts_as_miss``, ``tool_returned``) or class attribute
(``refusal_checks``), so a test's mutant host changes exactly one thing.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, ClassVar

import orjson

from toolcall_spec.conformance.fixtures import load_fixture
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
    Clock,
    ErrorCode,
    EventLog,
    IdSource,
    elapsed_ms,
    random_id,
    tool_called_payload,
    tool_returned_payload,
    utc_now,
)
from toolcall_spec.replay.fixtures import FixtureServer, Miss, Served
from toolcall_spec.replay.refusal import RUN_CREATE_CHECKS, Check, RunRequest
from toolcall_spec.replay.scoring import score_task
from toolcall_spec.rules import advertises, is_tool_error
from toolcall_spec.validation import validate

LiveTool = Callable[[dict[str, Any]], Any]
"""A live tool: the call's arguments in, its result (a ``CallToolResult``-shaped object) out."""

CAPABILITIES_FILE = "examples/capabilities/reference-host.json"
"""The reference host's discovery document, shipped as package data (also an example)."""

REASON_KEY = "vendor.toolcall-spec.reason"
"""``eval.scored`` member (vendor hatch) saying why a task failed; it never quotes suite content."""

DEFAULT_PASS_SCORE = 1.0
"""A suite without ``thresholds.passScore`` passes only when every task passes."""


class UnknownRunError(LookupError):
    """No run of this host has the id given."""


class InvalidCapabilitiesError(ValueError):
    """The capability document given to the host is not a valid discovery document."""


@cache
def _packaged_text(relative: str) -> str:
    return read_text(relative)


def load_packaged_json(relative: str) -> Any:
    """A JSON file shipped in the package (``examples/...``, ``schemas/...``), freshly parsed."""
    return json.loads(_packaged_text(relative))


def default_capabilities() -> dict[str, Any]:
    """The reference host's discovery document: exactly what this module implements."""
    document: dict[str, Any] = load_packaged_json(CAPABILITIES_FILE)
    return document


def capabilities_without(capabilities: Mapping[str, Any], member: str) -> dict[str, Any]:
    """A copy of ``capabilities`` that no longer advertises ``agents.evalSuite.<member>``."""
    document = copy.deepcopy(dict(capabilities))
    eval_suite = document.get("agents", {}).get("evalSuite")
    if isinstance(eval_suite, dict):
        eval_suite.pop(member, None)
    return document


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
    error: dict[str, Any] | None = None
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
class RunRecord:
    """A finished run: its recorded log, summary, and what the agent saw, per task."""

    run_id: str
    mode: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]
    agent_output: dict[str, list[dict[str, Any]]]
    served: dict[str, list[int]] = dataclasses.field(default_factory=dict)


class ReferenceHost:
    """An OpenWOP v2 eval host in process. Runs complete synchronously inside ``create_run``."""

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
    ) -> None:
        document = default_capabilities() if capabilities is None else copy.deepcopy(capabilities)
        errors = [p for p in validate(document, "capabilities") if p.severity == "error"]
        if errors:
            raise InvalidCapabilitiesError(f"invalid capabilities: {errors[0]}")
        if not tenant or "/" in tenant:
            raise ValueError("tenant is a non-empty id without '/'")
        self.capabilities: dict[str, Any] = dict(document)
        self.live_tools: dict[str, LiveTool] = dict(live_tools or {})
        self.clock: Clock = clock or utc_now
        self.ids: IdSource = ids or random_id
        self.tenant = tenant
        self._runs: dict[str, RunRecord] = {}
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
        )

    def without_fixture_errors(self) -> ReferenceHost:
        """The same host without ``agents.evalSuite.fixtureErrors`` (RFC 0245 §C's negative)."""
        return self.with_capabilities(capabilities_without(self.capabilities, "fixtureErrors"))

    @property
    def tool_hooks(self) -> bool:
        """Whether tool events carry the RFC 0064 members (``toolHooks.prePostEvents``)."""
        return advertises(self.capabilities, "toolHooks", "prePostEvents")

    def fixture_suite(self, fixture_id: str) -> dict[str, Any]:
        """The suite behind a conformance fixture id listed in discovery ``fixtures``."""
        return load_fixture(fixture_id)

    # -- run create --------------------------------------------------------------------------

    def check_run(
        self,
        suite: Any,
        *,
        mode: str = "golden",
        agent_id: str = SCRIPTED_AGENT_ID,
        baseline_run_id: str | None = None,
    ) -> None:
        """Raise ``RunRefused`` if a run of ``suite`` would be refused; run nothing."""
        with self._lock:
            finished = frozenset(self._runs)
        request = RunRequest(suite, self.capabilities, mode, agent_id, baseline_run_id, finished)
        for check in self.refusal_checks:
            refusal = check(request)
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
        self.check_run(suite, mode=mode, agent_id=agent_id, baseline_run_id=baseline_run_id)
        with self._lock:
            run_id = f"{self.tenant}/{self.ids()}"
            if run_id in self._runs:
                raise ValueError(f"the id source repeated the run id {run_id!r}")
            # The log must stay what happened, whatever the caller later does to its suite.
            record = self._run(run_id, copy.deepcopy(suite), mode, baseline_run_id)
            self._runs[run_id] = record
        return run_id

    # -- reading finished runs ------------------------------------------------------------------

    def _record(self, run_id: str) -> RunRecord:
        with self._lock:
            record = self._runs.get(run_id)
        if record is None:
            raise UnknownRunError(f"no run {run_id!r} on this host")
        return record

    def run_ids(self) -> list[str]:
        with self._lock:
            return list(self._runs)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's event log, in sequence order (a copy)."""
        return copy.deepcopy(self._record(run_id).events)

    def summary(self, run_id: str) -> dict[str, Any]:
        """The eval summary, with ``fixtureMissCount`` in total and per task (a copy)."""
        return copy.deepcopy(self._record(run_id).summary)

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]]:
        """What the scripted agent received, per task id: ``[{tool, isError, content}]``."""
        return copy.deepcopy(self._record(run_id).agent_output)

    def served_entries(self, run_id: str) -> dict[str, list[int]]:
        """Per task id, the indices of the fixture entries served, in serving order."""
        return copy.deepcopy(self._record(run_id).served)

    def live_invocations(self) -> dict[str, int]:
        """How often each live tool was invoked over this host's life."""
        with self._lock:
            return dict(self._live_counts)

    def replay(self, run_id: str) -> list[dict[str, Any]]:
        """A replay (or fork) of a finished run: its recorded log, read back. Nothing is served
        or called again: a served error stays the recorded fact it is (RFC 0245 §D)."""
        return self.events(run_id)

    # -- running ------------------------------------------------------------------------------

    def _run(
        self, run_id: str, suite: Mapping[str, Any], mode: str, baseline_run_id: str | None
    ) -> RunRecord:
        log = EventLog(run_id, self.clock)
        tasks: list[dict[str, Any]] = suite["tasks"]
        started: dict[str, Any] = {
            "suiteId": suite["suiteId"],
            "suiteVersion": suite["version"],
            "taskCount": len(tasks),
            "modes": [mode],
        }
        if baseline_run_id is not None:
            started["baselineRunId"] = baseline_run_id
        log.append(EVAL_STARTED, started)
        record = RunRecord(run_id, mode, log.events, {}, {})
        task_summaries = [
            self._run_task(log, record, index, task, mode) for index, task in enumerate(tasks)
        ]
        record.summary = self._summarize(suite, task_summaries, baseline_run_id)
        completed = {
            key: record.summary[key]
            for key in ("aggregateScore", "passed", "taskCount", "passedCount")
        }
        if "regression" in record.summary:
            completed["regressionVsBaseline"] = record.summary["regression"]["scoreDelta"]
        log.append(EVAL_COMPLETED, completed)
        return record

    def _run_task(
        self, log: EventLog, record: RunRecord, index: int, task: Mapping[str, Any], mode: str
    ) -> dict[str, Any]:
        fixtures = task.get("fixtures") or {}
        state = TaskRun(
            task_id=task["taskId"],
            index=index,
            mode=mode,
            on_miss=fixtures.get("onMiss", "error"),
            server=FixtureServer.for_task(task),
        )

        def call_tool(tool: str, args: dict[str, Any]) -> ToolAnswer:
            return self._call(log, state, tool, args)

        output = ScriptedAgent().run(task["input"], call_tool)
        record.agent_output[state.task_id] = output
        record.served[state.task_id] = list(state.server.served)
        score = score_task(task.get("expected"), output)
        scored: dict[str, Any] = {"taskId": state.task_id, "score": score.score}
        scored["passed"] = score.passed
        if score.reason is not None:
            scored[REASON_KEY] = score.reason
        log.append(EVAL_SCORED, scored)
        return {
            "taskId": state.task_id,
            "score": score.score,
            "passed": score.passed,
            "fixtureMissCount": state.misses,
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
        """A success entry: the response, opaque, is the outcome (an ``isError`` key inside it
        changes nothing: only the entry's own ``isError`` counts)."""
        response = served.response
        return CallResult(
            False, agent_content(response), outcome=response, entry_index=served.index
        )

    def serve_error_entry(self, task: TaskRun, served: Served) -> CallResult:
        """An ``isError: true`` entry (RFC 0245 §B): the agent gets a tool error with the recorded
        payload as content; the log gets ``error`` with a fixed message, never the payload; no
        live tool is called, whatever ``onMiss`` says; it is not a miss."""
        content = agent_content(served.response) if "response" in served.entry else None
        return failure(TOOL_FAILED, content, entry_index=served.index)

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
        result = copy.deepcopy(result)  # the tool may reuse or mutate what it returned
        if is_tool_error(result):
            return failure(TOOL_FAILED, agent_content(result), live=True)
        return CallResult(False, agent_content(result), outcome=result, live=True)

    def tool_returned(
        self, call_id: str, tool: str, result: CallResult, duration_ms: int
    ) -> dict[str, Any]:
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
        tasks: list[dict[str, Any]],
        baseline_run_id: str | None,
    ) -> dict[str, Any]:
        aggregate = sum(task["score"] for task in tasks) / len(tasks) if tasks else 0.0
        pass_score = (suite.get("thresholds") or {}).get("passScore", DEFAULT_PASS_SCORE)
        summary: dict[str, Any] = {
            "suiteId": suite["suiteId"],
            "suiteVersion": suite["version"],
            "aggregateScore": aggregate,
            "passed": aggregate >= pass_score,
            "taskCount": len(tasks),
            "passedCount": sum(1 for task in tasks if task["passed"]),
            "fixtureMissCount": sum(task["fixtureMissCount"] for task in tasks),
            "tasks": tasks,
        }
        if baseline_run_id is not None:
            baseline = self._runs[baseline_run_id].summary["aggregateScore"]
            delta = max(-1.0, min(1.0, aggregate - baseline))
            summary["regression"] = {"baselineRunId": baseline_run_id, "scoreDelta": delta}
        return summary
