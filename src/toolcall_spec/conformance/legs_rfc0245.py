"""The RFC 0245 host legs: a recorded tool error is replayed as an error (§B), what the agent
received and that the live tool stays untouched (the two seam-gated rows), the fixed message (§D),
and the refusal on a host that does not advertise ``fixtureErrors`` (§C)."""

from __future__ import annotations

from typing import Any

from toolcall_spec.capabilities import EVAL_SUITE, FIXTURE_ERRORS, PRE_POST_EVENTS
from toolcall_spec.conformance.adapter import HostAdapter, RunRefusal
from toolcall_spec.conformance.leg import Context, Gate, Leg, is_count, non_empty_string
from toolcall_spec.conformance.outcomes import LegFailedError, Verdict, check, passed, seam_missing
from toolcall_spec.conformance.suites import LOOKUP, entry, entry_member_paths, suite, task
from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.json_values import json_equal
from toolcall_spec.rules import is_tool_error

SERVES_ERRORS = Gate(requires=(EVAL_SUITE, FIXTURE_ERRORS), fixtures=(FIXTURE_ERROR,))
"""A host in conformance posture (it lists the fixture, so it runs the scripted agent) that
claims to replay recorded errors."""

MAX_FIXED_MESSAGE = 200
"""A 'short' error message (RFC 0245 §D says short and fixed; this is our reading of short)."""


def check_served_error(payload: dict[str, Any], which: str, *, hooks: bool) -> dict[str, Any]:
    """The §B shape of an ``agent.tool-returned`` for a served error entry; returns its error."""
    error = payload.get("error")
    if not isinstance(error, dict):
        raise LegFailedError(
            f"{which} agent.tool-returned carries no error: the recorded failure was replayed "
            "as a success"
        )
    check(non_empty_string(error.get("code")), f"{which} error.code is missing or empty")
    check(non_empty_string(error.get("message")), f"{which} error.message is missing or empty")
    check("outcome" not in payload, f"{which} agent.tool-returned carries outcome beside error")
    if hooks:
        check(
            payload.get("status") == "error",
            f"{which} agent.tool-returned has status {payload.get('status')!r}; the host "
            "advertises toolHooks.prePostEvents, so it must be 'error'",
        )
    return error


def fixture_error_replayed(adapter: HostAdapter, ctx: Context) -> Verdict:
    run = ctx.run(load_fixture(FIXTURE_ERROR))
    called, returned = run.payloads("agent.tool-called"), run.returned()
    check(
        len(called) == 2, f"expected 2 agent.tool-called events for the task, found {len(called)}"
    )
    check(len(returned) == 2, f"expected 2 agent.tool-returned events, found {len(returned)}")
    hooks = ctx.advertises(PRE_POST_EVENTS)
    error = check_served_error(returned[0], "the first", hooks=hooks)
    second = returned[1]
    check(
        "outcome" in second and "error" not in second,
        "the second agent.tool-returned (the success entry) carries no outcome",
    )
    misses = run.summary.get("fixtureMissCount")
    check(is_count(misses, 0), f"the summary's fixtureMissCount is {misses!r}, expected 0")
    status = ", status error" if hooks else ""
    return passed(f"error {error['code']}{status} then an outcome; fixtureMissCount 0")


def unadvertised_refused(adapter: HostAdapter, ctx: Context) -> Verdict:
    fixture = load_fixture(FIXTURE_ERROR)
    created = ctx.create(fixture)
    if not isinstance(created, RunRefusal):
        raise LegFailedError(
            "the host accepted a suite with isError: true although it does not advertise "
            "agents.evalSuite.fixtureErrors"
        )
    check(created.status == 400, f"refused with HTTP {created.status}, expected 400")
    code = created.envelope.get("error")
    check(code == "validation_error", f"refused with error {code!r}, expected 'validation_error'")
    details = created.envelope.get("details")
    field = details.get("field") if isinstance(details, dict) else None
    (path,) = entry_member_paths(fixture, "isError")
    # "Naming the field": the full path, or a suffix of it that still names the entry.
    names_it = isinstance(field, str) and path.endswith(field) and "toolResponses[" in field
    check(names_it, f"details.field is {field!r}; it should name {path}")
    return passed(f"400 validation_error naming {field}")


def agent_receives_tool_error(adapter: HostAdapter, ctx: Context) -> Verdict:
    fixture = load_fixture(FIXTURE_ERROR)
    run = ctx.run(fixture)
    seen = adapter.agent_output(run.run_id)
    if seen is None:
        raise seam_missing("agent output")
    (only_task,) = fixture["tasks"]
    items = seen.get(only_task["taskId"])
    if (
        not isinstance(items, list)
        or len(items) != 2
        or not all(isinstance(i, dict) for i in items)
    ):
        raise LegFailedError(f"the agent should have received 2 answers, it received {items!r}")
    first, second = items
    check(is_tool_error(first), "the agent received the recorded failure as a success")
    recorded = only_task["fixtures"]["toolResponses"][0]["response"]["content"]
    check(
        json_equal(first.get("content"), recorded),
        "the agent's tool error does not carry the recorded payload as its content",
    )
    check(not is_tool_error(second), "the agent received the success entry as a tool error")
    return passed("the agent saw isError true with the recorded content, then a success")


def never_live_suite() -> dict[str, Any]:
    """An error entry under ``onMiss: live``, then a miss: only the miss may reach the live tool,
    and that one live call proves the counter moves."""
    calls = [(LOOKUP, {"id": "c-1"}), (LOOKUP, {"id": "c-1"})]
    entries = [entry(LOOKUP, "never-live-recorded-failure", is_error=True)]
    return suite("error-never-live", [task("error-then-miss", calls, entries, on_miss="live")])


def error_never_live(adapter: HostAdapter, ctx: Context) -> Verdict:
    before = adapter.live_invocations()
    if before is None:
        raise seam_missing("live invocation counts")
    run = ctx.complete(ctx.create(never_live_suite()), "the onMiss live suite")
    after = adapter.live_invocations() or {}
    delta = after.get(LOOKUP, 0) - before.get(LOOKUP, 0)
    returned = run.returned()
    check(len(returned) == 2, f"expected 2 agent.tool-returned events, found {len(returned)}")
    check("error" in returned[0], "the error entry was not served as a tool error")
    check(delta != 2, f"the live tool {LOOKUP} was called for the error entry (2 live calls)")
    check(
        delta == 1,
        f"the live tool {LOOKUP} was invoked {delta} times; exactly 1 expected (the miss under "
        "onMiss: live), so the invocation counter cannot be trusted",
    )
    return passed("onMiss live: only the miss reached the live tool (1 invocation)")


PAYLOADS = ('{"error":"upstream_down","ticket":"T-4711"}', "rate limited for tenant acme-7")
SECRETS = ("upstream_down", "T-4711", "acme-7")


def fixed_message_suite() -> dict[str, Any]:
    calls = [(LOOKUP, {"id": "c-1"}), (LOOKUP, {"id": "c-2"})]
    entries = [entry(LOOKUP, text, is_error=True) for text in PAYLOADS]
    return suite("fixed-error-message", [task("two-failures", calls, entries)])


def fixed_error_message(adapter: HostAdapter, ctx: Context) -> Verdict:
    returned = ctx.run(fixed_message_suite()).returned()
    check(len(returned) == 2, f"expected 2 agent.tool-returned events, found {len(returned)}")
    errors = [check_served_error(p, f"call {n}'s", hooks=False) for n, p in enumerate(returned, 1)]
    messages = [str(error.get("message")) for error in errors]
    for message in messages:
        echoed = next((secret for secret in SECRETS if secret in message), None)
        check(echoed is None, f"error.message {message!r} echoes the recorded payload ({echoed!r})")
        check(len(message) <= MAX_FIXED_MESSAGE, f"error.message is {len(message)} characters")
    check(
        messages[0] == messages[1],
        f"two different payloads got different messages ({messages[0]!r}, {messages[1]!r}): "
        "the message is not fixed",
    )
    return passed(f"one fixed message for both payloads: {messages[0]!r}")


LEGS = (
    Leg(
        "openwop.requirement.0245.fixture-error-replayed",
        "the fixture's error entry is logged as error (no outcome), the success as outcome; "
        "fixtureMissCount 0",
        fixture_error_replayed,
        SERVES_ERRORS,
    ),
    Leg(
        "openwop.requirement.0245.unadvertised-refused",
        "without fixtureErrors, creating a run of the fixture is refused with 400 "
        "validation_error naming the isError field",
        unadvertised_refused,
        Gate(requires=(EVAL_SUITE,), excludes=(FIXTURE_ERRORS,), fixtures=(FIXTURE_ERROR,)),
    ),
    Leg(
        "toolcall-spec.requirement.replay.agent-receives-tool-error",
        "the scripted agent receives isError true with the recorded content, then a success",
        agent_receives_tool_error,
        Gate(SERVES_ERRORS.requires, fixtures=SERVES_ERRORS.fixtures, seams=("agent output",)),
    ),
    Leg(
        "toolcall-spec.requirement.replay.error-never-live",
        "under onMiss live, an error entry never reaches the live tool; the following miss does",
        error_never_live,
        Gate(
            SERVES_ERRORS.requires,
            fixtures=SERVES_ERRORS.fixtures,
            seams=("live invocation counts",),
        ),
    ),
    Leg(
        "toolcall-spec.requirement.replay.fixed-error-message",
        "two different error payloads get the same short error.message, echoing neither",
        fixed_error_message,
        SERVES_ERRORS,
    ),
)
