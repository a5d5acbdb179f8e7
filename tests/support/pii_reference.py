"""The reference reading of ``strip_pii``: the stripper as it was before the combined scans
(``src/toolcall_spec/analytics/pii.py`` at commit 7ad5285), kept as a test oracle only. Every
family runs as its own pass, in order, each on the output of the one before: the semantics the
faster code in ``toolcall_spec.analytics.pii`` must keep, character for character.

One change since that commit, made in both: a ``00`` number that another digit group follows is
not a phone number (``_international_phone``), so a dotted card that starts with ``00`` is seen
whole by the card pass instead of leaking its last group.

Never imported by shipped code; ``tests/analytics/test_analytics_pii_reference.py`` compares the
two on generated text.
"""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate

EMAIL_TOKEN = "[EMAIL_REDACTED]"
CARD_TOKEN = "[CC_REDACTED]"
SSN_TOKEN = "[SSN_REDACTED]"
PHONE_TOKEN = "[PHONE_REDACTED]"
IBAN_TOKEN = "[IBAN_REDACTED]"
IP_TOKEN = "[IP_REDACTED]"
SECRET_TOKEN = "[SECRET_REDACTED]"
TOKENS = (EMAIL_TOKEN, CARD_TOKEN, SSN_TOKEN, PHONE_TOKEN, IBAN_TOKEN, IP_TOKEN, SECRET_TOKEN)

Span = tuple[int, int]


def strip_pii(text: str) -> str:
    """``text`` with every kind of PII replaced by its token, pass by pass."""
    for redact in _PASSES:
        text = redact(text)
    return text


_SHORTEST_NUMERIC_PII = 9  # an SSN; cards and phone numbers are longer


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
_GLUE = re.compile(r"[\w-]")
_URL_USERINFO = re.compile(r"(?<=://)[^\s/?#@\[\]]{1,256}@")


def _redact_secrets(text: str) -> str:
    for markers, pattern in _SECRETS:
        for marker in markers:
            if marker in text:
                text = pattern.sub(_secret, text)
                break
    return _URL_USERINFO.sub(SECRET_TOKEN + "@", text) if "://" in text else text


def _secret(match: re.Match[str]) -> str:
    """The token, unless the match is glued to the word before it (``task-...``, ``xAKIA...``):
    then it is the tail of another word."""
    start = match.start()
    glued = start > 0 and _GLUE.match(match.string, start - 1) is not None
    return match.group() if glued else SECRET_TOKEN


# --- e-mail -------------------------------------------------------------------------------------

# Runs of characters an address can hold ('@' included): one linear scan finds every candidate.
_DOMAIN = re.compile(r"[^\W_](?:[^\W_]|[.\-])*")
_LETTER_LABEL = re.compile(r"\.[^\W\d_]{2}")


def _email_spans(text: str) -> list[Span]:
    """Every address, found from its ``@`` (so text without one costs nothing more): the run of
    local-part characters before it, the domain after it."""
    spans: list[Span] = []
    at = text.find("@")
    while at >= 0:
        start = _local_start(text, at)
        local = text[start:at]
        quote = len(local) - len(local.lstrip("'"))  # a quote around the address stays
        if len(local) > quote:
            end = _domain_length(text, at + 1)
            if end:
                spans.append((start + quote, at + 1 + end))
        at = text.find("@", at + 1)
    return spans


_LOCAL_RUN = re.compile(r"[\w.%+\-']*")
_LOOK_BACK = 256


def _local_start(text: str, at: int) -> int:
    """Where the run of local-part characters that ends at ``at`` starts. Read backwards in
    chunks; a run stops at the ``@`` before it, so every character is read once overall."""
    start = at
    while start > 0:
        chunk_start = max(0, start - _LOOK_BACK)
        backwards = text[chunk_start:start][::-1]
        run = _LOCAL_RUN.match(backwards)
        length = run.end() if run is not None else 0
        start -= length
        if length < len(backwards):
            break
    return start


# "quoted local part"@domain and local@[IP literal]: the two forms the run scan cannot see.
_EMAIL_SPECIAL = re.compile(
    r'(?:"[^"\r\n]{1,64}"|[\w.%+\-\']{1,64})@'
    r"(?:\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\]|[^\W_](?:[\w\-]{0,62}\.)+[^\W\d_]{2,24}(?![\w-]))"
)


def _special_email_spans(text: str) -> list[Span]:
    if '"@' not in text and "@[" not in text:
        return []
    return [
        match.span()
        for match in _EMAIL_SPECIAL.finditer(text)
        if match.group().startswith('"') or match.group().endswith("]")
    ]


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
    return _replace_spans(text, spans, EMAIL_TOKEN)


# --- IBAN ---------------------------------------------------------------------------------------

# Country code and check digits, then 11 to 30 letters or digits, single spaces or dashes allowed
# between, in either case. Written in lower case, the country must be one that issues IBANs (a
# lower-case word with two digits passes mod-97 once in 97, so it needs a real country too).
# Found at its check digits (a digit first lets the engine skip every position without one); the
# lookbehind then reads the country code before them.
_IBAN = re.compile(
    r"[0-9][0-9](?<=(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2})((?:[ \-]?[A-Za-z0-9]){11,30})", re.ASCII
)
_IBAN_COUNTRIES = frozenset(
    (
        "AD",
        "AE",
        "AL",
        "AT",
        "AZ",
        "BA",
        "BE",
        "BG",
        "BH",
        "BI",
        "BR",
        "BY",
        "CH",
        "CR",
        "CY",
        "CZ",
        "DE",
        "DJ",
        "DK",
        "DO",
        "EE",
        "EG",
        "ES",
        "FI",
        "FK",
        "FO",
        "FR",
        "GB",
        "GE",
        "GI",
        "GL",
        "GR",
        "GT",
        "HN",
        "HR",
        "HU",
        "IE",
        "IL",
        "IQ",
        "IS",
        "IT",
        "JO",
        "KW",
        "KZ",
        "LB",
        "LC",
        "LI",
        "LT",
        "LU",
        "LV",
        "LY",
        "MC",
        "MD",
        "ME",
        "MK",
        "MN",
        "MR",
        "MT",
        "MU",
        "NI",
        "NL",
        "NO",
        "OM",
        "PK",
        "PL",
        "PS",
        "PT",
        "QA",
        "RO",
        "RS",
        "RU",
        "SA",
        "SC",
        "SD",
        "SE",
        "SI",
        "SK",
        "SM",
        "SO",
        "ST",
        "SV",
        "TL",
        "TN",
        "TR",
        "UA",
        "VA",
        "VG",
        "XK",
        "YE",
    )
)
_IBAN_DIGITS = str.maketrans({chr(c): str(c - 55) for c in range(ord("A"), ord("Z") + 1)})


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


def _iban_end(text: str, match: re.Match[str]) -> int | None:
    """The end of the longest IBAN with a valid mod-97 checksum in ``match``, or ``None``.

    It ends at the end of a space-separated group that is not glued to a following letter or
    digit."""
    prefix, body = text[match.start() - 2 : match.start() + 2], match.group(1).upper()
    if not prefix[:2].isupper():  # written in lower case: only a country that issues IBANs
        prefix = prefix.upper()
        if prefix[:2] not in _IBAN_COUNTRIES:
            return None
    after = text[match.end() : match.end() + 1]
    ends = [len(body)] if not after.isalnum() else []
    ends += list(_positions(body, " ")) + list(_positions(body, "-"))
    for end in sorted(ends, reverse=True):
        bban = body[:end].replace(" ", "").replace("-", "")
        if len(bban) >= 11 and int((bban + prefix).translate(_IBAN_DIGITS)) % 97 == 1:
            return match.start(1) + end
    return None


def _positions(chunk: str, char: str) -> Iterable[int]:
    at = chunk.find(char)
    while at >= 0:
        yield at
        at = chunk.find(char, at + 1)


def _redact_ibans(text: str) -> str:
    return _replace_spans(text, _iban_spans(text), IBAN_TOKEN)


# --- IP addresses -------------------------------------------------------------------------------

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01][0-9][0-9]|[1-9]?[0-9])"  # zero-padded too: 010, 001
_IPV4 = re.compile(rf"(?<![0-9])(?<![0-9]\.){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?[0-9])", re.ASCII)
_IPV6_COLONS = re.compile(r":[0-9A-Fa-f:.]*:", re.ASCII)
_HEX_RUN = re.compile(r"[0-9A-Fa-f.]*", re.ASCII)
_HEX_OR_DOT = frozenset("0123456789ABCDEFabcdef.")
_IPV6_MAX = 45
_WORD = re.compile(r"\w")


def _ipv6_spans(text: str) -> list[Span]:
    """Each run of hex digits, dots and colons with two colons or more, found from its colons
    (a colon first lets the engine skip the rest of the text), then widened to the whole run."""
    spans: list[Span] = []
    for colons in _IPV6_COLONS.finditer(text):
        inner = colons.group()
        if "::" not in inner and inner.count(":") < 6:  # 8 groups, or 7 with a dotted IPv4
            continue
        start = colons.start()
        limit = max(0, start - 2 * _IPV6_MAX - 1)  # a longer run is no address: stop looking
        while start > limit and text[start - 1] in _HEX_OR_DOT:
            start -= 1
        run_after = _HEX_RUN.match(text, colons.end())
        end = run_after.end() if run_after is not None else colons.end()
        span = _ipv6_in_run(text, start, end)
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


def _redact_ipv6(text: str) -> str:
    return (
        _replace_spans(text, _ipv6_spans(text), IP_TOKEN)
        if "::" in text or text.count(":") >= 6  # 8 groups, or 7 and a dotted IPv4
        else text
    )


def _redact_ipv4(text: str) -> str:
    return _IPV4.sub(IP_TOKEN, text) if "." in text else text


# --- phone numbers ------------------------------------------------------------------------------

# "+" or "00" and 8 to 15 digits (E.164), single separators and parentheses allowed between; not
# a later group of a longer grouped number (``DE00 3704 0044 ...``).
_INTL_PHONE = re.compile(
    r"(?<![0-9+])(?:\+|(?<![0-9][-. ])00)[1-9](?:[-. ]?\(?[0-9]\)?){7,14}(?![0-9])", re.ASCII
)
# A national number: trunk "0" (optionally in parentheses with its area code), then groups.
_NATIONAL_PHONE = re.compile(
    r"(?<![0-9])(?<![0-9][-. ])(?:\(0[0-9]{1,4}\)|0[0-9]{1,4})(?:[-. ]?[0-9]{2,4}){2,4}(?![0-9])",
    re.ASCII,
)
_NANP_PHONE = re.compile(
    r"(?<![0-9])(?:\+?1[-. ]?)?"
    r"(?P<local>(?:\([0-9]{3}\) ?|[0-9]{3})[-. ]?[0-9]{3}[-. ]?[0-9]{4})(?![0-9])",
    re.ASCII,
)


def _national_phone(match: re.Match[str]) -> str:
    digits = sum(c.isdigit() for c in match.group())
    return PHONE_TOKEN if 10 <= digits <= 11 else match.group()


def _international_phone(match: re.Match[str]) -> str:
    """The token, but for a ``00`` number that is a bare digit run (an id far more often than a
    dialled number: it needs a space) or that another digit group follows (as one may not come
    before it: a longer grouped number, a card, whose later passes see it whole)."""
    chunk = match.group()
    if chunk.startswith("00") and (
        chunk.isdigit() or _GROUP_AFTER.match(match.string, match.end()) is not None
    ):
        return chunk
    return PHONE_TOKEN


_GROUP_AFTER = re.compile(r"[-. ][0-9]")


def _redact_international_phones(text: str) -> str:
    return _INTL_PHONE.sub(_international_phone, text) if "+" in text or "00" in text else text


def _redact_north_american_phones(text: str) -> str:
    text = _NANP_PHONE.sub(PHONE_TOKEN, text)
    return _NATIONAL_PHONE.sub(_national_phone, text) if "0" in text else text


# --- card numbers -------------------------------------------------------------------------------

# Digits split by at most two separators: space, NBSP (U+00A0, U+202F), figure space, dash, dot.
_CARD_SEPARATORS = " \u00a0\u2007\u202f\\-."
_DIGIT_CHAIN = re.compile(rf"[0-9](?:[{_CARD_SEPARATORS}]{{0,2}}[0-9])*")
_NON_DIGITS = re.compile(r"[^0-9]+")
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
    digits = _NON_DIGITS.sub("", text).encode("ascii")
    if len(digits) < _CARD_MIN:
        return
    if len(digits) <= _CARD_MAX and _luhn_valid(digits):
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


def _luhn_valid(digits: bytes) -> bool:
    """The Luhn check over ASCII digits: every second digit from the right end doubled."""
    total = sum(digits[-1::-2]) + sum(digits[-2::-2].translate(_DOUBLED)) - 48 * len(digits)
    return total % 10 == 0


def _prefix_sums(digits: bytes, parity: int) -> list[int]:
    """Prefix sums of the digits' byte values, the digits at offsets of ``parity`` doubled."""
    terms = bytearray(digits)
    terms[parity::2] = digits[parity::2].translate(_DOUBLED)
    return [0, *accumulate(terms)]


def _redact_cards(text: str) -> str:
    return _replace_spans(text, _card_spans(text), CARD_TOKEN)


# --- SSN and ITIN -------------------------------------------------------------------------------

# A digit first (the lookbehind after it reads the character before the match), so the engine
# skips every position without a digit.
_SSN_DASHED = re.compile(
    r"[0-9](?<![0-9.][0-9])[0-9]{2}([-.])[0-9]{2}\1[0-9]{4}(?![0-9])", re.ASCII
)
_SSN_PLAIN = re.compile(r"[0-9](?<![0-9][0-9])[0-9]{2}( ?)[0-9]{2}\1[0-9]{4}(?![0-9])", re.ASCII)
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


# What both forms share (3, 2 and 4 digits, a separator or none between): one search that tells
# most windows (dates, times, versions) hold no SSN before the two passes run.
_SSN_SHAPE = re.compile(r"[0-9]{3}[-. ]?[0-9]{2}[-. ]?[0-9]{4}", re.ASCII)


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
        piece = text[start:end]
        for shortest, redact in _WINDOW_PASSES:
            if longest >= shortest:
                piece = redact(piece)
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
    (8, _redact_international_phones),  # 8 digits at least
    (4, _redact_ipv4),  # 1.1.1.1
    (_CARD_MIN, _redact_cards),
    (9, _redact_ssns),
    (10, _redact_north_american_phones),  # 10 digits; national numbers too
)
