"""The fast ``strip_pii`` against its reference reading (``support.pii_reference``: every family
its own pass, as the stripper was before the combined scans), and the planted mutations of the
fast code that the properties catch: the shortcuts it takes (one scan for every secret marker,
one scan for digit chains and IBAN check digits, one search before the phone passes, character
classes first) must change nothing but the time."""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from support import pii_reference
from support.strategies.pii_text import (
    TEXT_WITHOUT_DIGITS_OR_AT,
    card_numbers,
    covered_pii,
    emails,
    ibans,
    ip_addresses,
    loosely_grouped_numbers,
    looser_pii,
    messages_without_pii,
    non_pii_numbers,
    phone_numbers,
    planted,
    rfc5322_emails,
    secrets,
    ssns,
    written_dates,
)

from toolcall_spec.analytics import pii
from toolcall_spec.analytics.pii import strip_pii

PII = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")

# Characters the families are made of or stop at, so random pieces often touch, continue or
# almost form a value: digits, separators, the letters that start secrets and IBANs, "@", ":".
_NEAR_PII = string.digits + " .-+()/:@_'\"[]\u00a0\u202fAaBbEeJKkSsgxyoIzDGR٣é"
# Look-alikes at the edges of the rules: a "+" before a trunk 0, versions, bare 00 runs, IDs
# glued to more digits, credentials with dots, lower-case IBANs of no IBAN country.
_LOOKALIKES = st.sampled_from(
    [
        "+020 7946 0958",
        "1-555-123-4567",
        "+1 (555) 123-4567",
        "(030) 1234 5678",
        "06 12 34 56 78",
        "0010.0000.0000.0000.08",
        "00441234567890",
        "1.2.3.4.5",
        "192.168.001.010",
        "256.1.1.1",
        "123.45.6789",
        "000-12-3456",
        "912 70 1234",
        "41111111111111112",
        "4111 1111 1111 1111 1234",
        "Bearer abc.eyJhbGciOi.eyJzdWIi.sig",
        "Basic dXNlcjpwYXNz",
        "https://user:pa55@example.com/x",
        "xx89 3704 0044 0532 0130 00",
        "gb82 west 1234 5698 7654 32",
        "AKIAIOSFODNN7EXAMPLEx",
        "task-sk-abcdefghijklmnopqrst",
        "05/12/2026 18:30",
        "2026-11-30 - 2026-12-01",
        "0044 (0)20 7946 0958",
        "value='max@example.com'",
        "a&b='c@example.com",
        "https://a/b@example.com",
    ]
)
_PIECES = st.one_of(
    emails(),
    card_numbers(),
    phone_numbers(),
    ibans(),
    ip_addresses(),
    ssns(),
    covered_pii(),
    looser_pii(),
    secrets(),
    non_pii_numbers(),
    _LOOKALIKES,
    st.text(_NEAR_PII, max_size=12),
)
_JOINERS = st.sampled_from(
    ["", " ", "  ", "-", ".", ", ", "\n", "+", "(", ")", ":", "/", "x", " - ", " / ", "'", "="]
)


@st.composite
def near_pii_messages(draw: st.DrawFn) -> str:
    """PII values, look-alikes and noise made of the characters PII is made of, joined by
    nothing, spaces or separators: values touch, continue and overlap each other."""
    parts: list[str] = draw(st.lists(_PIECES, min_size=1, max_size=6))
    text = parts[0]
    for part in parts[1:]:
        text += draw(_JOINERS) + part
    return text


@PII
@settings(max_examples=1000)
@given(near_pii_messages())
def test_the_fast_stripper_reads_text_as_the_reference_does(message: str) -> None:
    """Slow on purpose (over 10 s): a differential property against the slow reference stripper,
    over many generated texts."""
    assert strip_pii(message) == pii_reference.strip_pii(message)


@PII
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a dotted card that starts with 00: once read as a 00 phone number and its last group
        ("card 0010.0000.0000.0000.08 x", "card [CC_REDACTED] x"),
        ("call 0044 20 7946 0958 now", "call [PHONE_REDACTED] now"),
    ],
)
def test_a_00_number_followed_by_another_group_is_left_to_the_card_pass(
    text: str, expected: str
) -> None:
    assert strip_pii(text) == expected
    assert pii_reference.strip_pii(text) == expected


# --- planted mutations of the fast code, and the property that catches each --------------------


def _survives(case: tuple[str, str]) -> bool:
    """The planting property: the value is still in the stripped message."""
    message, value = case
    return value in strip_pii(message)


def _digit_or_at_left(case: tuple[str, str]) -> bool:
    """The no-part-survives property: around text without digits or ``@``, one is left."""
    return bool(set(strip_pii(case[0])) & set(string.digits + "@"))


def _not_pii_changed(message: str) -> bool:
    """The digits-that-are-not-PII property: the message was changed."""
    return strip_pii(message) != message


def _differs_from_reference(message: str) -> bool:
    return strip_pii(message) != pii_reference.strip_pii(message)


_AROUND = TEXT_WITHOUT_DIGITS_OR_AT
_OCTET_OFF_BY_ONE = r"(?:25[0-4]|2[0-4][0-9]|[01][0-9][0-9]|[1-9]?[0-9])"
Mutant = tuple[str, object, st.SearchStrategy[Any], Callable[[Any], bool]]
"""The attribute of ``pii`` replaced, its mutant, the strategy and the property it breaks."""
MUTANTS: dict[str, Mutant] = {
    # The secret markers scan names the key-id family as the AIza one: key ids are never looked for.
    "key ids unmarked": (
        "_MARKED_FAMILY",
        tuple(6 if family == 1 else family for family in pii._MARKED_FAMILY),
        planted(secrets()),
        _survives,
    ),
    # The digit scan without its stop at IBAN check digits: no IBAN is looked for.
    "no IBAN stop": (
        "_DIGIT_SCAN",
        re.compile(rf"[0-9](?<![0-9][0-9])[{pii._CHAIN_CHARACTERS}]{{5,}}[0-9]"),
        planted(ibans(), _AROUND),
        _digit_or_at_left,
    ),
    # Cards without the Luhn check.
    "no Luhn check": ("_luhn_valid", lambda digits: True, messages_without_pii(), _not_pii_changed),
    # An octet up to 254, not 255.
    "octet off by one": (
        "_IPV4",
        re.compile(
            rf"(?<![0-9])(?<![0-9]\.){_OCTET_OFF_BY_ONE}(?:\.{_OCTET_OFF_BY_ONE}){{3}}(?!\.?[0-9])"
        ),
        planted(ip_addresses(), _AROUND),
        _digit_or_at_left,
    ),
    # The search before the phone passes forgets a parenthesised area code.
    "phone search without parentheses": (
        "_NANP_OR_NATIONAL",
        re.compile(r"[0-9][0-9]{2}[-. ]?[0-9]{3}[-. ]?[0-9]{4}(?![0-9])"),
        planted(phone_numbers(), _AROUND),
        _digit_or_at_left,
    ),
    # The card chains' look-ahead one character too long: 13-digit cards are never read.
    "card chains from 14 characters": (
        "_DIGIT_CHAIN",
        re.compile(pii._DIGIT_CHAIN.pattern.replace("{12}", "{13}")),
        planted(card_numbers(), _AROUND),
        _digit_or_at_left,
    ),
    # The "+" branch of the international pattern falls through to the "00" one: "+020 ..." is
    # read as a "00" number. Every property of what is redacted holds (the number is redacted
    # either way, only the "+" goes with it): the comparison with the reference catches it.
    "plus read as 00": (
        "_INTL_PHONE",
        re.compile(pii._INTL_PHONE.pattern.replace("|(?<=0)(?<!", "|(?<!"), re.ASCII),
        near_pii_messages(),
        _differs_from_reference,
    ),
    # Card chains without the loose separators: "4111 / 1111 / 1111 / 1111" is never one chain.
    "no loose card separators": (
        "_DIGIT_CHAIN",
        re.compile(
            rf"[0-9](?=[0-9{pii._CARD_SEPARATORS}]{{12}})(?:[{pii._CARD_SEPARATORS}]{{0,2}}[0-9])*"
        ),
        planted(loosely_grouped_numbers(), _AROUND),
        _digit_or_at_left,
    ),
    # Any grouping reads as a card: a range of dates with 13 to 19 digits passes Luhn once in 10.
    "cards in any grouping": (
        "_grouped_as_a_card",
        lambda *window: True,
        written_dates(),
        _not_pii_changed,
    ),
    # No date guard: a date and the time after it read as a national number.
    "dates read as phone numbers": (
        "_DATE_FIRST",
        re.compile(r"(?!)"),
        written_dates(),
        _not_pii_changed,
    ),
    # Local parts of the old characters: "a&b@..." keeps "a&".
    "local parts without specials": (
        "_LOCAL_RUN",
        re.compile(r"[\w.%+\-']*"),
        planted(rfc5322_emails(), _AROUND),
        _digit_or_at_left,
    ),
}


@PII
@pytest.mark.parametrize("name", MUTANTS)
def test_each_planted_mutation_is_caught(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    attribute, mutant, strategy, violated = MUTANTS[name]
    assert hasattr(pii, attribute)
    monkeypatch.setattr(pii, attribute, mutant)
    example = find(strategy, violated, settings=settings(database=None, max_examples=3000))
    assert violated(example)
    monkeypatch.undo()
    assert not violated(example), "the example must pass on the real code"
