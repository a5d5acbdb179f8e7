"""``replay --format timeline``: a run's event log as one readable line per event, then the
summary, for a person at a terminal (the JSON form stays the one for programs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

MAX_VALUE_WIDTH = 60
"""Arguments and responses longer than this are cut with an ellipsis: one event, one line."""


def timeline(events: Iterable[Mapping[str, Any]], summary: Mapping[str, Any]) -> str:
    lines = [_event_line(event) for event in events]
    misses = summary.get("fixtureMissCount", 0)
    verdict = "passed" if summary.get("passed") else "FAILED"
    lines.append(
        f"summary: {verdict}, score {summary.get('aggregateScore')}, "
        f"{summary.get('passedCount')}/{summary.get('taskCount')} tasks passed, "
        f"{misses} fixture {'miss' if misses == 1 else 'misses'}"
    )
    return "\n".join(lines) + "\n"


def _event_line(event: Mapping[str, Any]) -> str:
    kind = str(event.get("type", "?"))
    payload = event.get("payload")
    payload = payload if isinstance(payload, Mapping) else {}
    describe = _DESCRIBERS.get(kind, _generic)
    return f"{event.get('sequence', '?'):>3}  {kind:<20} {describe(payload)}"


def _short(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= MAX_VALUE_WIDTH else text[: MAX_VALUE_WIDTH - 1] + "…"


def _started(p: Mapping[str, Any]) -> str:
    return f"suite {p.get('suiteId')} {p.get('suiteVersion')}, {p.get('taskCount')} task(s)"


def _called(p: Mapping[str, Any]) -> str:
    return f"{p.get('toolName')} {_short(p.get('inputs', {}))}  [{p.get('callId')}]"


def _returned(p: Mapping[str, Any]) -> str:
    error = p.get("error")
    if isinstance(error, Mapping):
        answer = f"ERROR {error.get('code')}: {error.get('message')}"
    else:
        answer = f"ok {_short(p.get('outcome'))}"
    return f"{p.get('toolName')} -> {answer}  [{p.get('callId')}]"


def _scored(p: Mapping[str, Any]) -> str:
    verdict = "passed" if p.get("passed") else "FAILED"
    return f"task {p.get('taskId')}: score {p.get('score')}, {verdict}"


def _completed(p: Mapping[str, Any]) -> str:
    verdict = "passed" if p.get("passed") else "FAILED"
    return f"aggregate score {p.get('aggregateScore')}, {verdict}"


def _generic(p: Mapping[str, Any]) -> str:
    return _short(dict(p))


_DESCRIBERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "eval.started": _started,
    "agent.tool-called": _called,
    "agent.tool-returned": _returned,
    "eval.scored": _scored,
    "eval.completed": _completed,
}
