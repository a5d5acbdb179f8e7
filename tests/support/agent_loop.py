"""A small scripted agent over the ``mcp`` client: the kind of loop a real agent runs, without a
model. It lists the tools, then works through a plan; a step whose tool answers ``isError: true``
is retried (up to ``retries`` times), and a step whose tool is not listed is skipped. Its
transcript is what it saw, so a recorded session and its replay can be compared call by call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp
from mcp.types import TextContent


@dataclass(frozen=True)
class Step:
    tool: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Seen:
    """One call the agent made and what it received."""

    tool: str
    args: dict[str, Any]
    is_error: bool
    text: str


async def run_agent(client: mcp.Client, plan: list[Step], retries: int = 2) -> list[Seen]:
    listed = {tool.name for tool in (await client.list_tools()).tools}
    transcript: list[Seen] = []
    for step in plan:
        if step.tool not in listed:
            continue
        for _ in range(1 + retries):
            result = await client.call_tool(step.tool, step.args)
            text = " ".join(b.text for b in result.content if isinstance(b, TextContent))
            transcript.append(Seen(step.tool, step.args, result.is_error, text))
            if not result.is_error:
                break
    return transcript
