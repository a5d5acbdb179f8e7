"""The scripted conformance agent ``core.conformance.agents.scripted`` (DESIGN.md).

Its task input is ``{"calls": [{"tool": T, "args": {...}}, ...]}``. It makes every call in order,
whatever the answers, and its output is what it received for each call:
``[{"tool": T, "isError": bool, "content": [...]}]``. So what the agent saw is observable, which is
what RFC 0245 §B asks a host to get right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from toolcall_spec.json_paths import format_path
from toolcall_spec.problems import Problem

SCRIPTED_AGENT_ID = "core.conformance.agents.scripted"


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """What the agent receives for one call: a tool error or not, and the content it reads."""

    is_error: bool
    content: list[Any]


CallTool = Callable[[str, dict[str, Any]], ToolAnswer]
"""How the agent reaches the host: ``call_tool(tool, args) -> ToolAnswer``."""


def agent_content(response: Any) -> list[Any]:
    """The content an agent reads from a tool response: an MCP-shaped response (an object with a
    ``content`` list) gives its content; anything else is one text item holding its JSON."""
    if isinstance(response, Mapping) and isinstance(response.get("content"), list):
        return list(response["content"])
    text = orjson.dumps(response, option=orjson.OPT_SORT_KEYS).decode()
    return [{"type": "text", "text": text}]


def script_problems(task_input: Any, at: Sequence[str | int] = ()) -> Iterator[Problem]:
    """Why a task input is not a script for this agent; paths start with ``at`` (where the input
    sits, e.g. ``["tasks", 0, "input"]``)."""
    if not isinstance(task_input, Mapping) or not isinstance(task_input.get("calls"), list):
        yield Problem(format_path(at), 'the scripted agent needs an object {"calls": [...]}')
        return
    for i, call in enumerate(task_input["calls"]):
        where = [*at, "calls", i]
        if not isinstance(call, Mapping):
            yield Problem(format_path(where), "a call is an object {tool, args?}")
            continue
        tool = call.get("tool")
        if not isinstance(tool, str) or not tool:
            yield Problem(format_path([*where, "tool"]), "a call names its tool (a string)")
        if "args" in call and not isinstance(call["args"], Mapping):
            yield Problem(format_path([*where, "args"]), "a call's args is an object")
        for unknown in sorted(set(call) - {"tool", "args"}):
            yield Problem(format_path([*where, unknown]), "a call has only tool and args")


def parse_script(task_input: Any) -> list[ScriptedCall]:
    """The calls of a task input already checked by ``script_problems``."""
    return [ScriptedCall(call["tool"], dict(call.get("args", {}))) for call in task_input["calls"]]


class ScriptedAgent:
    """Makes the scripted calls in order and reports what it received."""

    agent_id = SCRIPTED_AGENT_ID

    def run(self, task_input: Any, call_tool: CallTool) -> list[dict[str, Any]]:
        output: list[dict[str, Any]] = []
        for call in parse_script(task_input):
            answer = call_tool(call.tool, call.args)
            output.append(
                {"tool": call.tool, "isError": answer.is_error, "content": answer.content}
            )
        return output
