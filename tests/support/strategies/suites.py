"""Agent eval suites."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.ids import author_ids, opaque_values
from support.strategies.values import (
    DIGITS,
    EVAL_MODES,
    LOWER,
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_objects,
    json_values,
    objects_of,
    pattern_words,
)

# --- suite --------------------------------------------------------------------------------------


@st.composite
def _fixture_entries(draw: Draw) -> dict[str, Any]:
    """``{tool, args?, argsMatch?, response?, isError?}``; ``argsMatch`` only with ``args``. A
    success entry may carry an MCP result with ``isError`` in its opaque response."""
    entry: dict[str, Any] = {"tool": draw(free_text(1))}
    if draw(st.booleans()):
        entry["args"] = draw(json_objects)
        if draw(st.booleans()):
            entry["argsMatch"] = draw(st.sampled_from(["exact", "subset"]))
    if draw(st.booleans()):
        entry["isError"] = draw(st.booleans())
    if draw(st.integers(0, 3)):
        entry["response"] = draw(opaque_values)
    return entry


_expected = objects_of(
    {"kind": st.sampled_from(["golden", "rubric"])},
    {
        "match": objects_of(
            {
                "strategy": st.sampled_from(["exact", "contains", "json-match"]),
                "value": json_values(),
            }
        ),
        "rubric": st.lists(
            objects_of({"criterion": free_text(1), "weight": json_numbers(0, 1)}),
            min_size=1,
            max_size=2,
        ),
    },
)

_fixtures = objects_of(
    {},
    {
        "toolResponses": st.lists(_fixture_entries(), max_size=3),
        "onMiss": st.sampled_from(["fail", "live", "error"]),
        "memorySeed": st.lists(json_objects, max_size=2),
    },
)

_eval_task = objects_of(
    {
        "taskId": pattern_words(LOWER + DIGITS, LOWER + DIGITS + "-"),
        "input": json_values(),
        "expected": _expected,
    },
    {"fixtures": _fixtures},
)

semvers = st.builds("{}.{}.{}".format, *(st.integers(0, 120) for _ in range(3)))

suites = objects_of(
    {
        "suiteId": st.builds(
            "{}.evals.{}".format,
            st.text(LOWER + DIGITS + ".-", min_size=1, max_size=10),
            st.text(LOWER + DIGITS + "-", min_size=1, max_size=10),
        ),
        "version": semvers,
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
        "thresholds": objects_of(
            {},
            {
                "passScore": json_numbers(0, 1),
                "maxCostUsd": json_numbers(0),
                "maxP95LatencyMs": json_integers(0),
            },
        ),
    },
)
