"""The fixture server: the first unconsumed matching entry in declaration order, then consumed."""

from __future__ import annotations

import pytest

from toolcall_spec.replay.fixtures import MISS, FixtureServer, Served

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
