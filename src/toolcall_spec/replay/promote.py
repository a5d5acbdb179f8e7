"""Record -> replay: promote a recorded run's event log into a suite that reproduces it.

Each ``agent.tool-called`` / ``agent.tool-returned`` pair (same ``callId``) becomes one fixture
entry, in call order, and one scripted call of the scripted conformance agent:
- answered with ``outcome``: a success entry whose ``response`` is the outcome;
- answered with ``error``: an ``isError: true`` entry (RFC 0245). The log carries no payload for a
  failed call (the host records a fixed message, never the payload), so the entry's ``response`` is
  MCP-shaped content holding the recorded error object as JSON text.
Entries carry the call's ``inputs`` as ``args`` with ``argsMatch: "exact"``. Calls are grouped into
tasks by the ``eval.scored`` that follows them; calls after the last one (or in a log without eval
events) form one more task. Each task expects, by ``json-match``, the recorded sequence of tools
and errors, so replaying the promoted suite checks it reproduces the recording.

Bad logs get problems with paths (``[3].payload.callId``, or ``line 4: payload.callId`` for JSONL):
events that fail the run-event schema, a tool-returned without its tool-called, a call never
answered, a ``toolName`` that differs from its call's. A log with any error yields no suite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

from toolcall_spec.json_paths import ROOT, format_path
from toolcall_spec.loading import Line, iter_jsonl
from toolcall_spec.problems import Problem, has_errors
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID
from toolcall_spec.replay.events import EVAL_SCORED, TOOL_CALLED, TOOL_RETURNED
from toolcall_spec.rules import is_tool_error
from toolcall_spec.validation import schema_problems, validate

PROMOTED_VERSION = "1.0.0"
TRAILING_TASK_ID = "recorded"
"""The task that holds calls no ``eval.scored`` closes."""

Where = Callable[[Sequence[str | int]], str]
"""Formats a path inside one event into a path naming the event too."""


@dataclass(frozen=True, slots=True)
class Promotion:
    """The promoted suite (``None`` when the log has errors) and every problem found."""

    suite: dict[str, Any] | None
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return self.suite is not None


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One tool call as recorded at any boundary (an event log, an MCP proxy, a cassette),
    ready to become a fixture entry: the ``response`` to serve and whether it is a failure."""

    tool: str
    args: Mapping[str, Any] | None
    """The call's arguments; ``None`` when they are not an object (the entry then has no
    ``args`` and matches any call of the tool)."""
    response: Any
    is_error: bool
    duration_ms: float | None = None
    """How long the call took to answer, when the recorder was asked to keep it
    (``record --timings``): ``serve-fixtures --pace recorded`` waits as long."""

    @classmethod
    def answered(cls, tool: str, args: Any, result: Any) -> RecordedCall:
        """A call answered with an MCP ``CallToolResult`` (as received, wire names): a
        failure exactly when its ``isError`` is the JSON boolean ``true``."""
        return cls(tool, _object_or_none(args), result, is_tool_error(result))

    @classmethod
    def failed(cls, tool: str, args: Any, error: Any) -> RecordedCall:
        """A call that got no result (a JSON-RPC error object, or the reason it went
        unanswered): a failure whose response holds ``error`` as JSON text, the form a
        promoted log's failed call takes too."""
        return cls(tool, _object_or_none(args), _error_content(error), True)


@dataclass(frozen=True, slots=True)
class RecordedTask:
    """The calls of one recorded session (one agent task), in call order."""

    task_id: str
    calls: Sequence[RecordedCall]
    tools: Sequence[Any] | None = None
    """The MCP tools the server listed in the session (``tools/list``, wire JSON), if any: kept
    in the task's opaque input as ``mcp.tools``, so a replaying MCP server lists them."""


def _object_or_none(args: Any) -> Mapping[str, Any] | None:
    return args if isinstance(args, Mapping) else None


def _error_content(error: Any) -> dict[str, Any]:
    text = orjson.dumps(error, option=orjson.OPT_SORT_KEYS).decode()
    return {"content": [{"type": "text", "text": text}]}


@dataclass
class _Call:
    tool: str
    inputs: Any
    where: Where
    error: Any = None
    outcome: Any = None

    def recorded(self) -> RecordedCall:
        if self.error is not None:
            return RecordedCall.failed(self.tool, self.inputs, self.error)
        return RecordedCall(self.tool, self.inputs, self.outcome, False)


@dataclass
class _Task:
    task_id: str
    calls: list[_Call] = field(default_factory=list)
    scored: bool = False
    """An ``eval.scored`` closed the task (its id is the recorded one)."""


def promote(
    events: Iterable[Any], *, suite_id: str | None = None, at: Sequence[str | int] = ()
) -> Promotion:
    """Promote a log given as parsed events; problem paths are ``[i]...`` (after ``at``)."""
    located = ((_list_where([*at, i]), event) for i, event in enumerate(events))
    return _promote(located, suite_id)


def promote_jsonl(handle: BinaryIO, *, suite_id: str | None = None) -> Promotion:
    """Promote a JSONL log read line by line; problem paths are ``line N: ...``."""
    return promote_lines(iter_jsonl(handle), suite_id=suite_id)


def promote_lines(lines: Iterable[Line], *, suite_id: str | None = None) -> Promotion:
    """Promote parsed JSONL lines (a line that failed to parse is a problem of its own)."""
    problems: list[Problem] = []

    def located() -> Iterable[tuple[Where, Any]]:
        for number, value, error in lines:
            if error is not None:
                problems.append(Problem(f"line {number}", error))
            else:
                yield _line_where(number), value

    promotion = _promote(located(), suite_id)
    if not problems:
        return promotion
    return Promotion(None, problems + promotion.problems)


def _list_where(prefix: Sequence[str | int]) -> Where:
    return lambda inner: format_path([*prefix, *inner])


def _line_where(number: int) -> Where:
    return lambda inner: f"line {number}: {format_path(inner)}" if inner else f"line {number}"


def _prefixed(where: Where, relative: str) -> str:
    """Attach a validator path (already formatted, relative to the event) to an event's place."""
    base = where([])
    if relative == ROOT:
        return base
    if base.startswith("line "):
        return f"{base}: {relative}"
    return base + relative if relative.startswith("[") else f"{base}.{relative}"


def _promote(located: Iterable[tuple[Where, Any]], suite_id: str | None) -> Promotion:
    problems: list[Problem] = []
    walked: list[tuple[Where, dict[str, Any]]] = []
    for where, event in located:
        found = schema_problems(event, "run-event")
        problems.extend(Problem(_prefixed(where, p.path), p.message) for p in found)
        # An invalid event still pairs with its call when it can be read, so one bad event is
        # reported once, not again as its partner's missing half.
        if not found or _readable(event):
            walked.append((where, event))
    ordered = _in_sequence_order(walked, problems)
    tasks = _tasks(ordered, problems)
    if not any(task.calls for task in tasks) and not problems:
        problems.append(Problem(ROOT, "the log records no tool call: nothing to promote"))
    if has_errors(problems):
        return Promotion(None, problems)
    run_id = ordered[0][1]["runId"] if ordered else ""
    recorded = [RecordedTask(t.task_id, [c.recorded() for c in t.calls]) for t in tasks]
    suite = recorded_suite(recorded, suite_id=suite_id or _suite_id_for(run_id))
    suite_errors = [p for p in validate(suite, "suite") if p.severity == "error"]
    if suite_errors:  # a bug here, not in the log: say so rather than print an invalid suite
        problems.extend(
            Problem(p.path, f"promoted suite is invalid: {p.message}") for p in suite_errors
        )
        return Promotion(None, problems)
    return Promotion(suite, problems)


def _readable(event: Any) -> bool:
    """Enough of an event to place it in the log and pair it with its call."""
    if not isinstance(event, Mapping) or not isinstance(event.get("payload"), Mapping):
        return False
    sequence, payload = event.get("sequence"), event["payload"]
    if not isinstance(sequence, int) or isinstance(sequence, bool):
        return False
    if event.get("type") in (TOOL_CALLED, TOOL_RETURNED):
        return isinstance(payload.get("callId"), str) and isinstance(payload.get("toolName"), str)
    return event.get("type") != EVAL_SCORED or isinstance(payload.get("taskId"), str)


def _in_sequence_order(
    events: list[tuple[Where, dict[str, Any]]], problems: list[Problem]
) -> list[tuple[Where, dict[str, Any]]]:
    """The events of one run, sorted by ``sequence``; another run's events and repeated
    sequence numbers are problems."""
    kept: list[tuple[Where, dict[str, Any]]] = []
    run_id: Any = None
    seen: set[int] = set()
    for where, event in events:
        if run_id is None:
            run_id = event.get("runId")
        if event.get("runId") != run_id:
            problems.append(
                Problem(where(["runId"]), f"another run than {run_id!r}: one run per log")
            )
        elif event["sequence"] in seen:
            problems.append(Problem(where(["sequence"]), "this sequence number appears twice"))
        else:
            seen.add(event["sequence"])
            kept.append((where, event))
    return sorted(kept, key=lambda item: int(item[1]["sequence"]))


def _tasks(events: list[tuple[Where, dict[str, Any]]], problems: list[Problem]) -> list[_Task]:
    tasks: list[_Task] = []
    current = _Task(TRAILING_TASK_ID)
    open_calls: dict[str, _Call] = {}
    for where, event in events:
        payload = event["payload"]
        if event["type"] == TOOL_CALLED:
            _open_call(where, payload, open_calls, current, problems)
        elif event["type"] == TOOL_RETURNED:
            _answer_call(where, payload, open_calls, problems)
        elif event["type"] == EVAL_SCORED:
            current.task_id = payload["taskId"]
            current.scored = True
            tasks.append(current)
            current = _Task(TRAILING_TASK_ID)
    if current.calls:
        tasks.append(current)
    for call_id, call in open_calls.items():
        problems.append(
            Problem(
                call.where(["payload", "callId"]), f"call {call_id!r} has no agent.tool-returned"
            )
        )
    return tasks


def _open_call(
    where: Where,
    payload: Mapping[str, Any],
    open_calls: dict[str, _Call],
    task: _Task,
    problems: list[Problem],
) -> None:
    call_id = payload["callId"]
    if call_id in open_calls:
        message = f"call {call_id!r} is called again before it returned"
        problems.append(Problem(where(["payload", "callId"]), message))
        return
    inputs = payload.get("inputs")
    if inputs is not None and not isinstance(inputs, Mapping):
        problems.append(
            Problem(
                where(["payload", "inputs"]),
                "inputs is not an object: the promoted entry matches any call of the tool",
                "warning",
            )
        )
        inputs = None
    call = _Call(payload["toolName"], inputs, where)
    open_calls[call_id] = call
    task.calls.append(call)


def _answer_call(
    where: Where, payload: Mapping[str, Any], open_calls: dict[str, _Call], problems: list[Problem]
) -> None:
    call_id = payload["callId"]
    call = open_calls.pop(call_id, None)
    if call is None:
        message = f"no agent.tool-called with callId {call_id!r} before this event"
        problems.append(Problem(where(["payload", "callId"]), message))
        return
    if payload["toolName"] != call.tool:
        message = f"toolName differs from its call's ({call.tool!r})"
        problems.append(Problem(where(["payload", "toolName"]), message))
    if "error" not in payload and "outcome" not in payload:
        problems.append(Problem(where(["payload"]), "carries neither error nor outcome"))
    call.error = payload.get("error")
    call.outcome = payload.get("outcome")


def recorded_fixtures(events: Iterable[Any]) -> dict[str, list[dict[str, Any]]]:
    """Per task id (as its ``eval.scored`` records it), the fixture entries a finished run's
    recorded tool calls become: the mapping RFC 0252's ``fixtureRuns`` serves and ``promote``
    writes, one function for both (a recorded failure is an ``isError: true`` entry, RFC 0245
    §B). A log with problems (never one a host of this package wrote) yields nothing."""
    problems: list[Problem] = []
    located = [(_list_where([i]), e) for i, e in enumerate(events) if _readable(e)]
    ordered = sorted(located, key=lambda item: int(item[1]["sequence"]))
    tasks = _tasks(ordered, problems)
    if has_errors(problems):
        return {}
    return {
        task.task_id: [fixture_entry(call.recorded()) for call in task.calls]
        for task in tasks
        if task.scored
    }


def fixture_entry(call: RecordedCall) -> dict[str, Any]:
    """The fixture entry one recorded call becomes: its ``args`` matched exactly, its
    response, and ``isError: true`` for a failure (RFC 0245)."""
    entry: dict[str, Any] = {"tool": call.tool}
    if call.args is not None:
        entry["args"] = dict(call.args)
        entry["argsMatch"] = "exact"
    if call.is_error:
        entry["isError"] = True
    entry["response"] = call.response
    return entry


def _scripted_call(call: RecordedCall) -> dict[str, Any]:
    return {"tool": call.tool, "args": dict(call.args) if call.args is not None else {}}


def recorded_suite(tasks: Sequence[RecordedTask], *, suite_id: str) -> dict[str, Any]:
    """The suite that reproduces recorded sessions: one task per session (ids made slugs and
    unique), one fixture entry per call in call order, and the scripted conformance agent's
    input and expected answers, so ``toolcall-spec replay`` checks the recording too. The one
    function every recorder uses (``promote``, ``toolcall-spec record``, cassette imports)."""
    used: set[str] = set()
    out_tasks = []
    for task in _with_content(tasks):
        task_id = _unique(_slug(task.task_id, "task"), used)
        expected = [{"tool": c.tool, "isError": c.is_error} for c in task.calls]
        task_input: dict[str, Any] = {"calls": [_scripted_call(call) for call in task.calls]}
        if task.tools is not None:
            task_input["mcp"] = {"tools": list(task.tools)}
        if any(call.duration_ms is not None for call in task.calls):
            durations = [call.duration_ms for call in task.calls]
            task_input.setdefault("mcp", {})["durationsMs"] = durations
        out_tasks.append(
            {
                "taskId": task_id,
                "input": task_input,
                "expected": {
                    "kind": "golden",
                    "match": {"strategy": "json-match", "value": expected},
                },
                "fixtures": {"toolResponses": [fixture_entry(call) for call in task.calls]},
            }
        )
    return {
        "suiteId": suite_id,
        "version": PROMOTED_VERSION,
        "targetAgentId": SCRIPTED_AGENT_ID,
        "modes": ["golden"],
        "tasks": out_tasks,
    }


def _with_content(tasks: Sequence[RecordedTask]) -> Sequence[RecordedTask]:
    """The tasks that hold a call or a tool listing; all of them when none does. A session that
    did nothing (the official client's ``server/discover`` probe before it falls back to the
    handshake, a client that connected and left) is no task to replay."""
    kept = [task for task in tasks if task.calls or task.tools is not None]
    return kept if kept else tasks[:1]


def _slug(text: str, fallback: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or fallback


def _unique(candidate: str, used: set[str]) -> str:
    name, n = candidate, 1
    while name in used:
        n += 1
        name = f"{candidate}-{n}"
    used.add(name)
    return name


def _suite_id_for(run_id: str) -> str:
    """``recorded.evals.<slug of the run's opaque id>``."""
    return recorded_suite_id(run_id.partition("/")[2] or run_id)


def recorded_suite_id(label: str) -> str:
    """A valid suite id for a recording named ``label``: ``recorded.evals.<slug>``."""
    return f"recorded.evals.{_slug(label, 'run')}"
