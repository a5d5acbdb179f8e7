"""The reference reading of ``strip_pii``: the stripper as it was before the combined scans
(``src/toolcall_spec/analytics/pii.py`` at commit 7ad5285), kept as a test oracle only. Every
family runs as its own pass, in order, each on the output of the one before: the semantics the
faster code in ``toolcall_spec.analytics.pii`` must keep, character for character.

Only what the faster code rewrote is kept here, as it was (the passes and their patterns);
everything the change left alone (the tokens, the IPv6 and e-mail helpers, Luhn, the SSN rules,
the phone checks) is imported from the package, so a fix to those lands once. One fix since that
commit lives in a shared helper: a ``00`` number that another digit group follows is not a phone
number (``_international_phone``), so a dotted card that starts with ``00`` is seen whole by the
card pass instead of leaking its last group. Issue 22's looser forms changed both readings alike:
the patterns here take the same groupings (``_GROUPING``: a slash, `` - `` or `` / `` too), the
card windows the same rule for loose separators (written out here window by window, where the
fast code keeps running counts), and the shared helpers carry the rest (local parts in
``_local_start`` and ``_after_opening_quote``, the date rule in ``_national_phone``, the
closing parenthesis in ``_international_phone``).

Never imported by shipped code; ``tests/analytics/test_analytics_pii_reference.py`` compares the
two on generated text.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable

from toolcall_spec.analytics.pii import (  # unchanged by the faster code: shared
    _CARD_SEPARATORS,
    _DIGITS,
    _GROUPING,
    _IBAN,
    _IPV4,
    _LETTER_LABEL,
    _SHORTEST_NUMERIC_PII,
    _URL_USERINFO,
    CARD_TOKEN,
    EMAIL_TOKEN,
    IBAN_TOKEN,
    IP_TOKEN,
    SSN_TOKEN,
    Span,
    _after_opening_quote,
    _after_scheme,
    _iban_end,
    _international_length,
    _local_start,
    _luhn_valid,
    _prefix_sums,
    _redact_ipv6,
    _redact_phones,
    _redact_phones_anywhere,
    _replace_spans,
    _secret,
    _special_email_spans,
    _userinfo,
    is_plausible_ssn,
    read_window,
    redact_later_phones,
    widen_into_numbers,
)


def strip_pii(text: str) -> str:
    """``text`` with every kind of PII replaced by its token, pass by pass."""
    for redact in _PASSES:
        text = redact(text)
    return text


# --- secrets ----------------------------------------------------------------------------------

# One pattern per family, each run only when one of its markers (a substring the form cannot do
# without) is in the text, so prose without any costs a few substring searches. Every pattern
# starts with a literal, so the engine skips positions that cannot start one; lengths are bounded
# below so ordinary words stay.
_SECRETS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # JWT: a base64url JSON header ({"...), then payload and signature
    (("eyJ",), re.compile(r"eyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*")),
    # cloud access key ids (AWS): a four-letter kind, then 16 capitals or digits
    (("A",), re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[A-Z0-9]{16}(?![A-Za-z0-9])")),
    # API keys: sk-..., sk-proj-..., pk_live_...; ghp_..., github_pat_...; glpat-...; xoxb-...
    (
        ("k-", "k_"),
        re.compile(r"[spr]k(?:-(?:[a-z]+-)?[A-Za-z0-9_\-]{16,}|_(?:live|test)_[A-Za-z0-9]{10,})"),
    ),
    (("gh",), re.compile(r"gh(?:[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,})")),
    (("glpat-",), re.compile(r"glpat-[A-Za-z0-9_\-]{20,}")),
    (("xox",), re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}")),
    (("AIza",), re.compile(r"AIza[A-Za-z0-9_\-]{35}")),
    # the credentials of an HTTP Authorization header written out
    (("earer ", "EARER "), re.compile(r"(?<=[Bb]earer )[\w\-.~+/]+=*|(?<=BEARER )[\w\-.~+/]+=*")),
    (
        ("asic ", "ASIC "),
        re.compile(r"(?<=[Bb]asic )[A-Za-z0-9+/]{8,}=*|(?<=BASIC )[A-Za-z0-9+/]{8,}=*"),
    ),
)
"""Per family: markers (substrings it cannot do without; a cheap ``in`` test each), pattern."""


def _redact_secrets(text: str) -> str:
    for markers, pattern in _SECRETS:
        for marker in markers:
            if marker in text:
                text = pattern.sub(_secret, text)
                break
    return _URL_USERINFO.sub(_userinfo, text) if "://" in text else text


# --- e-mail -------------------------------------------------------------------------------------

# Runs of characters an address can hold ('@' included): one linear scan finds every candidate.
_DOMAIN = re.compile(r"[^\W_](?:[^\W_]|[.\-])*")


def _email_spans(text: str) -> list[Span]:
    """Every address, found from its ``@`` (so text without one costs nothing more): the run of
    local-part characters before it, the domain after it."""
    spans: list[Span] = []
    at = text.find("@")
    while at >= 0:
        start = _after_opening_quote(text, _after_scheme(text, _local_start(text, at), at), at)
        local = text[start:at]
        quote = len(local) - len(local.lstrip("'"))  # a quote around the address stays
        if len(local) > quote:
            end = _domain_length(text, at + 1)
            if end:
                spans.append((start + quote, at + 1 + end))
        at = text.find("@", at + 1)
    return spans


def _domain_length(text: str, at: int) -> int:
    """How much of ``text`` from ``at`` is a domain with a label of two letters or more after a
    dot (``example.com``); 0 when it holds none."""
    match = _DOMAIN.match(text, at)
    if match is None:
        return 0
    domain = match.group().rstrip(".-")
    return len(domain) if _LETTER_LABEL.search(domain, 1) else 0


def _redact_emails(text: str) -> str:
    if "@" not in text:
        return text
    spans = sorted(_email_spans(text) + _special_email_spans(text))
    return _replace_spans(text, widen_into_numbers(text, spans, _digit_passes), EMAIL_TOKEN)


# --- IBAN ---------------------------------------------------------------------------------------


def _iban_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    match = _IBAN.search(text)
    while match is not None:
        end = _iban_end(text, match)
        if end is not None:
            spans.append((match.start() - 2, end))
        # Another IBAN may start inside this match (overlapping spans merge): every start counts.
        match = _IBAN.search(text, match.start() + 1)
    return spans


def _redact_ibans(text: str) -> str:
    return _replace_spans(text, _iban_spans(text), IBAN_TOKEN)


# --- IP addresses -------------------------------------------------------------------------------


def _redact_ipv4(text: str) -> str:
    return _IPV4.sub(IP_TOKEN, text) if "." in text else text


# --- phone numbers ------------------------------------------------------------------------------

# "+" or "00" and 8 to 15 digits (E.164), single separators and parentheses allowed between; not
# a later group of a longer grouped number (``DE00 3704 0044 ...``).
_INTL_PHONE = re.compile(
    rf"(?<![0-9])(?:\+|(?<![0-9][-./ ])(?<![0-9] [-/] )00)[1-9](?:{_GROUPING}?\(?[0-9]\)?){{7,14}}"
    r"(?![0-9])",
    re.ASCII,
)


def _redact_international_phones(text: str) -> str:
    if "+" not in text and "00" not in text:
        return text
    return _redact_phones(text, _INTL_PHONE, _international_length, split_00=False)


# Issue 29: the phone passes after the cards and SSNs (later "00" numbers, North American and
# national numbers, each read to its end) are one shared function: the fast code only gates it.
_redact_north_american_phones = redact_later_phones


# --- card numbers -------------------------------------------------------------------------------

_DIGIT_CHAIN = re.compile(
    rf"[0-9](?:[{_CARD_SEPARATORS}]{{0,2}}[0-9]|(?<=[0-9]{{3}})(?: [-/] |/)[0-9])*"
)
_NON_DIGITS = re.compile(r"[^0-9]+")
_CARD_MIN, _CARD_MAX = 13, 19


def _card_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    for chain in _DIGIT_CHAIN.finditer(text):
        if chain.end() - chain.start() >= _CARD_MIN:
            spans.extend(_cards_in_chain(chain))
    return spans


def _cards_in_chain(chain: re.Match[str]) -> Iterable[Span]:
    """Every window of whole digit groups that holds 13 to 19 digits and passes the Luhn check.

    Luhn doubles every second digit counted from the right end. For a window ending before digit
    ``b`` those are the digits at offsets of the same parity as ``b``; so two prefix sums, one per
    parity, answer each window in constant time."""
    text = chain.group()
    digits = _NON_DIGITS.sub("", text).encode("ascii")
    if len(digits) < _CARD_MIN:
        return
    if len(digits) <= _CARD_MAX and _luhn_valid(digits) and _grouped_as_a_card(text):
        # The whole chain is one card: every other window lies inside it and would merge into it.
        yield chain.span()
        return
    sums = (_prefix_sums(digits, 0), _prefix_sums(digits, 1))
    starts: list[int] = []  # per group: digit offset where it starts, and where it is in the text
    places: list[int] = []
    count = 0
    for group in _DIGITS.finditer(text):
        starts.append(count)
        places.append(group.start())
        count += group.end() - group.start()
    starts.append(count)
    places.append(len(text))
    for first in range(len(starts) - 1):
        a = starts[first]
        low = bisect_left(starts, a + _CARD_MIN, first + 1)
        high = bisect_right(starts, a + _CARD_MAX, low)
        for last in range(high - 1, low - 1, -1):
            b = starts[last]
            total = sums[b % 2]
            end = places[last - 1] + b - starts[last - 1]  # where group last - 1 ends
            if (total[b] - total[a] - 48 * (b - a)) % 10 == 0 and _grouped_as_a_card(
                text[places[first] : end]
            ):
                yield (chain.start() + places[first], chain.start() + end)
                break


def _grouped_as_a_card(window: str) -> bool:
    """Split by a slash, or by a dash or slash with a space on each side, every group but the
    last has three digits or more (issue 22: a date's groups are shorter)."""
    groups = _DIGITS.findall(window)
    separators = _NON_DIGITS.findall(window)
    loose = any("/" in separator or len(separator) == 3 for separator in separators)
    return not loose or all(len(group) >= 3 for group in groups[:-1])


def _redact_cards(text: str) -> str:
    return _replace_spans(text, _card_spans(text), CARD_TOKEN)


# --- SSN and ITIN -------------------------------------------------------------------------------

# A digit first (the lookbehind after it reads the character before the match), so the engine
# skips every position without a digit.
_SSN_DASHED = re.compile(
    r"[0-9](?<![0-9][0-9])(?<![0-9]\.[0-9])[0-9]{2}([-./]| [-/] )[0-9]{2}\1[0-9]{4}(?![0-9])",
    re.ASCII,
)
_SSN_PLAIN = re.compile(r"[0-9](?<![0-9][0-9])[0-9]{2}( ?)[0-9]{2}\1[0-9]{4}(?![0-9])", re.ASCII)


def _plain_ssn(match: re.Match[str]) -> str:
    chunk = match.group()
    return SSN_TOKEN if is_plausible_ssn(chunk.replace(" ", "")) else chunk


# What both forms share (3, 2 and 4 digits, a separator or none between): one search that tells
# most windows (dates, times, versions) hold no SSN before the two passes run.
_SSN_SHAPE = re.compile(rf"[0-9]{{3}}{_GROUPING}?[0-9]{{2}}{_GROUPING}?[0-9]{{4}}", re.ASCII)


def _redact_ssns(text: str) -> str:
    if _SSN_SHAPE.search(text) is None:
        return text
    return _SSN_PLAIN.sub(_plain_ssn, _SSN_DASHED.sub(SSN_TOKEN, text))


# A run of digits and separators, 7 characters or more, from a digit to a digit: every phone
# number, card, SSN and IPv4 address lies inside one (with a "+" or "(" just before it), so
# their passes run on short windows around such runs, never over the whole text, and each only
# when the run holds enough digits for its form. IBANs are found at their check digits.
_GATE_CHAIN = re.compile(r"[0-9][0-9 .\-()/\u00a0\u2007\u202f]{5,}[0-9]")

_WINDOW_BEFORE, _WINDOW_AFTER = 4, 2
_ANY_DIGIT = re.compile(r"[0-9]")


def _digit_passes(text: str) -> str:
    """The passes for PII made of digits: IBANs over the text, the others window by window."""
    if _ANY_DIGIT.search(text) is None:
        return text
    text = _redact_ibans(text)
    out: list[str] = []
    cursor = 0
    for start, end, longest in _windows(text):
        piece = read_window(text[start:end], longest, _WINDOW_PASSES, _READ_AGAIN)
        out += (text[cursor:start], piece)
        cursor = end
    if not out:
        return text
    out.append(text[cursor:])
    return "".join(out)


def _windows(text: str) -> list[list[int]]:
    """``[start, end, most digits in a chain]`` of the windows around the chains that can hold
    a form; windows that touch are merged."""
    windows: list[list[int]] = []
    for chain in _GATE_CHAIN.finditer(text):
        start, end = chain.span()
        # A chain shorter than the shortest form the count gates (an SSN) is gated by its length:
        # an upper bound on its digits that lets through only passes that cheaply find nothing.
        digits = end - start
        if digits >= _SHORTEST_NUMERIC_PII:
            digits = sum(map(str.isdigit, chain.group()))  # only ASCII digits are in a chain
        start = max(0, start - _WINDOW_BEFORE)
        end = min(len(text), end + _WINDOW_AFTER)
        if windows and start <= windows[-1][1]:
            last = windows[-1]
            last[1] = end
            last[2] = max(last[2], digits)
        else:
            windows.append([start, end, digits])
    return windows


_PASSES: tuple[Callable[[str], str], ...] = (
    _redact_secrets,
    _redact_emails,
    _redact_ipv6,
    _digit_passes,
)
_WINDOW_PASSES: tuple[tuple[int, Callable[[str], str]], ...] = (
    (4, _redact_ipv4),  # 1.1.1.1; first, so a phone number cannot run into an address
    (8, _redact_international_phones),  # 8 digits at least
    (_CARD_MIN, _redact_cards),
    (9, _redact_ssns),
    (9, _redact_north_american_phones),  # national numbers from 9 digits
)
_PHONES_FIRST: tuple[tuple[int, Callable[[str], str]], ...] = (
    _WINDOW_PASSES[0],
    _WINDOW_PASSES[1],
    (9, _redact_phones_anywhere),
    _WINDOW_PASSES[3],
    _WINDOW_PASSES[2],
)
_CARDS_FIRST: tuple[tuple[int, Callable[[str], str]], ...] = (
    _WINDOW_PASSES[0],
    _WINDOW_PASSES[3],
    _WINDOW_PASSES[2],
    _WINDOW_PASSES[1],
    _WINDOW_PASSES[4],
)
_READ_AGAIN = (_PHONES_FIRST, _CARDS_FIRST)
