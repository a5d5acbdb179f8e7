"""Event log and summary legs: every event is schema-valid, the log is in order, error and
outcome never appear together, and the summary counts misses per task and in total."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolcall_spec.capabilities import FIXTURE_ERRORS
from toolcall_spec.conformance.adapter import HostAdapter
from toolcall_spec.conformance.leg import CompletedRun, Context, Leg, is_count
from toolcall_spec.conformance.legs_replay import C1, POSTURE
from toolcall_spec.conformance.outcomes import LegFailedError, Verdict, check, passed
from toolcall_spec.conformance.suites import LOOKUP, REFUND, entry, suite, task
from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.openwop_wire import EVAL_COMPLETED, EVAL_STARTED, RUN_COMPLETED, RUN_STARTED
from toolcall_spec.validation import validate


def two_task_suite() -> dict[str, Any]:
    """Two tasks: a served call then a miss, and one served call."""
    return suite(
        "event-log",
        [
            task("first", [(LOOKUP, C1), (REFUND, C1)], [entry(LOOKUP, "log-first")]),
            task("second", [(REFUND, C1)], [entry(REFUND, "log-second")]),
        ],
    )


def sample_runs(ctx: Context) -> Iterator[tuple[str, CompletedRun]]:
    """Runs whose logs hold a success, a miss error and, when the host serves them, a served
    error: together they exercise both sides of ``agent.tool-returned``."""
    yield "the two-task suite", ctx.run(two_task_suite())
    if ctx.advertises(FIXTURE_ERRORS):
        yield f"the fixture {FIXTURE_ERROR}", ctx.run(load_fixture(FIXTURE_ERROR))


def error_outcome_exclusive(adapter: HostAdapter, ctx: Context) -> Verdict:
    errors = 0
    for what, run in sample_runs(ctx):
        for number, payload in enumerate(run.returned(), 1):
            both = "error" in payload and "outcome" in payload
            check(not both, f"{what}: agent.tool-returned {number} carries error and outcome")
            errors += "error" in payload
    check(errors > 0, "no agent.tool-returned carried an error, so exclusivity was not exercised")
    noun = "error" if errors == 1 else "errors"
    return passed(f"{errors} {noun} recorded, none beside an outcome")


def schema_valid(adapter: HostAdapter, ctx: Context) -> Verdict:
    count = 0
    for what, run in sample_runs(ctx):
        for event in run.events:
            count += 1
            problems = [p for p in validate(event, "run-event") if p.severity == "error"]
            if problems:
                kind = event.get("type") if isinstance(event, dict) else None
                raise LegFailedError(f"{what}: event {kind!r} is invalid: {problems[0]}")
    check(count > 0, "the runs produced no events")
    return passed(f"{count} events valid against the run-event schema")


def log_order(adapter: HostAdapter, ctx: Context) -> Verdict:
    a_suite = two_task_suite()
    run = ctx.run(a_suite)
    events = run.events
    sequences = [e.get("sequence") for e in events]
    check(
        all(type(s) is int for s in sequences) and sequences == list(range(len(events))),
        f"sequences are {sequences}, expected 0..{len(events) - 1} in order",
    )
    foreign = sorted({str(e.get("runId")) for e in events} - {run.run_id})
    check(not foreign, f"events carry another runId: {foreign}")
    types = [e.get("type") for e in events]
    check(types[:2] == [RUN_STARTED, EVAL_STARTED], f"the log starts with {types[:2]}")
    check(types[-2:] == [EVAL_COMPLETED, RUN_COMPLETED], f"the log ends with {types[-2:]}")
    check(types.count(EVAL_COMPLETED) == 1, "eval.completed appears more than once")
    _check_call_pairs(run)
    scored = [p.get("taskId") for p in run.payloads("eval.scored")]
    task_ids = [t["taskId"] for t in a_suite["tasks"]]
    check(scored == task_ids, f"eval.scored events are for {scored}, expected {task_ids}")
    return passed(f"{len(events)} events: started, call/return pairs, scored per task, completed")


def _check_call_pairs(run: CompletedRun) -> None:
    """Each ``agent.tool-called`` is followed by its ``agent.tool-returned`` (same callId) before
    the next call; no return comes without its call."""
    open_call: str | None = None
    pairs = 0
    for event in run.events:
        kind, payload = event.get("type"), event.get("payload") or {}
        if kind == "agent.tool-called":
            check(open_call is None, f"call {open_call} has no agent.tool-returned before the next")
            open_call = payload.get("callId")
        elif kind == "agent.tool-returned":
            call_id = payload.get("callId")
            check(
                open_call is not None and call_id == open_call,
                f"agent.tool-returned for {call_id!r} does not follow its agent.tool-called "
                f"(open call: {open_call!r})",
            )
            open_call, pairs = None, pairs + 1
    check(open_call is None, f"call {open_call} never returned")
    check(pairs == 3, f"expected 3 call/return pairs, found {pairs}")


def summary_miss_count(adapter: HostAdapter, ctx: Context) -> Verdict:
    expected = {"one-miss": 1, "two-misses": 2, "no-miss": 0}
    counting = suite(
        "miss-count",
        [
            task("one-miss", [(LOOKUP, C1)]),
            task("two-misses", [(LOOKUP, C1), (LOOKUP, C1), (REFUND, C1)], [entry(REFUND, "mc")]),
            task("no-miss", [(REFUND, C1)], [entry(REFUND, "mc-served")]),
        ],
    )
    summary = ctx.run(counting).summary
    problems = [p for p in validate(summary, "eval-summary") if p.severity == "error"]
    check(not problems, f"the summary is invalid: {problems[:1]}")
    tasks = summary.get("tasks")
    listed = tasks if isinstance(tasks, list) else []
    per_task = {t.get("taskId"): t.get("fixtureMissCount") for t in listed if isinstance(t, dict)}
    for task_id, count in expected.items():
        got = per_task.get(task_id)
        check(is_count(got, count), f"task {task_id}: fixtureMissCount {got!r}, expected {count}")
    total = summary.get("fixtureMissCount")
    check(is_count(total, 3), f"the summary's fixtureMissCount is {total!r}, expected 3 (1+2+0)")
    return passed("per task 1, 2 and 0; total 3")


LEGS = (
    Leg(
        "toolcall-spec.requirement.events.error-outcome-exclusive",
        "no agent.tool-returned carries error and outcome together",
        error_outcome_exclusive,
        POSTURE,
    ),
    Leg(
        "toolcall-spec.requirement.events.log-order",
        "sequence from 0, run.started then eval.started first, each call followed by its "
        "return, eval.scored per task, eval.completed then run.completed last",
        log_order,
        POSTURE,
    ),
    Leg(
        "toolcall-spec.requirement.events.schema-valid",
        "every event of the sample runs validates against the run-event schema",
        schema_valid,
        POSTURE,
    ),
    Leg(
        "toolcall-spec.requirement.events.summary-miss-count",
        "the summary is valid and counts misses per task and in total",
        summary_miss_count,
        POSTURE,
    ),
)
