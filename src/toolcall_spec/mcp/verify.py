"""``toolcall-spec verify``: a recorded suite's calls sent again to the live MCP server, and what
changed since the recording.

Per task (one client session each, in the suite's order), every fixture entry is one call, sent
in declaration order (the order ``record`` wrote them: the order the client sent them), and
judged against what was recorded:

- ``isError flipped``: the recording and the live answer disagree on whether the call failed (by
  the one rule, ``rules.is_tool_error``; a JSON-RPC error is a failure, as ``record`` keeps it);
- ``content changed``: both agree, but the answer's ``content`` or ``structuredContent`` differs
  (as JSON values: key order ignored, ``1 == 1.0``), secrets left out on both sides (``record``
  keeps none, and a live server issues a new token each time: ``mcp.secrets``);
- ``same``: neither.

The tool contract: the tools the server lists now (``tools/list``, every page) against the list
the recording kept (``tasks[i].input.mcp.tools``): a tool removed is breaking, a tool added is
compatible, and a tool on both sides whose ``inputSchema`` changed is judged by the package's
schema-compatibility engine (``compat``, the engine of ``toolcall-spec diff``): breaking when a
change is major (arguments valid before may be refused now), compatible otherwise.

The judgments are pure functions of JSON values (``judge_call``, ``judge_contract``); ``verify``
is the part that talks to the server, through the ``mcp`` SDK's client.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from toolcall_spec.compat import Change, compare, verdict
from toolcall_spec.json_paths import format_path
from toolcall_spec.json_values import json_equal
from toolcall_spec.loading import DocumentError
from toolcall_spec.mcp.secrets import redact_secrets
from toolcall_spec.replay.promote import RecordedCall
from toolcall_spec.rules import is_tool_error

CallVerdict = Literal["same", "content changed", "isError flipped"]
SchemaVerdict = Literal["breaking", "compatible"]
Verdict = Literal["same", "changed", "breaking"]

SAME: Final = "same"
CONTENT_CHANGED: Final = "content changed"
FLIPPED: Final = "isError flipped"
CALL_VERDICTS: Final[tuple[CallVerdict, ...]] = (SAME, CONTENT_CHANGED, FLIPPED)

COMPARED_MEMBERS: Final = ("content", "structuredContent")
"""What ``content changed`` looks at. ``_meta`` is left out: servers put per-call values there
(timings, request ids) that differ on every call."""


# -- one call -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallReport:
    path: str
    """The fixture entry: ``tasks[0].fixtures.toolResponses[3]``."""
    tool: str
    verdict: CallVerdict
    recorded_is_error: bool
    live_is_error: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "tool": self.tool,
            "verdict": self.verdict,
            "recordedIsError": self.recorded_is_error,
            "liveIsError": self.live_is_error,
        }


def judge_call(recorded: Mapping[str, Any], live: RecordedCall) -> CallVerdict:
    """A fixture entry as recorded against the live answer to the same call."""
    if is_tool_error(recorded) != live.is_error:
        return FLIPPED
    recorded_content = redact_secrets(_compared(recorded.get("response")))
    if not json_equal(recorded_content, redact_secrets(_compared(live.response))):
        return CONTENT_CHANGED
    return SAME


def _compared(response: Any) -> dict[str, Any]:
    if not isinstance(response, Mapping):
        return {"": response}  # an opaque response of a hand-written suite: compared whole
    return {key: response[key] for key in COMPARED_MEMBERS if key in response}


def entry_args(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments to send for a fixture entry: its ``args``, or none (an entry without
    ``args`` matches any call of its tool)."""
    args = entry.get("args")
    return dict(args) if isinstance(args, Mapping) else {}


# -- the tool contract ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaReport:
    tool: str
    path: str
    """The recorded tool's input schema: ``tasks[0].input.mcp.tools[2].inputSchema``."""
    verdict: SchemaVerdict
    changes: Sequence[Change]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "path": self.path,
            "verdict": self.verdict,
            "changes": [change.as_dict() for change in self.changes],
        }


@dataclass(frozen=True, slots=True)
class ContractReport:
    path: str
    """The recorded tool list: ``tasks[0].input.mcp.tools``."""
    removed: Sequence[str]
    added: Sequence[str]
    schemas: Sequence[SchemaReport]

    @property
    def verdict(self) -> Verdict:
        if self.removed or any(s.verdict == "breaking" for s in self.schemas):
            return "breaking"
        return "changed" if self.added or self.schemas else "same"

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "verdict": self.verdict,
            "removed": list(self.removed),
            "added": list(self.added),
            "schemas": [schema.as_dict() for schema in self.schemas],
        }


def judge_contract(
    recorded: Sequence[Mapping[str, Any]], live: Sequence[Mapping[str, Any]], path: str
) -> ContractReport:
    """The recorded tool list (MCP ``Tool`` objects, at ``path``) against the live one."""
    now = {tool.get("name"): tool for tool in live}
    before: dict[Any, int] = {}
    for index, tool in enumerate(recorded):
        before.setdefault(tool.get("name"), index)
    removed = [str(name) for name in before if name not in now]
    added = [str(name) for name in now if name not in before]
    schemas = []
    for name, index in before.items():
        if name in now:
            where = f"{path}[{index}].inputSchema"
            old, new = recorded[index].get("inputSchema"), now[name].get("inputSchema")
            changes = schema_changes(old, new)
            if changes:
                level: SchemaVerdict = "breaking" if verdict(changes) == "major" else "compatible"
                schemas.append(SchemaReport(str(name), where, level, changes))
    return ContractReport(path, removed, added, schemas)


def schema_changes(old: Any, new: Any) -> list[Change]:
    """The compatibility engine's changes from ``old`` to ``new``; a schema it cannot read (too
    deep to compare) is one major change that says why."""
    if json_equal(old, new):
        return []
    try:
        return compare(old, new)
    except DocumentError as exc:
        return [Change("", "unreadable", "major", str(exc))]


def recorded_tools_path(task_index: int) -> str:
    return format_path(["tasks", task_index, "input", "mcp", "tools"])


# -- the whole run --------------------------------------------------------------------------------


@dataclass
class TaskReport:
    task_id: str
    path: str
    calls: list[CallReport] = field(default_factory=list)
    contract: ContractReport | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "path": self.path,
            "calls": [call.as_dict() for call in self.calls],
            "contract": None if self.contract is None else self.contract.as_dict(),
        }


@dataclass
class Report:
    tasks: list[TaskReport] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        tally: dict[str, int] = dict.fromkeys(CALL_VERDICTS, 0)
        for task in self.tasks:
            for call in task.calls:
                tally[call.verdict] += 1
        return tally

    @property
    def verdict(self) -> Verdict:
        """``breaking``: a call flipped, a tool was removed, or an input schema broke;
        ``changed``: any other difference; ``same``: none."""
        found: set[str] = set()
        for task in self.tasks:
            found.update(call.verdict for call in task.calls)
            if task.contract is not None:
                found.add(task.contract.verdict)
        if found & {FLIPPED, "breaking"}:
            return "breaking"
        return "changed" if found & {CONTENT_CHANGED, "changed"} else "same"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "counts": self.counts(),
            "tasks": [task.as_dict() for task in self.tasks],
        }


async def verify(
    suite: Mapping[str, Any],
    *,
    command: Sequence[str] = (),
    url: str | None = None,
    task_ids: Sequence[str] = (),
    timeout: float | None = None,
) -> Report:
    """Send each task's recorded calls to the live server (a stdio ``command`` or a streamable
    HTTP ``url``), one session per task, and judge the answers and the tool list. A failure of
    the connection itself (the server cannot be started, it dies) raises."""
    from toolcall_spec.mcp.fixture_server import recorded_tools  # noqa: PLC0415

    report = Report()
    for index, task in enumerate(suite.get("tasks") or []):
        if task_ids and task.get("taskId") not in task_ids:
            continue
        task_report = TaskReport(str(task.get("taskId")), format_path(["tasks", index]))
        async with _client(command, url, timeout) as client:
            recorded = recorded_tools(task)
            if recorded is not None:
                live = await _listed_tools(client)
                task_report.contract = judge_contract(recorded, live, recorded_tools_path(index))
            entries = (task.get("fixtures") or {}).get("toolResponses") or []
            for number, entry in enumerate(entries):
                answer = await _call(client, entry["tool"], entry_args(entry))
                task_report.calls.append(
                    CallReport(
                        format_path(["tasks", index, "fixtures", "toolResponses", number]),
                        entry["tool"],
                        judge_call(entry, answer),
                        is_tool_error(entry),
                        answer.is_error,
                    )
                )
        report.tasks.append(task_report)
    return report


def _client(command: Sequence[str], url: str | None, timeout: float | None) -> Any:
    import mcp  # noqa: PLC0415  (the SDK's client: only when verifying)
    from mcp.client.stdio import StdioServerParameters  # noqa: PLC0415

    target: Any = url
    if command:
        # The whole environment, as a shell would pass it (the SDK's default keeps only a few).
        target = StdioServerParameters(
            command=command[0], args=list(command[1:]), env=dict(os.environ)
        )
    return mcp.Client(target, read_timeout_seconds=timeout)


async def _listed_tools(client: Any) -> list[dict[str, Any]]:
    """Every page of the server's ``tools/list``, as wire JSON."""
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(_wire(tool) for tool in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def _call(client: Any, tool: str, args: dict[str, Any]) -> RecordedCall:
    """The live answer, in the form ``record`` keeps it: a JSON-RPC error is a failure whose
    content holds the error (``RecordedCall.failed``)."""
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415

    try:
        result = await client.call_tool(tool, args)
    except MCPError as exc:
        return RecordedCall.failed(tool, args, {"error": _wire(exc.error)})
    return RecordedCall.answered(tool, args, _wire(result))


def _wire(model: Any) -> dict[str, Any]:
    wire: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return wire
