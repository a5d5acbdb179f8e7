"""The fixture server: the first unconsumed matching entry in declaration order, then consumed."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.search import found

from toolcall_spec.replay import fixtures, matching
from toolcall_spec.replay.fixtures import MISS, FixtureServer, Served
from toolcall_spec.replay.matching import args_match

LOOKUP = "billing:lookup"


@pytest.mark.requirement("toolcall-spec.requirement.replay.first-unconsumed-match")
def test_first_unconsumed_match_in_declaration_order() -> None:
    server = FixtureServer(
        [
            {"tool": LOOKUP, "args": {"id": "c-2"}, "response": "other id"},
            {"tool": LOOKUP, "isError": True, "response": "down"},
            {"tool": "crm:find", "response": "other tool"},
            {"tool": LOOKUP, "args": {"id": "c-1"}, "response": "ok"},
            {"tool": LOOKUP, "response": "any"},
        ]
    )
    first = server.serve(LOOKUP, {"id": "c-1"})
    assert isinstance(first, Served)
    assert (first.index, first.is_error, first.response) == (1, True, "down")
    second = server.serve(LOOKUP, {"id": "c-1"})
    assert isinstance(second, Served)
    assert (second.index, second.is_error) == (3, False)
    third = server.serve(LOOKUP, {"id": "c-1"})
    assert isinstance(third, Served)
    assert third.index == 4
    assert server.serve(LOOKUP, {"id": "c-1"}) is MISS
    assert server.served == [1, 3, 4]
    assert server.unconsumed() == [0, 2]


def test_fail_on_the_second_call_and_succeed_on_the_third() -> None:
    server = FixtureServer(
        [
            {"tool": LOOKUP, "response": 1},
            {"tool": LOOKUP, "isError": True, "response": 2},
            {"tool": LOOKUP, "response": 3},
        ]
    )
    answers = [server.serve(LOOKUP, {}) for _ in range(3)]
    assert [a.is_error for a in answers if isinstance(a, Served)] == [False, True, False]


def test_unknown_tool_and_empty_server_miss() -> None:
    assert FixtureServer([]).serve(LOOKUP, {}) is MISS
    assert FixtureServer([{"tool": "crm:find"}]).serve(LOOKUP, {}) is MISS
    assert repr(MISS) == "MISS"


def test_only_the_literal_true_makes_an_error_entry() -> None:
    for flag in ("true", 1, None, False):
        served = FixtureServer([{"tool": LOOKUP, "isError": flag}]).serve(LOOKUP, {})
        assert isinstance(served, Served)
        assert not served.is_error


def test_for_task_reads_the_task_fixtures() -> None:
    task = {"fixtures": {"toolResponses": [{"tool": LOOKUP, "response": "r"}]}}
    assert isinstance(FixtureServer.for_task(task).serve(LOOKUP, {}), Served)
    assert FixtureServer.for_task({}).serve(LOOKUP, {}) is MISS


# --- the indexed server against the plain scan --------------------------------------------------


class Level(IntEnum):
    ONE = 1


class Text(str):
    """A ``str`` subclass: JSON equality does not take it for a plain string."""


POOL: tuple[Any, ...] = (
    1, 1.0, True, False, 0, 0.0, -0.0, "1", "c-1", None, [1], [1.0], [True], {"k": 1},
    {"k": 1.0}, {"k": [None, {"j": False}]}, 2**53 + 1, float(2**53), float("nan"),
    Level.ONE, Text("c-1"), (1,),
)  # fmt: skip
"""Values JSON equality must tell apart or join, and Python values JSON has no word for."""
NAMES = ("a", "b", "c", "d", "e")
TOOLS = (LOOKUP, "crm:find")
pool_args = st.one_of(
    st.dictionaries(st.sampled_from(NAMES), st.sampled_from(POOL), max_size=4),
    st.sampled_from(POOL),
)


@st.composite
def mixed_entries(draw: st.DrawFn) -> Any:
    """An entry with or without args; exact, subset, defaulted or odd argsMatch values."""
    if draw(st.integers(0, 30)) == 0:
        return draw(st.sampled_from(["not an entry", {"args": {}}, {"tool": 7}]))
    entry: dict[str, Any] = {"tool": draw(st.sampled_from(TOOLS))}
    if draw(st.integers(0, 3)):
        entry["args"] = draw(pool_args)
        match = draw(st.sampled_from((None, "exact", "subset", "subset", "SUBSET")))
        if match is not None:
            entry["argsMatch"] = match
    return entry


def near_miss(value: Any) -> Any:
    """The value with each boolean or 0/1 swapped for its look-alike (true -> 1, 1 -> true)."""
    if isinstance(value, dict):
        return {name: near_miss(item) for name, item in value.items()}
    if isinstance(value, list):
        return [near_miss(item) for item in value]
    if value.__class__ is bool:
        return int(value)
    if value.__class__ is int and value in (0, 1):
        return bool(value)
    return value


@st.composite
def mixes(draw: st.DrawFn) -> tuple[list[Any], list[tuple[str, Any]]]:
    """Entries and a sequence of calls, half of them aimed at an entry's args (sometimes with
    extra members, so subset entries match), in any order."""
    entries = draw(st.lists(mixed_entries(), max_size=40))
    aimed = [e for e in entries if isinstance(e, dict) and isinstance(e.get("tool"), str)]
    calls: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(0, 50))):
        aim = draw(st.booleans())
        if aimed and aim:
            target = draw(st.sampled_from(aimed))
            args = target.get("args", {})
            if isinstance(args, dict) and draw(st.booleans()):
                args = {**draw(pool_args.filter(lambda a: isinstance(a, dict))), **args}
            if draw(st.integers(0, 3)) == 0:
                args = near_miss(args)
            calls.append((target["tool"], args))
        else:
            calls.append((draw(st.sampled_from(TOOLS)), draw(pool_args)))
    return entries, calls


def scan_serving(entries: list[Any], calls: list[tuple[str, Any]]) -> list[int | None]:
    """The specification read literally: the first entry in declaration order that names the
    tool, is not consumed and matches (``args_match``), for each call in turn."""
    consumed: set[int] = set()
    out: list[int | None] = []
    for tool, args in calls:
        chosen = next(
            (
                i
                for i, e in enumerate(entries)
                if i not in consumed
                and isinstance(e, dict)
                and e.get("tool") == tool
                and args_match(e, args)
            ),
            None,
        )
        if chosen is not None:
            consumed.add(chosen)
        out.append(chosen)
    return out


def indexed_serving(entries: list[Any], calls: list[tuple[str, Any]]) -> list[int | None]:
    server = FixtureServer(entries)
    out: list[int | None] = []
    for tool, args in calls:
        served = server.serve(tool, args)
        out.append(served.index if isinstance(served, Served) else None)
    assert server.served == [i for i in out if i is not None]
    expected_left = [
        i
        for i, e in enumerate(entries)
        if isinstance(e, dict) and isinstance(e.get("tool"), str) and i not in server.served
    ]
    assert server.unconsumed() == expected_left
    return out


def serves_like_the_scan(mix: tuple[list[Any], list[tuple[str, Any]]]) -> bool:
    entries, calls = mix
    return indexed_serving(entries, calls) == scan_serving(entries, calls)


@given(mixes())
@settings(max_examples=250)
@pytest.mark.requirement("toolcall-spec.requirement.replay.first-unconsumed-match")
@pytest.mark.requirement("toolcall-spec.requirement.replay.args-matching")
def test_the_indexed_server_serves_as_the_scan(
    mix: tuple[list[Any], list[tuple[str, Any]]],
) -> None:
    """Slow on purpose (over 10 s): a differential property of the indexed fixture server against
    the linear scan, over generated mixes of entries and calls."""
    assert serves_like_the_scan(mix)


def test_the_index_handles_many_subset_shapes() -> None:
    """More required-name sets than subsets of the call's names: the server enumerates the
    call's subsets instead of the sets; the earliest match still wins."""
    names = [f"m{i}" for i in range(12)]
    entries: list[Any] = [
        {"tool": LOOKUP, "args": dict.fromkeys(names[: i % 12 + 1], 1), "argsMatch": "subset"}
        for i in range(24)
    ]
    entries.insert(5, {"tool": LOOKUP, "args": {"m0": 1.0}, "argsMatch": "subset"})
    calls = [(LOOKUP, {"m0": 1, "m1": 1})] * 5 + [(LOOKUP, dict.fromkeys(names, 1))] * 25
    assert indexed_serving(entries, calls) == scan_serving(entries, calls)


def _mutant_prefers_specific_entries(index: Any, args: Any) -> tuple[list[Any], bool]:
    """A planted defect: entries without args are offered only when nothing else matches."""
    found, exact = ORIGINAL_CANDIDATES(index, args)
    specific = [bucket for bucket in found if bucket is not index.without_args]
    return (specific or found), exact


ORIGINAL_CANDIDATES = fixtures._ToolIndex.candidates


@pytest.mark.parametrize(
    ("target", "name", "mutant"),
    [
        (fixtures._ToolIndex, "candidates", _mutant_prefers_specific_entries),
        (matching, "_TRUE", 1),  # true keyed as 1, and the key still called exact
    ],
)
def test_the_property_catches_planted_defects(
    monkeypatch: pytest.MonkeyPatch, target: Any, name: str, mutant: Any
) -> None:
    """Slow on purpose (over 10 s): a search of up to 2,000 mixes for the planted defect's
    counterexample."""
    monkeypatch.setattr(target, name, mutant)
    mix = found(mixes(), lambda mix: not serves_like_the_scan(mix))
    assert not serves_like_the_scan(mix)
