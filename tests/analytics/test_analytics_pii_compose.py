"""PII stripping composes (issue 29, part 7): what the stripper cleans alone it cleans joined to
anything. Earlier properties planted one value in text; a phone right after an IP address and
its port, two numbers one after the other, a local part with a ``/`` were each cleaned alone and
leaked together. The generators (``support.strategies.pii_items``) write national numbers of every
country spec/analytics.md names in every grouping, and local parts with every RFC 5322 special;
``python -m support.pii_leak_rate`` counts the leaks per 10,000 items."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given, settings
from support.strategies.pii_items import Item, Message, leaks, messages, separators

from toolcall_spec.analytics.pii import strip_pii

PII = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")
LOOSER = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-looser-forms")


def _message(text: str, kind: str = "phone") -> Message:
    return Message(text, (Item(text, kind),))


@PII
@LOOSER
@settings(max_examples=600)
@given(messages())
@example(_message("030/260500"))
@example(_message("(030) 260500"))
@example(_message("0151 12345678"))
@example(_message("foo1/bar2@example.com", "email"))
@example(_message('"a\\"b1"@example.com', "email"))
@example(_message("0033.(1).11.17.10.18"))  # dotted, read as an IP address, its prefix left
@example(_message("(033203) 123"))  # a five-digit area code in parentheses
# A card after a "+", read as a phone number of its first digits: its rest stayed.
@example(_message("+5188/3364/3658/5926/776", "looser form"))
@example(_message("+62-50 42 0 7-5-02 5-95-93-2-15", "card"))
def test_each_item_alone_leaves_nothing_private(message: Message) -> None:
    """No digit or ``@`` of the item is left (the words around have none), nor a piece of a
    secret; what stays by design (a URL's host after its credentials) is taken out first."""
    assume(not _key_glued_to_a_word(message))
    assume(not _in_an_open_class(message))
    assert not leaks(message, strip_pii(message.text)), strip_pii(message.text)


_WORD_AND_DASH = re.compile(r"[A-Za-z]-\Z")


def _key_glued_to_a_word(message: Message) -> bool:
    """The documented trade-off: a key glued to a word by a dash is that word's tail
    (``task-sk-...``, ``error-AKIA...``, ``https://example.com-sk-...``), kept."""
    text = message.text
    for item in message.items:
        at = text.find(item.text)
        if item.kind == "secret" and at >= 0 and _WORD_AND_DASH.search(text[:at]):
            return True
    return False


@PII
@LOOSER
@settings(max_examples=600)
@given(messages(), separators(), messages())
@example(
    _message("10.0.0.1", "ip"),
    ("ip:port", Message(":8080 ", kept=(":8080",))),
    _message("020 7946 0958"),
)
@example(_message("0113.000.0000"), ("whitespace", Message(" ")), _message("0113.000.0000"))
@example(
    _message("030 260500"),
    ("marker", Message(" [IP_REDACTED]:443 ", kept=(":443",))),
    _message("0044 30 260500"),
)
# The class a number read from the digits before it, or into the value after it, belongs to: its
# last group (or the other value's rest) stayed.
@example(_message("001 00 0000 000"), ("punctuation", Message("(")), _message("000-000-0000"))
@example(
    _message("error"),
    ("ip:port", Message(" 0.0.7.145:133 / ", (Item("0.0.7.145", "ip"),), kept=(":133",))),
    _message("053 3574 9698"),
)
@example(
    _message("+1 000 000 0000"),
    ("whitespace", Message(" ")),
    _message("0000\u00a00000\u00a00000\u00a00", "card"),
)
@example(
    _message("+1 000 000 0000"),
    ("whitespace", Message(" ")),
    _message("0000  0000  0000  0", "card"),
)
@example(
    _message("+33-8-70-97-06-83"), ("punctuation", Message(") ")), _message("900-58-0001", "ssn")
)
# A local part that starts with a number's last group (or a domain that ends with its first): the
# rest of the number stayed.
@example(_message("07000 000000"), ("punctuation", Message("!")), _message("0@0.aa", "email"))
@example(
    _message("+44-(0) 7700-440447"), ("punctuation", Message("'")), _message("0@[0.0.0.1]", "email")
)
@example(
    _message("XV79 4S1O X5DD 9PU1 KWMP 72FJ W3O2 92UL A5", "iban"),
    ("punctuation", Message("'")),
    _message("TcY79@fgzudx2t2c.j.on", "email"),
)
@example(
    _message("!!6@w0yt.4.3.lq", "email"),
    ("item", Message("-900 72 1609/", (Item("900 72 1609", "ssn"),))),
    _message("001 00 00000"),
)
# An address after a URL's port, read as its user:password: the address's domain stayed.
@example(
    _message("error"),
    ("url", Message(" https://api.example.org:8080", kept=(":8080",))),
    _message("!ao'a@example.com", "email"),
)
# A card read on into an SSN's first group: the SSN's rest stayed.
@example(
    _message("0000/0000/0101/022", "looser form"),
    ("item", Message(" 001.01.0001 ", (Item("001.01.0001", "ssn or ip"),))),
    _message("error"),
)
def test_two_cleaned_messages_joined_by_any_separator_are_cleaned(
    first: Message, separator: tuple[str, Message], second: Message
) -> None:
    """For every class of separator: whitespace, punctuation, another item, a redaction marker
    (with a port too), an IP address and its port, a URL."""
    assume(not leaks(first, strip_pii(first.text)))
    assume(not leaks(second, strip_pii(second.text)))
    joined = first + separator[1] + second
    assume(not _key_glued_to_a_word(joined))
    assume(not _in_an_open_class(joined))
    stripped = strip_pii(joined.text)
    assert not leaks(joined, stripped), (separator[0], stripped)


# --- the classes still open ------------------------------------------------------------------

_DIGIT = re.compile(r"[0-9]")
_LOCAL_PART_CHARACTER = re.compile(r"[\w!#$%&'*+/=?^`{|}~.-]")
_FOUR_DOTTED_GROUPS = re.compile(r"[0-9]\.[0-9]+\.[0-9]+\.[0-9]")


def _in_an_open_class(message: Message) -> bool:
    """The classes ``OPEN_LEAKS`` pins (issue 29, part 7; found by ``support.pii_leak_rate``, each
    rarer than one in the properties' 600 draws but met in CI): left out of the properties until
    the stripper mends them, so a CI run fails on a new class, not on a known one."""
    text = message.text
    for item in message.items:
        at = text.find(item.text)
        end = at + len(item.text)
        if at < 0:
            continue
        if item.kind == "phone" and _FOUR_DOTTED_GROUPS.search(item.text):
            return True  # a phone's dotted groups read as an IPv4 address
        if item.kind in ("iban", "card") and _DIGIT.search(text, end):
            return True  # an IBAN or a card read into a later value's first group
        if item.kind == "ip" and ":" in item.text and _LOCAL_PART_CHARACTER.match(text, end):
            return True  # an IPv6 address's last group read as an e-mail's local part
        if item.kind == "email" and "@[" in item.text and re.search(r"[0-9]\s*\Z", text[:at]):
            return True  # digits before an address literal read into the local part
    return False


OPEN_LEAKS = [
    "+45-0.0.0.0 0 0",  # a phone's dotted groups read as an IPv4 address
    "AA75 0000 0000 000 000/000/0000",  # an IBAN that takes the next number's first group
    "DE82-1111-1315-9111-1073-88 mail 258-29-0001",  # ... across a word, too
    "from 0000:0000:0000:0000:0000:0000:0066:d98d=x@example.com",  # IPv6 into a local part
    "07000.000000 0000@[0.0.0.1]",  # digits before an address literal
]
"""Leaks the generators still find (issue 29, part 7; the closing note of this stop). Each is
expected to leak: when the stripper mends one, its test passes, the strict mark fails it, and its
branch of ``_in_an_open_class`` must go."""


@pytest.mark.xfail(strict=True, reason="an open leak class of issue 29, part 7")
@pytest.mark.parametrize("text", OPEN_LEAKS)
def test_an_open_leak_class_still_leaks(text: str) -> None:
    stripped = strip_pii(text)
    assert not any(c.isdigit() for c in re.sub(r"\[[A-Z_]+\]", "", stripped)), stripped
