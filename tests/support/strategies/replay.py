"""Hand-written Hypothesis strategies for fixture replay: valid suites whose tasks script the
scripted conformance agent, with fixture entries and calls drawn from small pools so that
matches, near-matches (``1`` vs ``1.0`` vs ``true``), repeats, errors and misses are all common.

``suites()`` draws a suite any reference host accepts (every entry may use ``args``/``argsMatch``
and ``isError``); ``suites(mode="live-shadow")`` declares that mode instead.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TOOLS = ("billing:lookup", "billing:refund", "crm:find")
ARG_KEYS = ("id", "n", "flag")
ARG_VALUES: tuple[Any, ...] = (1, 1.0, True, False, 0, "1", "c-1", None, [1], {"k": 1}, {"k": 1.0})
"""Values that JSON equality must tell apart (``true``/``1``, ``false``/``0``) or join
(``1``/``1.0``)."""

args_values = st.dictionaries(st.sampled_from(ARG_KEYS), st.sampled_from(ARG_VALUES), max_size=3)

responses = st.one_of(
    st.builds(
        lambda text: {"content": [{"type": "text", "text": text}]},
        st.text(st.sampled_from("abc{}:\"' 01"), max_size=8),
    ),
    st.sampled_from(ARG_VALUES),
    st.just({"content": [{"type": "text", "text": "x"}], "isError": True}),  # opaque: a success
)


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    entry: dict[str, Any] = {"tool": draw(st.sampled_from(TOOLS))}
    if draw(st.booleans()):
        entry["args"] = draw(args_values)
        match = draw(st.sampled_from((None, "exact", "subset")))
        if match is not None:
            entry["argsMatch"] = match
    flag = draw(st.sampled_from((None, True, False)))
    if flag is not None:
        entry["isError"] = flag
    if draw(st.integers(0, 4)):  # mostly with a response; sometimes without one
        entry["response"] = draw(responses)
    return entry


@st.composite
def calls_for(draw: st.DrawFn, fixture_entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls, half of them aimed at the entries (same tool, the entry's args, sometimes with an
    extra member), so that hits, subset hits and misses all occur."""
    out = []
    for _ in range(draw(st.integers(0, 7))):
        if len(fixture_entries) > 0 and draw(st.booleans()):
            target = draw(st.sampled_from(fixture_entries))
            args = dict(target.get("args", {}))
            if draw(st.booleans()):
                args.update(draw(args_values))
            out.append({"tool": target["tool"], "args": args})
        else:
            out.append({"tool": draw(st.sampled_from(TOOLS)), "args": draw(args_values)})
    return out


@st.composite
def tasks(draw: st.DrawFn, task_id: str) -> dict[str, Any]:
    fixture_entries = draw(st.lists(entries(), max_size=6))
    fixtures: dict[str, Any] = {"toolResponses": fixture_entries}
    on_miss = draw(st.sampled_from((None, "error", "live")))
    if on_miss is not None:
        fixtures["onMiss"] = on_miss
    task: dict[str, Any] = {
        "taskId": task_id,
        "input": {"calls": draw(calls_for(fixture_entries))},
        "expected": {"kind": "golden", "match": {"strategy": "json-match", "value": []}},
    }
    if fixture_entries or on_miss is not None or draw(st.booleans()):
        task["fixtures"] = fixtures
    return task


@st.composite
def suites(draw: st.DrawFn, mode: str = "golden") -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    return {
        "suiteId": "toolcall-spec.evals.generated",
        "version": "1.0.0",
        "modes": [mode],
        "tasks": [draw(tasks(f"task-{i}")) for i in range(count)],
    }
