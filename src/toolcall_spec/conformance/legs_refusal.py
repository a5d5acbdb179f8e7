"""Run-create legs: what a host refuses (features it does not advertise, modes), the shape of the
refusal, and the other side of RFC 0031: every feature it does advertise really works."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolcall_spec.capabilities import (
    EVAL_SUITE,
    FIXTURE_ERRORS,
    FIXTURE_MATCHING,
    PRE_POST_EVENTS,
    dotted,
)
from toolcall_spec.catalog import load_schema
from toolcall_spec.conformance.adapter import HostAdapter, RunCreated, RunRefusal
from toolcall_spec.conformance.leg import Context, Gate, Leg
from toolcall_spec.conformance.legs_rfc0245 import check_served_error
from toolcall_spec.conformance.outcomes import (
    LegFailedError,
    LegNotRunError,
    Outcome,
    Verdict,
    check,
    passed,
)
from toolcall_spec.conformance.suites import (
    LOOKUP,
    entry,
    entry_member_paths,
    marker_of,
    one_call_suite,
    suite,
    task,
)
from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.validation import validate


def eval_modes() -> list[str]:
    """Every eval mode the suite schema knows."""
    modes: list[str] = load_schema("suite")["$defs"]["EvalMode"]["enum"]
    return modes


def args_suite() -> dict[str, Any]:
    """One call answered by an entry that matches on its arguments (RFC 0244 §D)."""
    entries = [entry(LOOKUP, "fm-args", args={"id": "c-1"}, args_match="exact")]
    return suite("fixture-matching", [task("scenario", [(LOOKUP, {"id": "c-1"})], entries)])


def expect_refusal(created: RunCreated | RunRefusal, what: str) -> RunRefusal:
    """The refusal ``what`` must get: ``400 validation_error``."""
    if not isinstance(created, RunRefusal):
        raise LegFailedError(f"the host accepted {what}")
    check(created.status == 400, f"{what}: refused with HTTP {created.status}, expected 400")
    code = created.envelope.get("error")
    check(code == "validation_error", f"{what}: error {code!r}, expected 'validation_error'")
    return created


def refused_field(refusal: RunRefusal) -> Any:
    details = refusal.envelope.get("details")
    return details.get("field") if isinstance(details, dict) else None


def fixture_matching_refused(adapter: HostAdapter, ctx: Context) -> Verdict:
    matching = args_suite()
    refusal = expect_refusal(ctx.create(matching), "a suite using args without fixtureMatching")
    field = refused_field(refusal)
    allowed = entry_member_paths(matching, "args") + entry_member_paths(matching, "argsMatch")
    check(field in allowed, f"details.field is {field!r}; it should name {allowed[0]}")
    return passed(f"400 validation_error naming {field}")


def mode_cases(ctx: Context) -> Iterator[tuple[str, dict[str, Any], str]]:
    """``(what, suite, mode)`` for each refusal the host's modes make possible: a mode the suite
    does not declare, and a mode the host does not advertise."""
    advertised = ctx.modes()
    if not advertised:
        return
    base = advertised[0]
    undeclared = next((m for m in advertised if m != base), None)
    if undeclared is not None:
        yield (
            f"a run in the mode {undeclared} that the suite does not declare",
            one_call_suite("mode-undeclared", modes=[base]),
            undeclared,
        )
    unadvertised = next((m for m in eval_modes() if m not in advertised), None)
    if unadvertised is not None:
        yield (
            f"a run in the mode {unadvertised} that the host does not advertise",
            one_call_suite("mode-unadvertised", modes=[base, unadvertised]),
            unadvertised,
        )


def mode_refused(adapter: HostAdapter, ctx: Context) -> Verdict:
    cases = list(mode_cases(ctx))
    if not cases:
        reason = "the host advertises every mode and only one, so no refusal can be provoked"
        raise LegNotRunError(Verdict(Outcome.INAPPLICABLE, reason))
    for what, a_suite, mode in cases:
        expect_refusal(ctx.create(a_suite, mode=mode), what)
    return passed("; ".join(f"refused {what}" for what, _, _ in cases))


def refusal_cases(ctx: Context) -> Iterator[tuple[str, dict[str, Any], str, str | None]]:
    """``(what, suite, mode, full path the field must be)``: every refusal this host can be made
    to answer; ``None`` when the field is host-defined (a mode refusal names no suite member)."""
    for what, a_suite, mode in mode_cases(ctx):
        yield what, a_suite, mode, None
    if not ctx.advertises(FIXTURE_ERRORS):
        fixture = load_fixture(FIXTURE_ERROR)
        what = "a suite with isError: true without fixtureErrors"
        yield what, fixture, "golden", entry_member_paths(fixture, "isError")[0]
    if not ctx.advertises(FIXTURE_MATCHING):
        matching = args_suite()
        what = "a suite using args without fixtureMatching"
        yield what, matching, "golden", entry_member_paths(matching, "args")[0]


def refusal_envelope(adapter: HostAdapter, ctx: Context) -> Verdict:
    cases = list(refusal_cases(ctx))
    if not cases:
        raise LegNotRunError(Verdict(Outcome.INAPPLICABLE, "no refusal can be provoked here"))
    fields = []
    for what, a_suite, mode, path in cases:
        refusal = expect_refusal(ctx.create(a_suite, mode=mode), what)
        problems = [
            p for p in validate(refusal.envelope, "error-envelope") if p.severity == "error"
        ]
        check(not problems, f"{what}: the envelope is not the flat error envelope: {problems[:1]}")
        field = refused_field(refusal)
        check(isinstance(field, str) and field != "", f"{what}: details.field is {field!r}")
        if path is not None:
            check(field == path, f"{what}: details.field is {field!r}, expected the full {path}")
        message = str(refusal.envelope.get("message"))
        check(str(field) in message, f"{what}: the message {message!r} does not name {field}")
        fields.append(str(field))
    return passed(f"flat envelopes naming {', '.join(fields)}")


def advertise_what_implemented(adapter: HostAdapter, ctx: Context) -> Verdict:
    probed = [f"mode {mode}" for mode in _probe_modes(ctx)]
    if ctx.advertises(FIXTURE_ERRORS):
        returned = ctx.run(load_fixture(FIXTURE_ERROR)).returned()
        check(bool(returned), "fixtureErrors: the fixture run returned nothing")
        check_served_error(returned[0], "fixtureErrors: the error entry's", hooks=False)
        probed.append(dotted(FIXTURE_ERRORS))
    if ctx.advertises(FIXTURE_MATCHING):
        _probe_fixture_matching(ctx)
        probed.append(dotted(FIXTURE_MATCHING))
    if ctx.advertises(PRE_POST_EVENTS):
        _probe_tool_hooks(ctx)
        probed.append(dotted(PRE_POST_EVENTS))
    return passed(f"advertised and working: {', '.join(probed)}")


def _probe_modes(ctx: Context) -> list[str]:
    modes = ctx.modes()
    check(bool(modes), f"{dotted(EVAL_SUITE)} advertises no modes")
    for mode in modes:
        created = ctx.create(one_call_suite(f"mode-{mode}", modes=[mode]), mode=mode)
        ctx.complete(created, f"a run in the advertised mode {mode}")
    return modes


def _probe_fixture_matching(ctx: Context) -> None:
    calls = [(LOOKUP, {"id": "c-1"})]
    entries = [
        entry(LOOKUP, "awi-other-args", args={"id": "c-2"}),
        entry(LOOKUP, "awi-same-args", args={"id": "c-1"}),
    ]
    returned = ctx.run(suite("advertised-matching", [task("scenario", calls, entries)])).returned()
    served = marker_of(returned, ["awi-other-args", "awi-same-args"])
    check(served == "awi-same-args", f"fixtureMatching: args did not select the entry ({served!r})")


def _probe_tool_hooks(ctx: Context) -> None:
    run = ctx.run(one_call_suite("advertised-hooks"))
    for payload in run.returned():
        expected = "error" if "error" in payload else "ok"
        status = payload.get("status")
        check(
            status == expected,
            f"toolHooks.prePostEvents: agent.tool-returned has status {status!r}, expected "
            f"{expected!r}",
        )


LEGS = (
    Leg(
        "toolcall-spec.requirement.capabilities.fixture-matching-refused",
        "without fixtureMatching, a suite using args is refused with 400 validation_error naming "
        "the args field",
        fixture_matching_refused,
        Gate(requires=(EVAL_SUITE,), excludes=(FIXTURE_MATCHING,)),
    ),
    Leg(
        "toolcall-spec.requirement.capabilities.mode-refused",
        "a mode the suite does not declare, and one the host does not advertise, are refused",
        mode_refused,
        Gate(requires=(EVAL_SUITE,)),
    ),
    Leg(
        "toolcall-spec.requirement.capabilities.refusal-envelope",
        "every refusal is the flat envelope with validation_error and details.field in the "
        "message, the full path for a fixture member",
        refusal_envelope,
        Gate(requires=(EVAL_SUITE,)),
    ),
    Leg(
        "toolcall-spec.requirement.capabilities.advertise-what-implemented",
        "every advertised mode runs, and fixtureErrors, fixtureMatching and "
        "toolHooks.prePostEvents, when advertised, do what they claim",
        advertise_what_implemented,
        Gate(requires=(EVAL_SUITE,), fixtures=(FIXTURE_ERROR,)),
    ),
)
