"""PII values to plant in text, and text that holds none, for the analytics PII tests (the
analytics events themselves are in ``support.strategies.analytics``).

Every PII generator builds values the way the real thing is defined (Luhn check digit, IBAN
mod-97 check digits, SSA area/group/serial rules), never by asking the code under test.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
import string
from datetime import date

from hypothesis import strategies as st

# --- text around planted values -----------------------------------------------------------------

# Characters that end a token: what sits between a planted value and the text around it.
BOUNDARIES = " \t\n,;()[]<>\"'!?=/"
_BOUNDARY = st.sampled_from(BOUNDARIES)
ANY_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")) | st.just("\n"),
    max_size=40,
)
TEXT_WITHOUT_DIGITS_OR_AT = st.text(
    alphabet=st.characters(
        codec="utf-8", exclude_categories=("Cs", "Cc", "Nd"), exclude_characters="@"
    ),
    max_size=40,
)


@st.composite
def planted(
    draw: st.DrawFn, value: st.SearchStrategy[str], around: st.SearchStrategy[str] = ANY_TEXT
) -> tuple[str, str]:
    """``(message, value)``: ``value`` in the text ``around`` draws, set off by token
    boundaries."""
    secret = draw(value)
    before = draw(around) + draw(_BOUNDARY)
    after = draw(_BOUNDARY) + draw(around)
    return before + secret + after, secret


# --- PII values ---------------------------------------------------------------------------------


def luhn_check_digit(payload: str) -> str:
    """The digit that makes ``payload + digit`` pass the Luhn check."""
    total = 0
    for offset, char in enumerate(reversed(payload)):
        value = int(char)
        if offset % 2 == 0:  # doubled: the check digit will sit to its right
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return str((10 - total % 10) % 10)


def passes_luhn(digits: str) -> bool:
    return luhn_check_digit(digits[:-1]) == digits[-1]


@st.composite
def card_numbers(draw: st.DrawFn) -> str:
    """A Luhn-valid number of 13 to 19 digits, as written: plain, in groups of 4, or with a
    separator after any digit."""
    length = draw(st.integers(13, 19))
    payload = draw(st.text(string.digits, min_size=length - 1, max_size=length - 1))
    digits = payload + luhn_check_digit(payload)
    return draw(_written_with_separators(digits, " -"))


@st.composite
def _written_with_separators(draw: st.DrawFn, digits: str, separators: str) -> str:
    style = draw(st.sampled_from(["plain", "fours", "random"]))
    if style == "plain":
        return digits
    separator = draw(st.sampled_from(separators))
    if style == "fours":
        return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    out = [digits[0]]
    for char in digits[1:]:
        if draw(st.booleans()):
            out.append(draw(st.sampled_from(separators)))
        out.append(char)
    return "".join(out)


def iban_check_digits(country: str, bban: str) -> str:
    """ISO 13616 check digits: 98 minus the mod-97 of BBAN + country + "00", letters as 10-35."""
    rearranged = bban + country + "00"
    number = int("".join(str(int(char, 36)) for char in rearranged))
    return f"{98 - number % 97:02d}"


@st.composite
def ibans(draw: st.DrawFn) -> str:
    """An IBAN with valid check digits, electronic (no spaces) or printed in groups of 4."""
    country = draw(st.text(string.ascii_uppercase, min_size=2, max_size=2))
    bban = draw(st.text(string.digits + string.ascii_uppercase, min_size=11, max_size=30))
    iban = country + iban_check_digits(country, bban) + bban
    if draw(st.booleans()):
        return iban
    return " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))


@st.composite
def emails(draw: st.DrawFn) -> str:
    local = draw(st.text(string.ascii_letters + string.digits + "._%+-", min_size=1, max_size=30))
    label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
    labels = draw(st.lists(label, min_size=1, max_size=3))
    tld = draw(st.text(string.ascii_lowercase, min_size=2, max_size=6))
    return f"{local}@{'.'.join(labels)}.{tld}"


@st.composite
def phone_numbers(draw: st.DrawFn) -> str:
    """North American numbers in their usual written shapes, or international ``+`` numbers of
    8 to 15 digits with any single separators."""
    if draw(st.booleans()):
        area, exchange, line = (
            draw(st.text(string.digits, min_size=n, max_size=n)) for n in (3, 3, 4)
        )
        shape = draw(
            st.sampled_from(
                [
                    "({a}) {e}-{l}",
                    "({a}){e}-{l}",
                    "{a}-{e}-{l}",
                    "{a}.{e}.{l}",
                    "{a} {e} {l}",
                    "+1 {a} {e} {l}",
                    "1-{a}-{e}-{l}",
                    "+1 ({a}) {e}-{l}",
                ]
            )
        )
        return shape.format(a=area, e=exchange, l=line)
    country = draw(st.text(string.digits, min_size=1, max_size=3).filter(lambda c: c[0] != "0"))
    rest = draw(st.text(string.digits, min_size=8 - len(country), max_size=15 - len(country)))
    separator = draw(st.sampled_from(["", " ", "-"]))
    return "+" + country + separator + draw(_written_with_separators(rest, " -."))


_ITIN_GROUPS = [*range(50, 66), *range(70, 89), 90, 91, 92, *range(94, 100)]


@st.composite
def ssns(draw: st.DrawFn) -> str:
    """A plausible SSN (area 001-899 but 666, group 01-99, serial 0001-9999) or ITIN (area 9xx,
    group in the ITIN ranges), dashed, spaced or bare."""
    if draw(st.booleans()):
        area = draw(st.integers(1, 899).filter(lambda a: a != 666))
        group = draw(st.integers(1, 99))
    else:
        area = draw(st.integers(900, 999))
        group = draw(st.sampled_from(_ITIN_GROUPS))
    serial = draw(st.integers(1, 9999))
    separator = draw(st.sampled_from(["-", " ", ""]))
    return f"{area:03d}{separator}{group:02d}{separator}{serial:04d}"


@st.composite
def ip_addresses(draw: st.DrawFn) -> str:
    """IPv4 dotted quads; IPv6 in full or compressed form. Compressed forms with neither a
    decimal digit nor a 4-digit group (``::a``, ``ab::``) are left out: the documented rule keeps
    them, as they read like code (``a::b``) far more often than like addresses."""
    if draw(st.booleans()):
        return str(ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1))))
    address = ipaddress.IPv6Address(draw(st.integers(0, 2**128 - 1)))
    if draw(st.booleans()):
        return address.exploded
    text = address.compressed
    groups = text.split(":")
    if not any(c.isdigit() for c in text) and not any(len(g) == 4 for g in groups):
        return address.exploded
    return text


# --- the forms people write PII in (issue 11) ----------------------------------------------------


@st.composite
def written_cards(draw: st.DrawFn) -> str:
    """A Luhn-valid card in groups of four split by dots, NBSPs or double spaces."""
    length = draw(st.integers(13, 19))
    payload = draw(st.text(string.digits, min_size=length - 1, max_size=length - 1))
    digits = payload + luhn_check_digit(payload)
    separator = draw(st.sampled_from([".", "\u00a0", "  ", "\u202f"]))
    return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))


@st.composite
def written_emails(draw: st.DrawFn) -> str:
    """Addresses with an apostrophe, a quoted local part, or an IP-literal domain."""
    name = draw(st.text(string.ascii_lowercase, min_size=1, max_size=8))
    shape = draw(st.sampled_from(["apostrophe", "quoted", "literal4", "literal6"]))
    if shape == "apostrophe":
        return f"{name}o'{name}@example.com"
    if shape == "quoted":
        return f'"{name} {name}"@example.org'
    if shape == "literal4":
        return f"{name}@[{ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1)))}]"
    return f"{name}@[IPv6:{ipaddress.IPv6Address(draw(st.integers(1, 2**128 - 1))).exploded}]"


@st.composite
def written_ibans(draw: st.DrawFn) -> str:
    """A German IBAN (a country that issues them) in lower case or split by dashes."""
    bban = draw(st.text(string.digits, min_size=18, max_size=18))
    iban = "DE" + iban_check_digits("DE", bban) + bban
    grouped = [iban[i : i + 4] for i in range(0, len(iban), 4)]
    if draw(st.booleans()):
        return " ".join(grouped).lower()
    return "-".join(grouped)


@st.composite
def written_phones(draw: st.DrawFn) -> str:
    """``00``-prefixed international, national with a trunk 0, and bare 10-digit numbers."""
    shape = draw(st.sampled_from(["00", "national", "bare"]))
    if shape == "00":
        rest = draw(st.text(string.digits, min_size=9, max_size=10))
        return f"00{draw(st.integers(1, 99))} {rest[:2]} {rest[2:6]} {rest[6:]}"
    if shape == "national":
        rest = draw(st.text(string.digits, min_size=8, max_size=8))
        return f"0{draw(st.integers(10, 99))} {rest[:4]} {rest[4:]}"
    return draw(st.text(string.digits, min_size=9, max_size=9).map(lambda d: "5" + d))


@st.composite
def written_ids(draw: st.DrawFn) -> str:
    """SSNs with dots and zero-padded IPv4 addresses."""
    if draw(st.booleans()):
        area = draw(st.integers(1, 665))
        return f"{area:03d}.{draw(st.integers(1, 99)):02d}.{draw(st.integers(1, 9999)):04d}"
    return ".".join(f"{draw(st.integers(0, 255)):03d}" for _ in range(4))


_B64URL = string.ascii_letters + string.digits + "-_"


@st.composite
def secrets(draw: st.DrawFn) -> str:
    """JWTs, cloud access key ids, API keys, URL credentials and Bearer credentials."""
    text = st.text(_B64URL, min_size=20, max_size=40)
    shape = draw(st.sampled_from(["jwt", "akia", "sk", "ghp", "url", "bearer"]))
    if shape == "jwt":
        return f"eyJ{draw(text)}.eyJ{draw(text)}.{draw(text)}"
    if shape == "akia":
        return "AKIA" + draw(
            st.text(string.ascii_uppercase + string.digits, min_size=16, max_size=16)
        )
    if shape == "sk":
        return "sk-proj-" + draw(
            st.text(string.ascii_letters + string.digits, min_size=20, max_size=40)
        )
    if shape == "ghp":
        return "ghp_" + draw(
            st.text(string.ascii_letters + string.digits, min_size=36, max_size=36)
        )
    if shape == "url":
        return f"https://admin:{draw(text)}@db.example.com/x"
    return "Bearer " + draw(text)


def covered_pii() -> st.SearchStrategy[str]:
    """Every form issue 11 names, one strategy."""
    return st.one_of(
        written_cards(),
        written_emails(),
        written_ibans(),
        written_phones(),
        written_ids(),
        secrets(),
    )


# --- national and looser forms (issue 22) --------------------------------------------------------

# How people group the digits of a number: one character, or a dash or slash with a space on
# each side.
GROUPINGS = (" ", "-", ".", "/", " - ", " / ")
_GROUPING = st.sampled_from(GROUPINGS)
_LOOSE_GROUPING = st.sampled_from(["/", " - ", " / "])


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text(string.digits, min_size=count, max_size=count)


@st.composite
def national_phones(draw: st.DrawFn) -> str:
    """National numbers with their trunk 0 as each country writes them: UK mobiles
    (``07096 311647``) and geographic numbers (``020 7946 0958``, ``0161 496 0123``,
    ``01632 960123``), French (``06 12 34 56 78``) and German ones (``030 1234567``,
    ``0221 1234567``, ``(089) 12345678``), 10 or 11 digits, grouped by any grouping."""
    separator = draw(_GROUPING)
    country = draw(st.sampled_from(["uk-mobile", "uk-london", "uk-city", "uk-town", "fr", "de"]))
    if country == "uk-mobile":
        groups = ["07" + draw(_digits(3)), draw(_digits(6))]
    elif country == "uk-london":
        groups = ["020", draw(_digits(4)), draw(_digits(4))]
    elif country == "uk-city":
        groups = ["01" + draw(_digits(1)) + "1", draw(_digits(3)), draw(_digits(4))]
    elif country == "uk-town":
        groups = ["01" + draw(_digits(3)), draw(_digits(6))]
    elif country == "fr":
        groups = ["0" + str(draw(st.integers(1, 9))), *(draw(_digits(2)) for _ in range(4))]
    else:
        area = str(draw(st.integers(2, 9))) + draw(_digits(draw(st.integers(1, 3))))
        subscriber = draw(_digits(draw(st.integers(9, 10)) - len(area)))
        if draw(st.booleans()):
            return f"(0{area}) {subscriber}"
        groups = ["0" + area, subscriber]
    return separator.join(groups)


@st.composite
def international_phones(draw: st.DrawFn) -> str:
    """``00`` or ``+``, a country code and 8 to 15 digits in all, grouped by any grouping
    (``0044 20 7974 7542``, ``+44/20/7974/7542``, ``0049 - 30 - 1234567``)."""
    prefix = draw(st.sampled_from(["00", "+"]))
    country = str(draw(st.integers(1, 999)))
    rest = draw(_digits(draw(st.integers(8, 15)) - len(country)))
    separator = draw(_GROUPING)
    cuts = sorted(draw(st.sets(st.integers(1, len(rest) - 1), min_size=1, max_size=3)))
    groups = [rest[a:b] for a, b in itertools.pairwise([0, *cuts, len(rest)])]
    return prefix + country + separator + separator.join(groups)


@st.composite
def loosely_grouped_numbers(draw: st.DrawFn) -> str:
    """Cards in groups of four and North American numbers in 3-3-4 split by ``/``, `` - `` or
    `` / `` (``4111 / 1111 / 1111 / 1111``, ``555 - 123 - 4567``)."""
    separator = draw(_LOOSE_GROUPING)
    if draw(st.booleans()):
        length = draw(st.integers(13, 19))
        payload = draw(_digits(length - 1))
        digits = payload + luhn_check_digit(payload)
        return separator.join(digits[i : i + 4] for i in range(0, len(digits), 4))
    area, exchange, line = draw(_digits(3)), draw(_digits(3)), draw(_digits(4))
    if draw(st.booleans()):
        return f"({area}) {exchange}{separator}{line}"
    return separator.join([area, exchange, line])


# RFC 5322 atext besides letters and digits; "/" is left out (see ``rfc5322_emails``).
EMAIL_SPECIALS = "!#$%&'*+-=?^_`{|}~"


@st.composite
def rfc5322_emails(draw: st.DrawFn) -> str:
    """Addresses whose local part holds RFC 5322 specials (``&``, ``{``, ``}``, ``'``, ``+``,
    ``=``, ...) anywhere, dots between, and internationalized domains written in ASCII
    (``xn--`` labels, as a punycode TLD too). An apostrophe follows a letter or digit, as in a
    name: after anything else it reads as a quote around the address."""
    words = st.text(string.ascii_letters + string.digits, min_size=1, max_size=8)
    specials = st.text(EMAIL_SPECIALS.replace("'", ""), min_size=1, max_size=3)
    parts = draw(st.lists(st.one_of(words, specials, st.just("'")), min_size=1, max_size=5))
    local = "".join(
        "'" if part == "'" and index and parts[index - 1][-1:].isalnum() else part.strip("'")
        for index, part in enumerate(parts)
    ).strip(".") or draw(words)
    label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
    punycode = st.from_regex(r"xn--[a-z0-9]{1,8}(-[a-z0-9]{1,6})?", fullmatch=True)
    labels = draw(st.lists(label | punycode, min_size=1, max_size=3))
    tld = draw(st.text(string.ascii_lowercase, min_size=2, max_size=6) | punycode)
    return f"{local}@{'.'.join(labels)}.{tld}"


def looser_pii() -> st.SearchStrategy[str]:
    """Every form issue 22 names, one strategy."""
    return st.one_of(
        national_phones(), international_phones(), loosely_grouped_numbers(), rfc5322_emails()
    )


# --- digits that are not PII --------------------------------------------------------------------


@st.composite
def non_luhn_numbers(draw: st.DrawFn) -> str:
    length = draw(st.integers(13, 19))
    payload = draw(st.text(string.digits, min_size=length - 1, max_size=length - 1))
    wrong = (int(luhn_check_digit(payload)) + draw(st.integers(1, 9))) % 10
    return payload + str(wrong)


@st.composite
def implausible_ssns(draw: st.DrawFn) -> str:
    """Nine digits that break the SSN and ITIN structure rules."""
    area, group, serial = draw(
        st.sampled_from(
            [
                (0, draw(st.integers(1, 99)), draw(st.integers(1, 9999))),
                (666, draw(st.integers(1, 99)), draw(st.integers(1, 9999))),
                (draw(st.integers(1, 899)), 0, draw(st.integers(1, 9999))),
                (draw(st.integers(1, 899)), draw(st.integers(1, 99)), 0),
                (
                    draw(st.integers(900, 999)),
                    draw(st.sampled_from([0, 10, 49, 66, 69, 89, 93])),
                    1,
                ),
            ]
        )
    )
    return f"{area:03d}{group:02d}{serial:04d}"


@st.composite
def written_dates(draw: st.DrawFn) -> str:
    """Dates as people write them: year, month and day in any usual order, split alike by
    dashes, dots or slashes; alone, with a time after them, or two as a range (`` - ``)."""

    def one() -> str:
        day = draw(st.dates(date(1900, 1, 1), date(2099, 12, 31)))
        separator = draw(st.sampled_from("-./"))
        order = draw(st.sampled_from(["%Y{0}%m{0}%d", "%d{0}%m{0}%Y", "%m{0}%d{0}%Y"]))
        return day.strftime(order.format(separator))

    shape = draw(st.sampled_from(["date", "date and time", "range"]))
    if shape == "date":
        return one()
    if shape == "date and time":
        return f"{one()} {draw(st.times()).strftime('%H:%M')}"
    return f"{one()} - {one()}"


def non_pii_numbers() -> st.SearchStrategy[str]:
    """Numbers an error message holds that are not PII: years, dates (written out, with a time,
    as a range), times, versions, prices,
    short and very long ids (never 10 digits: a bare 10-digit run is a phone number), non-Luhn
    card-length numbers, implausible SSNs."""
    return st.one_of(
        st.integers(1900, 2099).map(str),
        st.dates().map(lambda d: d.isoformat()),
        written_dates(),
        st.times().map(lambda t: t.strftime("%H:%M:%S")),
        st.lists(st.integers(0, 99), min_size=2, max_size=3).map(
            lambda parts: "v" + ".".join(map(str, parts))
        ),
        st.integers(0, 10**6).map(lambda cents: f"${cents / 100:,.2f}"),
        st.text(string.digits, min_size=1, max_size=8),
        st.text(string.digits, min_size=20, max_size=40),
        st.builds(lambda n: f"ORD-{n}", st.text(string.digits, min_size=5, max_size=8)),
        non_luhn_numbers(),
        implausible_ssns(),
    )


CREDENTIAL_WORDS = re.compile(r"\b(?:bearer|basic)\b")
"""``Bearer <token>`` and ``Basic <token>`` are credentials to the redactor, whatever the token:
a message holding either word before a number is not free of PII (Hypothesis found
``1900 bearer 1900``)."""
WORDS = (
    st.text(string.ascii_lowercase + ",.;!? ", min_size=1, max_size=12)
    .map(lambda w: f" {w.strip(' ') or 'x'} ")
    .filter(lambda w: not CREDENTIAL_WORDS.search(w))
)


@st.composite
def messages_without_pii(draw: st.DrawFn) -> str:
    """Lower-case words (no ``@``, ``+`` or capitals) between numbers that are not PII."""
    parts = [draw(WORDS)]
    for number in draw(st.lists(non_pii_numbers(), min_size=1, max_size=6)):
        parts += [number, draw(WORDS)]
    return "".join(parts)
