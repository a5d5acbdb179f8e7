"""Scoring one task's output against its ``expected`` (RFC 0081 golden matches).

Golden strategies: ``exact`` (equal JSON values), ``contains`` (the expected string occurs in the
output's text: the output itself when it is a string, else its string values, one per line) and
``json-match`` (recursive: an expected object needs each of its members present and matching, an
expected array the same length and matching items, a scalar an equal JSON value). A task scores 1
or 0. The reference host has no rubric judge: it does not advertise the ``rubric`` mode, and a
rubric task in a golden run scores 0 with that reason. Reasons name paths, never suite content.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolcall_spec.json_paths import format_path
from toolcall_spec.json_values import json_equal


@dataclass(frozen=True, slots=True)
class Score:
    score: float
    passed: bool
    reason: str | None = None
    """Why the task failed; ``None`` when it passed."""


PASS = Score(1.0, True)


def _fail(reason: str) -> Score:
    return Score(0.0, False, reason)


def score_task(expected: Any, output: Any) -> Score:
    """Score ``output`` against a task's ``expected`` member."""
    kind = expected.get("kind") if isinstance(expected, Mapping) else None
    if kind == "rubric":
        return _fail("rubric task: this host has no rubric judge")
    match = expected.get("match") if isinstance(expected, Mapping) else None
    if not isinstance(match, Mapping):
        return _fail("golden task without expected.match: nothing to compare")
    strategy, value = match.get("strategy"), match.get("value")
    if strategy == "exact":
        return PASS if json_equal(value, output) else _fail("exact: the output differs")
    if strategy == "contains":
        if not isinstance(value, str):
            return _fail("contains: expected.match.value is not a string")
        found = value in output_text(output)
        return PASS if found else _fail("contains: the output's text does not contain the value")
    if strategy == "json-match":
        mismatch = json_mismatch(value, output)
        return PASS if mismatch is None else _fail(f"json-match: mismatch at {mismatch}")
    return _fail(f"unknown match strategy {strategy!r}")


def output_text(output: Any) -> str:
    """The text ``contains`` searches: a string output itself, else every string value in it (in
    document order, one per line), so a tool's text content is searched without JSON escaping."""
    if isinstance(output, str):
        return output
    return "\n".join(_strings(output))


def _strings(value: Any) -> Iterator[str]:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            pending.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            pending.extend(reversed(item))


def json_mismatch(expected: Any, actual: Any) -> str | None:
    """A path (in the output) where ``actual`` fails to json-match ``expected``, or ``None``
    when it matches."""
    pending: list[tuple[Any, Any, list[str | int]]] = [(expected, actual, [])]
    while pending:
        want, got, at = pending.pop()
        if isinstance(want, Mapping):
            if not isinstance(got, Mapping):
                return format_path(at)
            for key in reversed(list(want)):
                if key not in got:
                    return format_path([*at, key])
                pending.append((want[key], got[key], [*at, key]))
        elif isinstance(want, list):
            if not isinstance(got, list) or len(got) != len(want):
                return format_path(at)
            pending.extend(
                (w, g, [*at, i])
                for i, (w, g) in reversed(list(enumerate(zip(want, got, strict=True))))
            )
        elif not json_equal(want, got):
            return format_path(at)
    return None
