"""Small builders for the suites the host legs drive through the scripted conformance agent.

Every suite is valid against the packaged schema (a test checks each leg's suites), names the
scripted agent, and marks each recorded response with a text that occurs nowhere else, so a leg can
tell from an event or from what the agent saw exactly which entry answered a call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from toolcall_spec.json_paths import format_path
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID
from toolcall_spec.rules import is_tool_error

LOOKUP = "billing:lookup"
REFUND = "billing:refund"
"""Tools of the conformance scenarios; the reference host also has live versions of them."""

Call = tuple[str, dict[str, Any]]


def content(text: str) -> dict[str, Any]:
    """An MCP-shaped recorded response carrying one text item."""
    return {"content": [{"type": "text", "text": text}]}


def entry(
    tool: str,
    text: str,
    *,
    is_error: bool = False,
    args: dict[str, Any] | None = None,
    args_match: str | None = None,
) -> dict[str, Any]:
    """A ``toolResponses[]`` entry whose response carries ``text``."""
    out: dict[str, Any] = {"tool": tool}
    if args is not None:
        out["args"] = args
    if args_match is not None:
        out["argsMatch"] = args_match
    if is_error:
        out["isError"] = True
    out["response"] = content(text)
    return out


def task(
    task_id: str,
    calls: Sequence[Call],
    entries: Sequence[dict[str, Any]] = (),
    *,
    on_miss: str | None = None,
) -> dict[str, Any]:
    """A task that scripts ``calls`` (in order) against ``entries``."""
    fixtures: dict[str, Any] = {"toolResponses": list(entries)}
    if on_miss is not None:
        fixtures["onMiss"] = on_miss
    return {
        "taskId": task_id,
        "input": {"calls": [{"tool": tool, "args": args} for tool, args in calls]},
        "expected": {
            "kind": "golden",
            "match": {"strategy": "json-match", "value": [{"tool": tool} for tool, _ in calls]},
        },
        "fixtures": fixtures,
    }


def suite(
    name: str, tasks: Sequence[dict[str, Any]], *, modes: Sequence[str] = ("golden",)
) -> dict[str, Any]:
    """A suite ``toolcall-spec.evals.<name>`` of ``tasks`` declaring ``modes``."""
    return {
        "suiteId": f"toolcall-spec.evals.{name}",
        "version": "1.0.0",
        "targetAgentId": SCRIPTED_AGENT_ID,
        "modes": list(modes),
        "tasks": list(tasks),
    }


def one_call_suite(name: str, *, modes: Sequence[str] = ("golden",)) -> dict[str, Any]:
    """The smallest runnable suite: one call answered by one success entry."""
    return suite(
        name,
        [task("one-call", [(LOOKUP, {"id": "c-1"})], [entry(LOOKUP, f"{name}-ok")])],
        modes=modes,
    )


def entry_member_paths(suite: Mapping[str, Any], member: str) -> list[str]:
    """The full path of ``member`` in every fixture entry that has it (``isError`` counts only
    when it is the JSON boolean ``true``), e.g. ``tasks[0].fixtures.toolResponses[0].isError``."""
    found: list[str] = []
    for t, a_task in enumerate(suite.get("tasks", [])):
        for e, an_entry in enumerate((a_task.get("fixtures") or {}).get("toolResponses", [])):
            present = is_tool_error(an_entry) if member == "isError" else member in an_entry
            if present:
                found.append(format_path(["tasks", t, "fixtures", "toolResponses", e, member]))
    return found


def marker_of(value: Any, markers: Sequence[str]) -> str | None:
    """Which of ``markers`` (the texts of a suite's recorded responses) ``value`` carries, when it
    carries exactly one; hosts may wrap a response, so the marker is looked for in its JSON."""
    text = orjson.dumps(value).decode()
    found = [marker for marker in markers if marker in text]
    return found[0] if len(found) == 1 else None
