"""Fixture serving legs (RFC 0244 §D as DESIGN.md reads it): which entry answers a call, how
arguments match, what a miss gets and how it is counted, and live-shadow ignoring fixtures.

Each recorded response carries a marker text found nowhere else in its suite, so the leg reads
from the log which entry answered each call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolcall_spec.capabilities import EVAL_SUITE, FIXTURE_ERRORS, FIXTURE_MATCHING
from toolcall_spec.conformance.adapter import HostAdapter
from toolcall_spec.conformance.leg import CompletedRun, Context, Gate, Leg, is_count
from toolcall_spec.conformance.outcomes import (
    LegFailedError,
    LegNotRunError,
    Outcome,
    Verdict,
    check,
    passed,
    seam_missing,
)
from toolcall_spec.conformance.suites import LOOKUP, REFUND, Call, entry, marker_of, suite, task
from toolcall_spec.host.fixtures import FIXTURE_ERROR

POSTURE = Gate(requires=(EVAL_SUITE,), fixtures=(FIXTURE_ERROR,))
"""A host advertising eval suites in conformance posture (it runs the scripted agent)."""

C1, C2 = {"id": "c-1"}, {"id": "c-2"}


def check_answered_by(run: CompletedRun, expected: Sequence[str], markers: Sequence[str]) -> None:
    """Each call's ``agent.tool-returned`` carries the outcome of the expected entry, in order,
    and no call was a miss."""
    returned = run.returned()
    check(
        len(returned) == len(expected),
        f"expected {len(expected)} agent.tool-returned events, found {len(returned)}",
    )
    for number, (payload, marker) in enumerate(zip(returned, expected, strict=True), 1):
        check("outcome" in payload, f"call {number} got no outcome: {payload.get('error')!r}")
        got = marker_of(payload.get("outcome"), markers)
        check(got == marker, f"call {number} was answered by entry {got!r}, expected {marker!r}")
    misses = run.summary.get("fixtureMissCount")
    check(is_count(misses, 0), f"fixtureMissCount is {misses!r}; every call had an entry")


def scenario(name: str, calls: Sequence[Call], entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return suite(name, [task("scenario", calls, entries)])


def markers(a_suite: dict[str, Any]) -> list[str]:
    """The marker text of every recorded response of a one-task suite, in declaration order."""
    entries = a_suite["tasks"][0]["fixtures"]["toolResponses"]
    return [e["response"]["content"][0]["text"] for e in entries]


def first_unconsumed_match(adapter: HostAdapter, ctx: Context) -> Verdict:
    order = scenario(
        "first-unconsumed-match",
        [(LOOKUP, C1), (LOOKUP, C1), (REFUND, C1)],
        [entry(REFUND, "fum-refund"), *(entry(LOOKUP, f"fum-lookup-{x}") for x in "abc")],
    )
    check_answered_by(
        ctx.run(order), ["fum-lookup-a", "fum-lookup-b", "fum-refund"], markers(order)
    )
    if not ctx.advertises(FIXTURE_MATCHING):
        return passed("declaration order and consumption hold (no fixtureMatching: args not used)")
    by_args = scenario(
        "first-unconsumed-match-args",
        [(LOOKUP, C1), (LOOKUP, C1), (LOOKUP, C2)],
        [
            entry(LOOKUP, "fum-args-c2", args=C2),
            entry(LOOKUP, "fum-args-c1", args=C1),
            entry(LOOKUP, "fum-any-call"),
        ],
    )
    check_answered_by(
        ctx.run(by_args), ["fum-args-c1", "fum-any-call", "fum-args-c2"], markers(by_args)
    )
    return passed("declaration order, consumption and skipping of non-matching entries hold")


ARGS_MATCHING_CALLS: tuple[tuple[dict[str, Any], str], ...] = (
    ({"id": 1, "extra": True}, "am-catch-all-1"),  # exact refuses an extra member
    ({"id": 1.0}, "am-exact-number"),  # 1 == 1.0
    ({"flag": 1, "x": 2}, "am-catch-all-2"),  # true != 1
    ({"b": "x", "a": 1}, "am-exact-keys"),  # key order is ignored
    ({"flag": True, "x": 2}, "am-subset-flag"),  # subset: flag present and equal
)


def args_matching(adapter: HostAdapter, ctx: Context) -> Verdict:
    matching = scenario(
        "args-matching",
        [(LOOKUP, args) for args, _ in ARGS_MATCHING_CALLS],
        [
            entry(LOOKUP, "am-exact-number", args={"id": 1}, args_match="exact"),
            entry(LOOKUP, "am-subset-flag", args={"flag": True}, args_match="subset"),
            entry(LOOKUP, "am-exact-keys", args={"a": 1, "b": "x"}),
            entry(LOOKUP, "am-catch-all-1"),
            entry(LOOKUP, "am-catch-all-2"),
        ],
    )
    expected = [marker for _, marker in ARGS_MATCHING_CALLS]
    check_answered_by(ctx.run(matching), expected, markers(matching))
    return passed("exact, subset, 1 == 1.0, true != 1 and key order behave as specified")


def miss_handling(adapter: HostAdapter, ctx: Context) -> Verdict:
    errors = ctx.advertises(FIXTURE_ERRORS)
    misses = scenario(
        "miss-handling",
        [(LOOKUP, C1), (LOOKUP, C1), (REFUND, C1)],
        [entry(LOOKUP, "mh-served", is_error=errors)],
    )
    run = ctx.run(misses)
    returned = run.returned()
    check(len(returned) == 3, f"expected 3 agent.tool-returned events, found {len(returned)}")
    for number in (2, 3):
        check("error" in returned[number - 1], f"call {number} matched no entry but got no error")
    tasks = run.summary.get("tasks")
    counted = tasks[0].get("fixtureMissCount") if isinstance(tasks, list) and tasks else None
    served = "an error entry" if errors else "a success entry"
    check(
        is_count(counted, 2),
        f"the task's fixtureMissCount is {counted!r}, expected 2 (the call served by {served} "
        "is not a miss)",
    )
    total = run.summary.get("fixtureMissCount")
    check(is_count(total, 2), f"the summary's fixtureMissCount is {total!r}, expected 2")
    live = _miss_goes_live(adapter, ctx)
    return passed(f"onMiss fail: 2 misses, 2 tool errors, {served} not counted; {live}")


def _miss_goes_live(adapter: HostAdapter, ctx: Context) -> str:
    before = adapter.live_invocations()
    if before is None:
        return "onMiss live not checked (no live invocation counts seam)"
    live_suite = suite("miss-goes-live", [task("scenario", [(REFUND, C1)], on_miss="live")])
    run = ctx.complete(ctx.create(live_suite), "the onMiss live suite")
    delta = (adapter.live_invocations() or {}).get(REFUND, 0) - before.get(REFUND, 0)
    check(delta == 1, f"onMiss live: the live tool {REFUND} was invoked {delta} times, expected 1")
    total = run.summary.get("fixtureMissCount")
    check(is_count(total, 1), f"onMiss live: fixtureMissCount is {total!r}, expected 1")
    return "onMiss live: the live tool answered and the miss counted"


def live_shadow_ignores_fixtures(adapter: HostAdapter, ctx: Context) -> Verdict:
    if "live-shadow" not in ctx.modes():
        reason = "the host does not advertise the live-shadow mode"
        raise LegNotRunError(Verdict(Outcome.INAPPLICABLE, reason, missing=True))
    before = adapter.live_invocations()
    if before is None:
        raise seam_missing("live invocation counts")
    shadow = suite(
        "live-shadow",
        [
            task(
                "scenario",
                [(LOOKUP, C1), (REFUND, C1)],
                [
                    entry(LOOKUP, "ls-recorded-lookup", is_error=ctx.advertises(FIXTURE_ERRORS)),
                    entry(REFUND, "ls-recorded-refund"),
                ],
            )
        ],
        modes=("golden", "live-shadow"),
    )
    run = ctx.complete(ctx.create(shadow, mode="live-shadow"), "a live-shadow run")
    after = adapter.live_invocations() or {}
    for tool in (LOOKUP, REFUND):
        delta = after.get(tool, 0) - before.get(tool, 0)
        check(delta == 1, f"live-shadow: the live tool {tool} was invoked {delta} times, not 1")
    for number, payload in enumerate(run.returned(), 1):
        if marker_of(payload, markers(shadow)) is not None:
            raise LegFailedError(f"live-shadow: call {number} was answered from the fixtures")
    return passed("both calls went to the live tools; no recorded response was served")


LEGS = (
    Leg(
        "toolcall-spec.requirement.replay.first-unconsumed-match",
        "calls are answered by the first unconsumed matching entry, in declaration order",
        first_unconsumed_match,
        POSTURE,
    ),
    Leg(
        "toolcall-spec.requirement.replay.args-matching",
        "exact and subset argument matching, with JSON-value equality",
        args_matching,
        Gate(requires=(EVAL_SUITE, FIXTURE_MATCHING), fixtures=(FIXTURE_ERROR,)),
    ),
    Leg(
        "toolcall-spec.requirement.replay.miss-handling",
        "a call with no entry is a miss: a tool error (or the live tool under onMiss live), "
        "counted once; a served entry is never a miss",
        miss_handling,
        POSTURE,
    ),
    Leg(
        "toolcall-spec.requirement.replay.live-shadow-ignores-fixtures",
        "in live-shadow mode every call goes to the live tool and no fixture is served",
        live_shadow_ignores_fixtures,
        Gate(POSTURE.requires, fixtures=POSTURE.fixtures, seams=("live invocation counts",)),
    ),
)
