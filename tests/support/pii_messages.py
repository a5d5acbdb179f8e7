"""Many generated messages for the PII differential between the Python stripper and its
TypeScript port (tests/typescript/test_typescript_pii_differential.py), drawn from the Hypothesis
strategies of the Python PII tests (support.strategies.pii_text) by a seeded random source: the
same messages for the same seed, about 10,000 a second, without a Hypothesis test around them.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest
from hypothesis.internal.conjecture.data import ConjectureData

from support.strategies import pii_items
from support.strategies.pii_text import (
    ANY_TEXT,
    card_numbers,
    covered_pii,
    emails,
    ibans,
    international_phones,
    ip_addresses,
    loosely_grouped_numbers,
    looser_pii,
    messages_without_pii,
    national_phones,
    non_pii_numbers,
    phone_numbers,
    planted,
    rfc5322_emails,
    secrets,
    ssns,
    written_dates,
)

# The characters PII is made of or stops at, so random pieces touch, continue or almost form a
# value (as tests/analytics/test_analytics_pii_reference.py mixes them), and characters where
# Python and JavaScript read text differently: astral letters, NBSPs, Unicode digits and spaces.
NEAR_PII = (
    string.digits + " .-+()/:@_'\"[]\u00a0\u202f\u2007AaBbEeJKkSsgxyoIzDGR٣é𝒜😀\u2028\x1c\x85"
)

PIECES = st.one_of(
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
    national_phones(),
    international_phones(),
    loosely_grouped_numbers(),
    rfc5322_emails(),
    written_dates(),
    st.text(NEAR_PII, max_size=12),
    ANY_TEXT,
    pii_items.national_phones(),
    pii_items.rfc5322_addresses(),
    pii_items.quoted_local_parts(),
    st.sampled_from(pii_items.COUNTRIES).flatmap(pii_items.phone_in_international_form),
)
JOINERS = st.sampled_from(
    ["", " ", "  ", "-", ".", ", ", "\n", "+", "(", ")", ":", "/", "x", " - ", " / ", "'", "="]
)


@st.composite
def composed_messages(draw: st.DrawFn) -> str:
    """PII values, look-alikes and noise joined by nothing, spaces or separators."""
    parts: list[str] = draw(st.lists(PIECES, min_size=1, max_size=6))
    text = parts[0]
    for part in parts[1:]:
        text += draw(JOINERS) + part
    return text


@st.composite
def compositions(draw: st.DrawFn) -> str:
    """Two messages of planted items joined by a separator (whitespace, punctuation, another
    item, a redaction marker, an address and port, a URL): the composition generator of the PII
    leak-rate tests (support.strategies.pii_items)."""
    first = draw(pii_items.messages())
    _, separator = draw(pii_items.separators())
    second = draw(pii_items.messages())
    return (first + separator + second).text


MESSAGES = st.one_of(
    composed_messages(),
    compositions(),
    planted(covered_pii()).map(lambda case: case[0]),
    planted(looser_pii()).map(lambda case: case[0]),
    messages_without_pii(),
    ANY_TEXT,
)
JOINER_TEXTS = [
    "",
    " ",
    "  ",
    "-",
    ".",
    ", ",
    "\n",
    "+",
    "(",
    ")",
    ":",
    "/",
    "x",
    " - ",
    " / ",
    "'",
    "=",
]


def _outside_a_test() -> None:
    """The test a draw's build context names: there is none."""


def drawn(strategy: st.SearchStrategy[str], count: int, source: random.Random) -> list[str]:
    """``count`` values of ``strategy``, drawn with ``source`` outside any Hypothesis test."""
    values: list[str] = []
    while len(values) < count:
        data = ConjectureData(random=source)
        try:
            with BuildContext(data, is_final=False, wrapped_test=_outside_a_test):
                values.append(data.draw(strategy))
        except StopTest:  # the draw ran out of room: draw again
            continue
    return values


def generated_messages(count: int, seed: int, pool: int = 1000) -> Iterator[str]:
    """``count`` messages: a pool of whole messages and of pieces drawn from the strategies
    (Hypothesis draws a few thousand a second at best), then each message one of the pool or 1
    to 6 pieces of it joined as ``composed_messages`` joins them, so a run of 100,000 messages
    costs seconds, not minutes. The same messages for the same seed."""
    source = random.Random(seed)
    messages = drawn(MESSAGES, pool, source)
    pieces = drawn(PIECES, pool, source)
    for _ in range(count):
        if source.random() < 0.05:
            yield source.choice(messages)
            continue
        parts = [source.choice(pieces) for _ in range(source.randint(1, 6))]
        text = parts[0]
        for part in parts[1:]:
            text += source.choice(JOINER_TEXTS) + part
        yield text
