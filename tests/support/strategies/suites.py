"""Agent eval suites."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.ids import _opaque, author_ids
from support.strategies.values import (
    DIGITS,
    EVAL_MODES,
    LOWER,
    Draw,
    _integers,
    _json_objects,
    _numbers,
    _obj,
    _text,
    _word,
    json_values,
)

# --- suite --------------------------------------------------------------------------------------


@st.composite
def _fixture_entries(draw: Draw) -> dict[str, Any]:
    """``{tool, args?, argsMatch?, response?, isError?}``; ``argsMatch`` only with ``args``. A
    success entry may carry an MCP result with ``isError`` in its opaque response."""
    entry: dict[str, Any] = {"tool": draw(_text(1))}
    if draw(st.booleans()):
        entry["args"] = draw(_json_objects)
        if draw(st.booleans()):
            entry["argsMatch"] = draw(st.sampled_from(["exact", "subset"]))
    if draw(st.booleans()):
        entry["isError"] = draw(st.booleans())
    if draw(st.integers(0, 3)):
        entry["response"] = draw(_opaque)
    return entry


_expected = _obj(
    {"kind": st.sampled_from(["golden", "rubric"])},
    {
        "match": _obj(
            {
                "strategy": st.sampled_from(["exact", "contains", "json-match"]),
                "value": json_values(),
            }
        ),
        "rubric": st.lists(
            _obj({"criterion": _text(1), "weight": _numbers(0, 1)}), min_size=1, max_size=2
        ),
    },
)

_fixtures = _obj(
    {},
    {
        "toolResponses": st.lists(_fixture_entries(), max_size=3),
        "onMiss": st.sampled_from(["fail", "live", "error"]),
        "memorySeed": st.lists(_json_objects, max_size=2),
    },
)

_eval_task = _obj(
    {
        "taskId": _word(LOWER + DIGITS, LOWER + DIGITS + "-"),
        "input": json_values(),
        "expected": _expected,
    },
    {"fixtures": _fixtures},
)

_semver = st.builds("{}.{}.{}".format, *(st.integers(0, 120) for _ in range(3)))

suites = _obj(
    {
        "suiteId": st.builds(
            "{}.evals.{}".format,
            st.text(LOWER + DIGITS + ".-", min_size=1, max_size=10),
            st.text(LOWER + DIGITS + "-", min_size=1, max_size=10),
        ),
        "version": _semver,
        "modes": st.lists(st.sampled_from(EVAL_MODES), min_size=1, unique=True),
        "tasks": st.lists(_eval_task, min_size=1, max_size=2),
    },
    {
        "targetAgentId": author_ids,
        "allowedModels": st.lists(
            st.sampled_from(
                ["reasoning", "writing", "coding", "research", "classification", "general"]
            ),
            unique=True,
        ),
        "thresholds": _obj(
            {},
            {
                "passScore": _numbers(0, 1),
                "maxCostUsd": _numbers(0),
                "maxP95LatencyMs": _integers(0),
            },
        ),
    },
)
