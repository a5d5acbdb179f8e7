"""PII stripping: every kind of PII is replaced, digits that are not PII stay, and adversarial
input completes (the speed itself is measured in benchmarks/bench_ingest.py)."""

from __future__ import annotations

import string
import subprocess
import sys
import textwrap
import time

import orjson
import pytest
from hypothesis import assume, example, find, given, settings
from hypothesis import strategies as st
from support.strategies.pii_text import (
    TEXT_WITHOUT_DIGITS_OR_AT,
    card_numbers,
    covered_pii,
    emails,
    ibans,
    ip_addresses,
    looser_pii,
    messages_without_pii,
    passes_luhn,
    phone_numbers,
    planted,
    ssns,
)

from toolcall_spec.analytics import pii
from toolcall_spec.analytics.classify import MESSAGE_SAFETY_CEILING, error_message
from toolcall_spec.analytics.events import MAX_CAPTURED_BYTES, captured
from toolcall_spec.analytics.pii import (
    DEPTH_TOKEN,
    MAX_DEPTH,
    is_plausible_ssn,
    strip_pii,
    strip_pii_deep,
)

PII = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")


@PII
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("customer max@example.com not found", "customer [EMAIL_REDACTED] not found"),
        ("write to max@example.com.", "write to [EMAIL_REDACTED]."),
        ("<first.last+tag@mail.example.co.uk>", "<[EMAIL_REDACTED]>"),
        ("card 4111 1111 1111 1111 declined", "card [CC_REDACTED] declined"),
        ("card 4111-1111-1111-1111", "card [CC_REDACTED]"),
        ("amex 378282246310005", "amex [CC_REDACTED]"),
        ("in 2024 4111 1111 1111 1111 was used", "in 2024 [CC_REDACTED] was used"),
        ("ssn 123-45-6789", "ssn [SSN_REDACTED]"),
        ("ssn 123456789 or 123 45 6789", "ssn [SSN_REDACTED] or [SSN_REDACTED]"),
        ("itin 912-70-1234 and 912701234", "itin [SSN_REDACTED] and [SSN_REDACTED]"),
        ("call (555) 123-4567", "call [PHONE_REDACTED]"),
        ("call 555.123.4567 or 555 123 4567", "call [PHONE_REDACTED] or [PHONE_REDACTED]"),
        ("call +1 555 123 4567", "call [PHONE_REDACTED]"),
        ("call +44 20 7946 0958 today", "call [PHONE_REDACTED] today"),
        ("iban DE89 3704 0044 0532 0130 00 EUR", "iban [IBAN_REDACTED] EUR"),
        ("iban GB82WEST12345698765432.", "iban [IBAN_REDACTED]."),
        ("from 192.168.1.1:8080", "from [IP_REDACTED]:8080"),
        ("from 2001:db8::ff00:42:8329", "from [IP_REDACTED]"),
        ("from [fe80::1%eth0] or ::1", "from [[IP_REDACTED]%eth0] or [IP_REDACTED]"),
        ("IP:2001:db8::1", "IP:[IP_REDACTED]"),
    ],
)
def test_each_kind_of_pii_is_replaced_by_its_token(text: str, expected: str) -> None:
    assert strip_pii(text) == expected


@PII
@pytest.mark.parametrize(
    "text",
    [
        "in 2024 order 123456 failed",
        "not a card: 4111111111111112",  # fails the Luhn check
        "order 41111111111111112",  # a Luhn-valid card glued to another digit: another number
        "id 12345678901234567890123",
        "duration 86400 and order 12345678",
        "implausible SSNs 000456789 666123456 123004567 123450000 912201234",
        "bad check digits DE00 3704 0044 0532 0130 00",
        "version 1.2.3.4.5 and v10.0.19041.1",
        "code std::fmt, Foo::bar, a::b, A::B and time 12:30:45",
        "date 2026-11-30, offset 2026-11-30T12:00:00+01:00, price $1,299.99",
        "user@localhost has no domain",
    ],
)
def test_what_is_not_pii_stays(text: str) -> None:
    assert strip_pii(text) == text


@PII
@given(planted(emails() | card_numbers() | phone_numbers() | ibans() | ip_addresses() | ssns()))
def test_no_planted_pii_survives_anywhere_in_a_message(case: tuple[str, str]) -> None:
    message, secret = case
    stripped = strip_pii(message)
    assert secret not in stripped
    assert "REDACTED]" in stripped


@PII
@given(
    planted(
        card_numbers() | phone_numbers() | ibans() | ip_addresses() | ssns() | emails(),
        around=TEXT_WITHOUT_DIGITS_OR_AT,
    )
)
@example(("://,0@0.aa ", "0@0.aa"))  # an address glued to a scheme: once read as credentials
def test_no_part_of_a_planted_value_survives(case: tuple[str, str]) -> None:
    """Around text without digits or ``@``, any digit or ``@`` left over would be part of the
    planted value: a value only partly redacted fails here."""
    message, secret = case
    telltale = set(string.digits + "@")
    assume(telltale & set(secret))  # all but the rare IPv6 address written in letters only
    stripped = strip_pii(message)
    assert not telltale & set(stripped), stripped


@given(card_numbers())
def test_generated_cards_pass_the_luhn_check(card: str) -> None:
    assert passes_luhn("".join(c for c in card if c.isdigit()))


@PII
@given(messages_without_pii())
def test_digit_runs_that_are_not_pii_stay_intact(message: str) -> None:
    assert strip_pii(message) == message


@PII
@given(st.text(max_size=200))
def test_stripping_is_idempotent(text: str) -> None:
    once = strip_pii(text)
    assert strip_pii(once) == once


@PII
def test_nested_values_are_stripped_keys_included() -> None:
    value = {"to": ["max@example.com", {"max@example.com": 5}], "n": 4111111111111111, "ok": True}
    assert strip_pii_deep(value) == {
        "to": ["[EMAIL_REDACTED]", {"[EMAIL_REDACTED]": 5}],
        "n": "[CC_REDACTED]",  # a JSON number is written out too: this one is a card
        "ok": True,
    }


def test_deep_nesting_is_cut_not_recursed_into() -> None:
    value: object = "max@example.com"
    for _ in range(MAX_DEPTH + 10):
        value = [value]
    stripped = strip_pii_deep(value)
    for _ in range(MAX_DEPTH):
        assert isinstance(stripped, list)
        stripped = stripped[0]
    assert stripped == DEPTH_TOKEN


@pytest.mark.parametrize(
    ("digits", "plausible"),
    [
        ("123456789", True),
        ("000456789", False),
        ("666456789", False),
        ("123006789", False),
        ("123450000", False),
        ("912501234", True),  # ITIN group 50
        ("912931234", False),  # 93 is no ITIN group
        ("999991234", True),
    ],
)
def test_ssn_structure_rule(digits: str, plausible: bool) -> None:
    assert is_plausible_ssn(digits) is plausible


ADVERSARIAL = {
    "address characters": "a",
    "at signs": "@",
    "local parts": "a@",
    "dotted domain": "a.",
    "digits": "1",
    "spaced digits": "1 ",
    "card groups": "4111 ",
    "IBAN starts": "DE89 ",
    "plus signs": "+1 ",
    "colons": ":",
    "hex groups": "1:",
    "dotted octets": "255.",
    "SSN starts": "123-45-",
    "parentheses": "(555) ",
}
ADVERSARIAL_LOOSER = {  # the national and looser forms (issue 22)
    "slashed digits": "1 / ",
    "dashed digits": "1 - ",
    "slashed groups": "111 / ",
    "card groups by slashes": "4111/",
    "trunk zeros": "0 - ",
    "00 numbers": "0044 / 1",
    "dates": "01/12/2026 ",
    "SSNs by slashes": "123 / 45 / ",
    "local-part specials": "&@",
    "apostrophes": "a'@",
    "quotes": "'@",
    "braces": "{=}@",
}
ADVERSARIAL.update(ADVERSARIAL_LOOSER)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-linear-time")
def test_64_kb_adversarial_inputs_complete_and_still_redact() -> None:
    """A hang guard, not a timing test: each 64 KB input must finish (a catastrophic
    backtracking pattern would take hours) and the PII planted after the noise is still found.
    The growth from 32 to 128 KB is measured in benchmarks/bench_ingest.py."""
    script = textwrap.dedent(
        f"""
        from toolcall_spec.analytics.classify import classify_exception
        from toolcall_spec.analytics.pii import strip_pii
        for unit in {list(ADVERSARIAL.values())!r}:
            text = unit * (65536 // len(unit)) + " max@example.com"
            assert strip_pii(text).endswith(" [EMAIL_REDACTED]"), unit
        assert classify_exception("x" * 1_000_000 + " max@example.com").error_message
        print("done")
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.strip() == "done"


@pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-linear-time")
def test_the_looser_forms_take_linear_time_from_100_to_300_kb() -> None:
    """Three times the input takes about three times the CPU time (a pattern that backtracks
    over what it read would take nine). This thread's CPU time, so the load of a shared machine
    counts little; a ratio over the bound is measured again, the best of three runs kept. The
    other inputs' growth is measured by ``python -m benchmarks pii``."""

    def cpu_time(text: str) -> float:
        start = time.thread_time()
        strip_pii(text)
        return time.thread_time() - start

    for name, unit in ADVERSARIAL_LOOSER.items():
        small, large = (unit * (kb * 1024 // len(unit)) for kb in (100, 300))
        best = [cpu_time(small), cpu_time(large)]
        for _ in range(2):
            if best[1] < 4.5 * max(best[0], 1e-3):
                break
            best = [min(best[0], cpu_time(small)), min(best[1], cpu_time(large))]
        assert best[1] < 4.5 * max(best[0], 1e-3), f"{name}: {best[0]:.3f} s, then {best[1]:.3f} s"


@PII
def test_the_property_catches_a_stripper_without_the_card_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted mutation: drop one pass. The planting property must find a surviving card."""
    monkeypatch.setattr(
        pii, "_WINDOW_PASSES", tuple(p for p in pii._WINDOW_PASSES if p[1] is not pii._redact_cards)
    )
    message, card = find(
        planted(card_numbers()),
        lambda case: case[1] in strip_pii(case[0]),
        settings=settings(database=None, max_examples=500),
    )
    assert card in strip_pii(message)


CAPTURED = pytest.mark.requirement("toolcall-spec.requirement.analytics.captured-values-stripped")


@CAPTURED
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("card 4111.1111.1111.1111 x", "card [CC_REDACTED] x"),
        ("card 4111\u00a01111\u00a01111\u00a01111", "card [CC_REDACTED]"),
        ("card 4111  1111  1111  1111", "card [CC_REDACTED]"),
        ("mail o'brien@example.com", "mail [EMAIL_REDACTED]"),
        ('mail "john doe"@example.com ok', "mail [EMAIL_REDACTED] ok"),
        ("mail max@[192.168.0.1] ok", "mail [EMAIL_REDACTED] ok"),
        ("iban de89 3704 0044 0532 0130 00", "iban [IBAN_REDACTED]"),
        ("iban DE89-3704-0044-0532-0130-00", "iban [IBAN_REDACTED]"),
        ("ssn 123.45.6789", "ssn [SSN_REDACTED]"),
        ("call 0044 20 7946 0958", "call [PHONE_REDACTED]"),
        ("call 020 7946 0958", "call [PHONE_REDACTED]"),
        ("call 5551234567 now", "call [PHONE_REDACTED] now"),
        ("ip 192.168.001.001", "ip [IP_REDACTED]"),
        ("key AKIAIOSFODNN7EXAMPLE", "key [SECRET_REDACTED]"),
        ("key sk-proj-abcdefghijklmnop1234", "key [SECRET_REDACTED]"),
        ("https://user:pa55@example.com/x", "https://[SECRET_REDACTED]@example.com/x"),
        ("https://bob@example.com/x", "https://[EMAIL_REDACTED]/x"),
        ("://,0@0.aa ", "://,[EMAIL_REDACTED] "),
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer [SECRET_REDACTED]"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlF",
            "jwt [SECRET_REDACTED]",
        ),
    ],
)
def test_the_forms_people_write_pii_in_are_redacted(text: str, expected: str) -> None:
    assert strip_pii(text) == expected


LOOSER = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-looser-forms")
PHONE = pii.PHONE_TOKEN


@LOOSER
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("call 07096 311647 now", "call [PHONE_REDACTED] now"),
        ("call 020 7946 0958 now", "call [PHONE_REDACTED] now"),
        ("appelez le 06 12 34 56 78.", "appelez le [PHONE_REDACTED]."),
        ("Tel. 030 1234567", "Tel. [PHONE_REDACTED]"),
        ("Tel. 030/1234567 oder 0221 - 1234567", "Tel. [PHONE_REDACTED] oder [PHONE_REDACTED]"),
        ("call 0044 20 7974 7542", "call [PHONE_REDACTED]"),
        ("call 0044/20/7974/7542 or +44 20 / 7974 / 7542", "call [PHONE_REDACTED] or " + PHONE),
        ("(+44 20 7946 0958)", "([PHONE_REDACTED])"),
        ("call 555/123/4567 or 555 - 123 - 4567", "call [PHONE_REDACTED] or [PHONE_REDACTED]"),
        ("card 4111/1111/1111/1111", "card [CC_REDACTED]"),
        ("card 4111 - 1111 - 1111 - 1111 declined", "card [CC_REDACTED] declined"),
        ("card 4111 / 1111 / 1111 / 1111", "card [CC_REDACTED]"),
        ("ssn 123 / 45 / 6789", "ssn [SSN_REDACTED]"),
        ("mail a&b@example.com", "mail [EMAIL_REDACTED]"),
        ("mail {tom}@example.com", "mail [EMAIL_REDACTED]"),
        ("mail tom+tag=x@example.com", "mail [EMAIL_REDACTED]"),
        ("mail o'brien@example.com", "mail [EMAIL_REDACTED]"),
        ("input_value='max@example.com'", "input_value='[EMAIL_REDACTED]'"),
        ("mail jo@xn--bcher-kva.example", "mail [EMAIL_REDACTED]"),
        ("mail jo@example.xn--p1ai.", "mail [EMAIL_REDACTED]."),
        ("https://bob@example.com/x", "https://[EMAIL_REDACTED]/x"),
    ],
)
def test_national_and_looser_forms_are_redacted(text: str, expected: str) -> None:
    assert strip_pii(text) == expected


@LOOSER
@pytest.mark.parametrize(
    "text",
    [
        "booked 05/12/2026 18:30, cancelled 01.12.2024 10:30",
        "stay 2026-11-30 - 2026-12-01 or 30.11.2026 - 01.12.2026",
        "from 11/30/2026 - 12/01/2026 and 05.05.1984 - 1991-11-17",
        "page 12 / 345, ids 123456 / 7890123, v1.2.3 - 4.5.6, 1999 - 2024",
        "not a card: 4111 / 1111 / 1111 / 1112",
    ],
)
def test_dates_ranges_and_other_grouped_numbers_stay(text: str) -> None:
    assert strip_pii(text) == text


_CONTEXT_BEFORE = st.sampled_from(["", "error: ", "call ", "see (", "<", "\n", "to ", "user, "])
_CONTEXT_AFTER = st.sampled_from(["", ".", ",", ")", ">", " now", "!\n", "; retry"])


@LOOSER
@settings(max_examples=500)
@given(looser_pii(), _CONTEXT_BEFORE, _CONTEXT_AFTER)
def test_no_looser_form_leaks_and_the_text_around_stays(
    value: str, before: str, after: str
) -> None:
    """Every letter, digit and ``@`` of the value is gone (tokens aside); the text around it is
    kept as it was."""
    stripped = strip_pii(before + value + after)
    assert stripped.startswith(before), stripped
    assert stripped.endswith(after), stripped
    middle = stripped[len(before) : len(stripped) - len(after)]
    for token in pii.TOKENS:
        middle = middle.replace(token, "")
    assert not any(c.isalnum() or c == "@" for c in middle), stripped


@LOOSER
@given(planted(looser_pii(), around=TEXT_WITHOUT_DIGITS_OR_AT))
def test_no_digit_of_a_looser_form_survives_in_any_text(case: tuple[str, str]) -> None:
    message, value = case
    assume(set(string.digits) & set(value))
    stripped = strip_pii(message)
    assert not set(string.digits + "@") & set(stripped), stripped


@CAPTURED
def test_numbers_in_captured_values_that_are_pii_become_tokens() -> None:
    value = {"card_number": 4111111111111111, "phone": 5551234567, "ssn": 123456789, "n": 42}
    assert strip_pii_deep(value) == {
        "card_number": "[CC_REDACTED]",
        "phone": "[PHONE_REDACTED]",
        "ssn": "[SSN_REDACTED]",
        "n": 42,
    }


@CAPTURED
@given(card_numbers(), st.integers(1, 18))
def test_a_cut_never_leaves_part_of_a_card(card: str, keep: int) -> None:
    text = "x " * 10 + card + " tail"
    cut = pii.safe_cut(text, 20 + min(keep, len(card) - 1))
    assert not any(c.isdigit() for c in cut)


_AROUND = st.sampled_from(["", "error: ", "see (", "[", '"', "'", "value=", "—", "\n"])
_AFTER = st.sampled_from(["", ".", ",", ")", "]", '"', "'", ";", " end", "!\n"])


def _leaked(value: str, stripped: str) -> bool:
    """Whether any readable part of ``value`` survived: a digit or ``@`` (the surrounding text
    has none), or a 12-character piece of what is sensitive in it (for a URL its credentials,
    whose ``@`` stays; for ``Bearer ...`` the credentials after the word)."""
    sensitive = value
    if "://" in value:
        sensitive = value.split("://", 1)[1].split("@", 1)[0]
    elif value.startswith("Bearer "):
        sensitive = value.removeprefix("Bearer ")
    if sensitive is value and set(stripped) & set(string.digits + "@"):
        return True
    return any(sensitive[i : i + 12] in stripped for i in range(max(len(sensitive) - 11, 1)))


@CAPTURED
@settings(max_examples=400)
@given(covered_pii(), _AROUND, _AFTER, st.sampled_from(["start", "middle", "end"]))
def test_no_covered_form_leaks_wherever_it_sits(
    value: str, before: str, after: str, where: str
) -> None:
    filler = "the call failed "
    message = {
        "start": before + value + after + " " + filler,
        "middle": filler + before + value + after + " " + filler,
        "end": filler + before + value + after,
    }[where]
    assert not _leaked(value, strip_pii(message)), message


@CAPTURED
@settings(max_examples=200)
@given(covered_pii() | looser_pii(), st.integers(1, 60))
def test_no_covered_form_leaks_across_the_safety_cut(value: str, into: int) -> None:
    """Addresses shrink to tokens, so the text at the 4,000-character cut stays inside the 500
    kept characters; a value the cut splits must leave nothing readable."""
    count = 28
    size = (3_990 - count) // count
    address = "a" * 64 + "@" + "d" * (size - 69) + ".com"
    filler = " ".join([address] * count) + " "
    at = MESSAGE_SAFETY_CEILING - min(into, len(value) - 1)
    text = filler + "x" * (at - len(filler)) + " " + value + " tail"
    message = error_message(text) or ""
    kept = message.replace("[EMAIL_REDACTED]", "")
    assert not _leaked(value, kept), message


@CAPTURED
@given(covered_pii() | looser_pii())
def test_a_captured_value_never_holds_a_covered_form(value: str) -> None:
    arguments = {"note": "x " * (MAX_CAPTURED_BYTES // 2) + value, "value": value}
    kept = captured(arguments)
    assert not _leaked(value, orjson.dumps(kept).decode().replace("_truncated", ""))
