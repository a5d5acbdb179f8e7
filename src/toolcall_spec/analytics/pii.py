"""PII stripping for analytics text, in linear time on any input.

Each kind of PII is replaced by a fixed token; the passes run in this order, each on the output of
the one before (a token holds no digit and no ``@``, so a later pass never matches inside one):

1. e-mail addresses -> ``[EMAIL_REDACTED]``
2. IBANs whose mod-97 checksum holds -> ``[IBAN_REDACTED]``
3. IPv6, then IPv4 addresses -> ``[IP_REDACTED]``
4. international phone numbers (``+`` and 8 to 15 digits) -> ``[PHONE_REDACTED]``
5. Luhn-valid card numbers, 13 to 19 digits -> ``[CC_REDACTED]``
6. US SSNs and ITINs -> ``[SSN_REDACTED]``
7. North American phone numbers written with a separator or parentheses -> ``[PHONE_REDACTED]``

Rules that decide what is *not* PII (so ids, years and counters stay readable):

- A card is 13 to 19 digits, optionally split by single spaces or dashes, that passes the Luhn
  check. It must start and end at a digit-group boundary: a card glued to more digits
  (``41111111111111112``) is a different number and stays.
- An SSN is ``AAA-GG-SSSS`` (always redacted, as upstream does), or ``AAA GG SSSS`` or nine bare
  digits bounded by non-digits that also form a plausible SSN (area not 000, 666 or 900-999,
  group not 00, serial not 0000) or ITIN (area 9xx, group 50-65, 70-88, 90-92 or 94-99). So a
  bare 9-digit order id with a valid-looking structure is redacted: privacy wins over fidelity
  for the one length that SSNs have.
- A phone number needs a ``+`` or, for the North American 3-3-4 shape, a separator (``-``, ``.``,
  space) or parentheses: a bare 10-digit run is a Unix timestamp or an id far more often than a
  phone number, and stays.
- An IPv4 address is four dotted octets 0-255 not glued to more dotted digits (``1.2.3.4.5`` is a
  version string). An IPv6 address is a token (not glued to a word) the standard library parses
  as one and that has a decimal digit, a group of four hex digits or all eight groups (so
  ``Foo::bar``, ``std::fmt``, ``a::b`` and ``::`` stay).

Linear time: every regular expression here is either a single character class run, a run whose
only repetition cannot fail after it matched (so the engine never backtracks into it), or a
pattern of bounded length; all further work (Luhn, mod-97, IPv6 parsing) is bounded per start
position. benchmarks/bench_ingest.py measures 32, 64 and 128 KB adversarial inputs.
"""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from itertools import accumulate

EMAIL_TOKEN = "[EMAIL_REDACTED]"
CARD_TOKEN = "[CC_REDACTED]"
SSN_TOKEN = "[SSN_REDACTED]"
PHONE_TOKEN = "[PHONE_REDACTED]"
IBAN_TOKEN = "[IBAN_REDACTED]"
IP_TOKEN = "[IP_REDACTED]"

MAX_DEPTH = 64
"""Nesting depth ``strip_pii_deep`` walks; deeper values are replaced by ``DEPTH_TOKEN``."""
DEPTH_TOKEN = "[TOO_DEEP]"

Span = tuple[int, int]


def strip_pii(text: str) -> str:
    """``text`` with every e-mail, IBAN, IP address, phone, card number, SSN and ITIN replaced by
    its token. Linear in ``len(text)``."""
    for redact in _PASSES:
        text = redact(text)
    return text


def strip_pii_deep(value: object, _depth: int = 0) -> object:
    """A copy of a JSON value with ``strip_pii`` applied to every string, keys included."""
    if isinstance(value, str):
        return strip_pii(value)
    if _depth >= MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        return DEPTH_TOKEN
    if isinstance(value, Mapping):
        return {
            strip_pii(str(key)): strip_pii_deep(item, _depth + 1) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [strip_pii_deep(item, _depth + 1) for item in value]
    return value


# --- helpers ------------------------------------------------------------------------------------


def _replace_spans(text: str, spans: Iterable[Span], token: str) -> str:
    """Replace each span by ``token``; spans come sorted by start, and overlapping or touching
    spans become one token."""
    out: list[str] = []
    cursor = 0
    current: Span | None = None
    for start, end in spans:
        if current is not None and start <= current[1]:
            current = (current[0], max(current[1], end))
            continue
        if current is not None:
            out += (text[cursor : current[0]], token)
            cursor = current[1]
        current = (start, end)
    if current is None:
        return text
    out += (text[cursor : current[0]], token, text[current[1] :])
    return "".join(out)


# --- e-mail -------------------------------------------------------------------------------------

# Runs of characters an address can hold ('@' included): one linear scan finds every candidate.
_EMAIL_RUN = re.compile(r"[\w.%+\-@]+")
_DOMAIN = re.compile(r"[^\W_](?:[^\W_]|[.\-])*")
_LETTER_LABEL = re.compile(r"\.[^\W\d_]{2}")


def _email_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    for run in _EMAIL_RUN.finditer(text):
        parts = run.group().split("@")
        offset = run.start()  # where parts[k - 1], the local part, starts
        for k in range(1, len(parts)):
            local, domain = parts[k - 1], parts[k]
            if local and "." in domain:
                end = _domain_length(domain)
                if end:
                    spans.append((offset, offset + len(local) + 1 + end))
            offset += len(local) + 1
    return spans


def _domain_length(part: str) -> int:
    """How much of ``part`` is a domain with a label of two letters or more after a dot
    (``example.com``); 0 when it holds none."""
    match = _DOMAIN.match(part)
    if match is None:
        return 0
    domain = match.group().rstrip(".-")
    return len(domain) if _LETTER_LABEL.search(domain, 1) else 0


def _redact_emails(text: str) -> str:
    return _replace_spans(text, _email_spans(text), EMAIL_TOKEN) if "@" in text else text


# --- IBAN ---------------------------------------------------------------------------------------

# Country code and check digits, then 11 to 30 letters or digits, single spaces allowed between.
_IBAN = re.compile(r"(?<![A-Za-z0-9])([A-Z]{2}[0-9]{2})((?: ?[A-Z0-9]){11,30})", re.ASCII)
_IBAN_DIGITS = str.maketrans({chr(c): str(c - 55) for c in range(ord("A"), ord("Z") + 1)})


def _iban_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    match = _IBAN.search(text)
    while match is not None:
        end = _iban_end(text, match)
        if end is not None:
            spans.append((match.start(), end))
        # Another IBAN may start inside this match (overlapping spans merge): every start counts.
        match = _IBAN.search(text, match.start() + 1)
    return spans


def _iban_end(text: str, match: re.Match[str]) -> int | None:
    """The end of the longest IBAN with a valid mod-97 checksum in ``match``, or ``None``.

    It ends at the end of a space-separated group that is not glued to a following letter or
    digit."""
    prefix, body = match.group(1), match.group(2)
    after = text[match.end() : match.end() + 1]
    ends = [len(body)] if not after.isalnum() else []
    ends += list(_positions(body, " "))
    for end in sorted(ends, reverse=True):
        bban = body[:end].replace(" ", "")
        if len(bban) >= 11 and int((bban + prefix).translate(_IBAN_DIGITS)) % 97 == 1:
            return match.start(2) + end
    return None


def _positions(chunk: str, char: str) -> Iterable[int]:
    at = chunk.find(char)
    while at >= 0:
        yield at
        at = chunk.find(char, at + 1)


def _redact_ibans(text: str) -> str:
    return _replace_spans(text, _iban_spans(text), IBAN_TOKEN)


# --- IP addresses -------------------------------------------------------------------------------

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = re.compile(rf"(?<![0-9])(?<![0-9]\.){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?[0-9])", re.ASCII)
_IPV6_RUN = re.compile(r"[0-9A-Fa-f:.]+", re.ASCII)
_IPV6_MAX = 45
_WORD = re.compile(r"\w")


def _ipv6_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    for run in _IPV6_RUN.finditer(text):
        if run.group().count(":") < 2:
            continue
        span = _ipv6_in_run(text, run.start(), run.end())
        if span is not None:
            spans.append(span)
    return spans


def _ipv6_in_run(text: str, start: int, end: int) -> Span | None:
    """The address a run of hex digits, colons and dots holds: the run itself, or the run without
    a first or last group that is glued to a neighbouring word."""
    if end - start > 2 * _IPV6_MAX:
        return None
    first_colon = text.find(":", start, end)
    last_colon = text.rfind(":", start, end)
    # Without its first (last) group, a run starts (ends) at a colon, or at "::" which is kept.
    starts = (start, first_colon + (text[first_colon + 1 : first_colon + 2] != ":"))
    ends = (end, last_colon + (text[last_colon - 1] == ":"))
    for left in starts:
        for right in ends:
            span = _ipv6_candidate(text, left, right)
            if span is not None:
                return span
    return None


def _ipv6_candidate(text: str, start: int, end: int) -> Span | None:
    while end > start and text[end - 1] in ".:" and text[end - 2 : end] != "::":
        end -= 1
    if start < end and text[start] == ":" and text[start : start + 2] != "::":
        start += 1
    candidate = text[start:end]
    if not 2 <= len(candidate) <= _IPV6_MAX or not _looks_like_address(candidate):
        return None
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    if _WORD.match(before) or _WORD.match(after):
        return None
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return None
    return (start, end)


def _looks_like_address(candidate: str) -> bool:
    """A decimal digit, a group of four hex digits or all eight groups: ``a::b`` and ``A::B`` read
    as code, ``::ffff`` and ``fe80::1`` as addresses."""
    groups = candidate.split(":")
    return (
        any(c.isdigit() for c in candidate) or len(groups) >= 8 or any(len(g) == 4 for g in groups)
    )


def _redact_ips(text: str) -> str:
    if ":" in text:
        text = _replace_spans(text, _ipv6_spans(text), IP_TOKEN)
    return _IPV4.sub(IP_TOKEN, text) if "." in text else text


# --- phone numbers ------------------------------------------------------------------------------

# "+" and 8 to 15 digits (E.164), single separators and parentheses allowed between digits.
_INTL_PHONE = re.compile(r"(?<![0-9+])\+[0-9](?:[-. ]?\(?[0-9]\)?){7,14}", re.ASCII)
_NANP_PHONE = re.compile(
    r"(?<![0-9])(?:\+?1[-. ]?)?"
    r"(?P<local>(?:\([0-9]{3}\) ?|[0-9]{3})[-. ]?[0-9]{3}[-. ]?[0-9]{4})(?![0-9])",
    re.ASCII,
)


def _north_american_phone(match: re.Match[str]) -> str:
    chunk = match.group()
    shaped = not match.group("local").isdigit() or chunk.startswith("+")
    return PHONE_TOKEN if shaped else chunk


def _redact_international_phones(text: str) -> str:
    return _INTL_PHONE.sub(PHONE_TOKEN, text) if "+" in text else text


def _redact_north_american_phones(text: str) -> str:
    return _NANP_PHONE.sub(_north_american_phone, text)


# --- card numbers -------------------------------------------------------------------------------

_DIGIT_CHAIN = re.compile(r"[0-9](?:[ \-]?[0-9])*", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_CARD_MIN, _CARD_MAX = 13, 19
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")  # a digit doubled, its digits summed


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
    digits = text.replace(" ", "").replace("-", "").encode("ascii")
    if len(digits) < _CARD_MIN:
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
    places.append(len(text) + 1)  # so places[k + 1] - 1 is where group k ends
    for first in range(len(starts) - 1):
        a = starts[first]
        low = bisect_left(starts, a + _CARD_MIN, first + 1)
        high = bisect_right(starts, a + _CARD_MAX, low)
        for last in range(high - 1, low - 1, -1):
            b = starts[last]
            total = sums[b % 2]
            if (total[b] - total[a] - 48 * (b - a)) % 10 == 0:
                yield (chain.start() + places[first], chain.start() + places[last] - 1)
                break


def _prefix_sums(digits: bytes, parity: int) -> list[int]:
    """Prefix sums of the digits' byte values, the digits at offsets of ``parity`` doubled."""
    terms = bytearray(digits)
    terms[parity::2] = digits[parity::2].translate(_DOUBLED)
    return [0, *accumulate(terms)]


def _redact_cards(text: str) -> str:
    return _replace_spans(text, _card_spans(text), CARD_TOKEN)


# --- SSN and ITIN -------------------------------------------------------------------------------

_SSN_DASHED = re.compile(r"(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])", re.ASCII)
_SSN_PLAIN = re.compile(r"(?<![0-9])[0-9]{3}( ?)[0-9]{2}\1[0-9]{4}(?![0-9])", re.ASCII)
_ITIN_GROUPS = frozenset([*range(50, 66), *range(70, 89), 90, 91, 92, *range(94, 100)])


def is_plausible_ssn(digits: str) -> bool:
    """Whether nine digits have the structure of an SSN (SSA rules) or of an ITIN."""
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    if area >= 900:
        return group in _ITIN_GROUPS
    return area not in (0, 666) and group != 0 and serial != 0


def _plain_ssn(match: re.Match[str]) -> str:
    chunk = match.group()
    return SSN_TOKEN if is_plausible_ssn(chunk.replace(" ", "")) else chunk


def _redact_ssns(text: str) -> str:
    return _SSN_PLAIN.sub(_plain_ssn, _SSN_DASHED.sub(SSN_TOKEN, text))


_PASSES: tuple[Callable[[str], str], ...] = (
    _redact_emails,
    _redact_ibans,
    _redact_ips,
    _redact_international_phones,
    _redact_cards,
    _redact_ssns,
    _redact_north_american_phones,
)
