"""The ``--inject SPEC`` grammar over generated specs: every valid one, written in any of its
spellings and part orders, parses to what it says and round-trips through its canonical form;
every spec with one part spoiled is refused with that part named; and a spec selects exactly the
calls it names in a generated call sequence."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.replay.injection import (
    MAX_DELAY_MS,
    Injection,
    InjectSpecError,
    parse_injection,
    selected,
)

INJECT = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-inject")

# Any text without a comma (a comma ends a part); surrogates cannot reach argv.
NO_COMMA = st.characters(codec="utf-8", exclude_characters=",")
TOOL_NAMES = st.text(NO_COMMA, min_size=1, max_size=20).filter(lambda name: name != "*")
ERROR_TEXTS = st.text(NO_COMMA, min_size=1, max_size=40)


@st.composite
def injections(draw: st.DrawFn) -> Injection:
    error = draw(st.none() | st.just("") | ERROR_TEXTS)
    delays = st.integers(1, MAX_DELAY_MS)
    return Injection(
        tool=draw(st.none() | TOOL_NAMES),
        call=draw(st.none() | st.integers(1, 10**6)),
        error=error,
        delay_ms=draw(delays if error is None else st.just(0) | delays),  # something to inject
    )


def delay_spellings(milliseconds: int) -> st.SearchStrategy[str]:
    """Every way of writing the delay: whole milliseconds, or seconds with up to 3 decimals."""
    seconds, rest = divmod(milliseconds, 1000)
    decimals = f"{rest:03d}".rstrip("0")
    in_seconds = f"{seconds}.{decimals}s" if decimals else f"{seconds}s"
    padded = f"{seconds}.{rest:03d}s"
    return st.sampled_from([f"{milliseconds}ms", in_seconds, padded])


@st.composite
def spellings(draw: st.DrawFn, injection: Injection) -> list[str]:
    """The parts of one way of writing ``injection``: defaults written or left out, ``*`` or
    omitted, in any order."""
    parts = []
    if injection.tool is not None or draw(st.booleans()):
        parts.append(f"tool={injection.tool or '*'}")
    if injection.call is not None or draw(st.booleans()):
        parts.append(f"call={injection.call or '*'}")
    if injection.error is not None:
        parts.append(f"error={injection.error}" if injection.error else "error")
    if injection.delay_ms:
        parts.append(f"delay={draw(delay_spellings(injection.delay_ms))}")
    return draw(st.permutations(parts))


@INJECT
@given(injections())
def test_the_canonical_spec_round_trips(injection: Injection) -> None:
    assert parse_injection(injection.spec()) == injection
    assert parse_injection(parse_injection(injection.spec()).spec()).spec() == injection.spec()


@INJECT
@given(st.data())
def test_every_spelling_of_a_spec_parses_to_what_it_says(data: st.DataObject) -> None:
    injection = data.draw(injections())
    parts = data.draw(spellings(injection))
    assert parse_injection(",".join(parts)) == injection


BAD_PARTS = [
    *["tol=a", "calls=1", "timeout=2s", "x", "=1", " tool=a"],  # unknown keys
    *["call=0", "call=-1", "call=1.5", "call=", "call=one", "call"],
    *["delay=2", "delay=2h", "delay=0s", "delay=1.5ms", "delay=1.2345s", "delay=3601s", "delay"],
    *["tool=", "error="],
]


@INJECT
@pytest.mark.parametrize("bad", BAD_PARTS)
@given(data=st.data())
def test_a_spoiled_part_is_refused_and_named(bad: str, data: st.DataObject) -> None:
    """Each bad part, among the parts of generated valid specs, anywhere."""
    injection = data.draw(injections())
    parts = data.draw(spellings(injection))
    key = bad.partition("=")[0]
    spoiled = [part for part in parts if part.partition("=")[0] != key]  # no key twice
    if not {part.partition("=")[0] for part in spoiled} & {"error", "delay"}:
        spoiled.append("delay=1ms" if key == "error" else "error")  # something to inject
    spoiled.insert(data.draw(st.integers(0, len(spoiled))), bad)
    with pytest.raises(InjectSpecError) as refused:
        parse_injection(",".join(spoiled))
    assert repr(bad) in str(refused.value) or f"'{bad}'" in str(refused.value)


@INJECT
@given(st.data())
def test_a_key_twice_an_empty_part_or_nothing_to_inject_is_refused(data: st.DataObject) -> None:
    parts = data.draw(spellings(data.draw(injections())))
    twice = data.draw(st.sampled_from(parts))
    with pytest.raises(InjectSpecError, match="given twice"):
        parse_injection(",".join([*parts, twice]))
    with pytest.raises(InjectSpecError, match="empty part"):
        parse_injection(",".join([*parts, ""]))
    selectors = [part for part in parts if part.startswith(("tool=", "call="))] or ["tool=*"]
    with pytest.raises(InjectSpecError, match="nothing to inject"):
        parse_injection(",".join(selectors))


@INJECT
@given(
    calls=st.lists(st.sampled_from(["lookup", "charge", "refund"]), max_size=12),
    tool=st.none() | st.sampled_from(["lookup", "charge"]),
    ordinal=st.none() | st.integers(1, 6),
)
def test_a_spec_selects_exactly_the_calls_it_names(
    calls: list[str], tool: str | None, ordinal: int | None
) -> None:
    injection = Injection(tool=tool, call=ordinal, error="boom", delay_ms=5)
    chosen = []
    seen: dict[str, int] = {}
    for number, name in enumerate(calls, start=1):
        seen[name] = seen.get(name, 0) + 1
        if selected([injection], name, seen[name], number) == (5, "boom"):
            chosen.append(number)
    # The model: the calls of the tool (or all calls), then the ordinal-th of them (or all).
    candidates = [n for n, name in enumerate(calls, start=1) if tool in (None, name)]
    expected = candidates if ordinal is None else candidates[ordinal - 1 : ordinal]
    assert chosen == expected


def test_several_specs_on_one_call_add_their_delays_and_the_first_error_wins() -> None:
    specs = [
        parse_injection(text)
        for text in ("delay=100ms", "tool=lookup,delay=1s", "tool=lookup,error=first", "error")
    ]
    assert selected(specs, "lookup", 1, 1) == (1100, "first")
    assert selected(specs, "charge", 1, 2) == (
        100,
        "injected failure (--inject tool=*,call=*,error)",
    )
