"""PII stripping for analytics text, in linear time on any input.

Each kind of PII is replaced by a fixed token; the passes run in this order, each on the output of
the one before (a token holds no digit and no ``@``, so a later pass never matches inside one):

1. secrets: JWTs, cloud access key ids (``AKIA...``), ``sk-``/``ghp_``-style API keys, the
   credentials after ``Bearer``/``Basic`` -> ``[SECRET_REDACTED]``; ``user:pass@`` in a URL ->
   ``[SECRET_REDACTED]@``
2. e-mail addresses (every character RFC 5322 allows in a local part, quoted local parts with
   quoted pairs, IP-literal and ``xn--`` domains too) -> ``[EMAIL_REDACTED]``
3. IPv6 addresses -> ``[IP_REDACTED]``
4. IBANs (any case, spaces or dashes) whose mod-97 checksum holds -> ``[IBAN_REDACTED]``
5. international phone numbers (``+`` or ``00`` and 8 to 15 digits) -> ``[PHONE_REDACTED]``
6. IPv4 addresses (zero-padded octets too) -> ``[IP_REDACTED]``
7. Luhn-valid card numbers, 13 to 19 digits, split by spaces, NBSPs, dashes or dots, or by
   ``/``, `` - `` or `` / `` after groups of three digits or more -> ``[CC_REDACTED]``
8. US SSNs and ITINs (dashes, dots, slashes, spaces or none) -> ``[SSN_REDACTED]``
9. North American phone numbers, bare 10-digit runs included (as Yavio's ``stripPii``), and
   national-format numbers with a trunk ``0`` -> ``[PHONE_REDACTED]``

Text without PII costs a few scans: one search for every secret marker at once (it also names
the families to run), a search for ``@``, a count of colons, and one scan for runs of digits and
separators long enough to hold a number (7 characters or more) and for IBAN check digits. The
number passes run only on short windows around those runs, each only when the run has enough
digits for its form, and every pattern starts with a character class, so the engine skips the
positions that cannot start a match. ``tests/support/pii_reference.py`` keeps the plain reading
(every pass over the whole text) that ``tests/analytics/test_analytics_pii_reference.py``
compares this code with.

Rules that decide what is *not* PII (so ids, years and counters stay readable):

- A card is 13 to 19 digits, optionally split by single spaces or dashes, that passes the Luhn
  check. It must start and end at a digit-group boundary: a card glued to more digits
  (``41111111111111112``) is a different number and stays. Split by ``/``, `` - `` or `` / ``,
  every group but its last has three digits or more (``4111 / 1111 / 1111 / 1111``): a date's
  groups are shorter, so a range of dates (``2026-11-30 - 2026-12-01``) is no card.
- An SSN is ``AAA-GG-SSSS`` (always redacted, as upstream does), or ``AAA GG SSSS`` or nine bare
  digits bounded by non-digits that also form a plausible SSN (area not 000, 666 or 900-999,
  group not 00, serial not 0000) or ITIN (area 9xx, group 50-65, 70-88, 90-92 or 94-99). So a
  bare 9-digit order id with a valid-looking structure is redacted: privacy wins over fidelity
  for the one length that SSNs have.
- A phone number is a ``+``/``00`` international number (a ``00`` one not followed by another
  digit group: that is a longer grouped number), a North American 3-3-4 number (a bare
  10-digit run too: Yavio redacts it, and privacy wins over keeping a timestamp readable), or a
  national number: a trunk ``0`` and a non-zero digit, 10 to 12 digits in groups or 9 with a
  separator (``07096 311647``, ``020 7946 0958``, ``06 12 34 56 78``, ``030/260500``,
  ``(030) 260500``, ``0151 12345678``) that does not start with a date (``05/12/2026 18:30``).
  The groups of every phone number are split by a space, dash, dot or slash, or by `` - `` or
  `` / ``. A number may follow a port or the number just read; where a match runs into the next
  number, card or SSN it ends before the group that starts it (``_phone_end``). National
  numbers are read before North American ones (``:133 / 053 3574 9698`` is no 3-3-4 number).
  A window whose first reading leaves digits is read again with the phones first; the reading
  leaving fewer digits wins.
- An e-mail local part holds letters, digits and RFC 5322's other characters (``&``, ``{``,
  ``'``, ``+``, ``=``, ``/``, ...); after ``://`` the host stays; an apostrophe after anything
  but a letter or digit quotes the address and stays (``value='max@...'``). So a key written
  right before an address (``to=bob@example.com``) goes with it.
- An IPv4 address is four dotted octets 0-255 not glued to more dotted digits (``1.2.3.4.5`` is a
  version string), nor after a dotted number whose last group is in parentheses
  (``0033.(1).11.17.10.18``). An IPv6 address is a token (not glued to a word) the standard
  library parses as one and that has a decimal digit, a group of four hex digits or all eight
  groups (so ``Foo::bar``, ``std::fmt``, ``a::b`` and ``::`` stay).

Linear time: every regular expression here is either a single character class run, a run whose
only repetition cannot fail after it matched (so the engine never backtracks into it), or a
pattern of bounded length; all further work (Luhn, mod-97, IPv6 parsing) is bounded per start
position, and a local part's apostrophes are read within its run. benchmarks/bench_pii.py
measures 128, 256 and 512 KB adversarial inputs; tests/analytics/test_analytics_pii.py checks
the growth from 100 to 300 KB on inputs made of the looser forms.
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
SECRET_TOKEN = "[SECRET_REDACTED]"
TOKENS = (EMAIL_TOKEN, CARD_TOKEN, SSN_TOKEN, PHONE_TOKEN, IBAN_TOKEN, IP_TOKEN, SECRET_TOKEN)

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
    """A copy of a JSON value with ``strip_pii`` applied to every string, keys included, and
    to every integer written out: one that is a card, phone number or SSN becomes its token
    (``{"card_number": 4111111111111111}`` -> ``{"card_number": "[CC_REDACTED]"}``)."""
    if isinstance(value, str):
        return strip_pii(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _strip_integer(value)
    if _depth >= MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        return DEPTH_TOKEN
    if isinstance(value, Mapping):
        return {
            strip_pii(str(key)): strip_pii_deep(item, _depth + 1) for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [strip_pii_deep(item, _depth + 1) for item in value]
    return value


def strip_secrets(text: str) -> str:
    """``text`` with the secrets alone replaced by ``SECRET_TOKEN`` (API keys, JWTs, cloud key
    ids, ``Bearer``/``Basic`` credentials, ``user:pass@`` in a URL): the first pass of
    ``strip_pii``, for a recording that keeps other PII unless asked (``record --redact``)."""
    return _redact_secrets(text)


def _strip_integer(value: int) -> int | str:
    digits = str(value)
    if len(digits.lstrip("-")) < _SHORTEST_NUMERIC_PII:
        return value
    stripped = strip_pii(digits)
    return value if stripped == digits else stripped


_SHORTEST_NUMERIC_PII = 9  # an SSN; cards and phone numbers are longer


def safe_cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters without leaving part of an address, number
    or secret behind. The word the cut falls in is dropped when it, read whole, could be PII (it
    has a digit, ``@``, ``:``, a quote, or starts like a key); then every word before the cut
    that could continue PII across a space (a digit group, a quoted local part, ``Bearer``) is
    dropped too, so no later pass meets a fragment it no longer recognises."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    if not text[limit].isspace():
        fragment = _TRAILING_WORD.search(head)
        rest = _LEADING_WORD.match(text, limit, limit + _WORD_LOOKAHEAD)
        word = (fragment.group()[-_WORD_LOOKAHEAD:] if fragment else "") + (
            rest.group() if rest else ""
        )
        if fragment is not None and _MAY_BE_PII.search(word):
            head = head[: fragment.start()]
    while True:
        trimmed = head.rstrip()
        word_before = _TRAILING_WORD.search(trimmed)
        if word_before is None or not _MAY_SPAN_A_SPACE.search(word_before.group()):
            return trimmed
        head = trimmed[: word_before.start()]


_WORD_LOOKAHEAD = 512  # longer than any address or number a pass recognises
_TRAILING_WORD = re.compile(r"\S+\Z")
_LEADING_WORD = re.compile(r"\S+")
_MAY_BE_PII = re.compile(r"[0-9\"'@:]|eyJ|[spr]k[-_]|gh[pousr]_|AKIA|ASIA")
_MAY_SPAN_A_SPACE = re.compile(r"[0-9\"]|^(?:[Bb]earer|[Bb]asic|BEARER|BASIC|[-/])$")


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

# One pattern per family, each run only when the text holds its marker (see _SECRET_MARKERS).
# Every pattern starts with a literal, so the engine skips positions that cannot start one;
# lengths are bounded below so ordinary words stay.
_SECRETS: tuple[re.Pattern[str], ...] = (
    # JWT: a base64url JSON header ({"...), then payload and signature
    re.compile(r"eyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*"),
    # cloud access key ids (AWS): a four-letter kind, then 16 capitals or digits
    re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    # API keys: sk-..., sk-proj-..., pk_live_...; ghp_..., github_pat_...; glpat-...; xoxb-...
    re.compile(r"[spr]k(?:-(?:[a-z]+-)?[A-Za-z0-9_\-]{16,}|_(?:live|test)_[A-Za-z0-9]{10,})"),
    re.compile(r"gh(?:[pousr]_[A-Za-z0-9]{20,}|ithub_pat_[A-Za-z0-9_]{20,})"),
    re.compile(r"glpat-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"AIza[A-Za-z0-9_\-]{35}"),
    # the credentials of an HTTP Authorization header written out
    re.compile(r"(?<=[Bb]earer )[\w\-.~+/]+=*|(?<=BEARER )[\w\-.~+/]+=*"),
    re.compile(r"(?<=[Bb]asic )[A-Za-z0-9+/]{8,}=*|(?<=BASIC )[A-Za-z0-9+/]{8,}=*"),
)
# ``user:password@`` after ``://``: credentials. Without a colon, ``name@host`` cannot be told
# from an e-mail address glued to a scheme, so it is left to the e-mail pass, which takes both
# parts (a planted ``0@0.aa`` after ``://,`` left its domain readable when this pass took the
# name alone).
_URL_USERINFO = re.compile(r"(?<=://)(?=[^\s/?#@\[\]]{1,256}@)[^\s/?#@\[\]:]*:[^\s/?#@\[\]]*@")
# A host with a dot and its port, then no letter or digit (``example.com:8080!``): an address
# written after a URL's port (``https://example.com:8080)"x1"@example.org``), no user:password.
_HOST_AND_PORT = re.compile(r"[^:.]*\.[^:]*:[0-9]{1,5}(?![0-9A-Za-z])")
_URL_FAMILY = len(_SECRETS)

# Every family's marker, in one scan: what each match cannot do without (its first characters,
# or the word before a credential), found from one character of it (a rare one where there is
# a choice) with the rest read around it, so a match consumes one character and no marker hides
# another. Text without any, which is most text, costs this one call. A token holds no marker,
# so the families that run on the output of earlier ones are exactly those the input marks.
_SECRET_MARKERS = re.compile(
    r"J(?<=eyJ)()|A(?:(?=KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)()|(?=Iza)())|k(?<=[spr]k)(?=[-_])()"
    r"|g(?:(?=h[pousr]_|ithub_pat_)()|(?=lpat-)())|x(?=ox[abprs]-)()"
    r"|B(?:(?=earer )()|(?=EARER )()|(?=asic )()|(?=ASIC )())|b(?:(?=earer )()|(?=asic )())"
    r"|:(?=//)()"
)
_MARKED_FAMILY = (-1, 0, 1, 6, 2, 3, 4, 5, 7, 7, 8, 8, 7, 8, _URL_FAMILY)
"""The family each group of ``_SECRET_MARKERS`` marks, by group number (every alternative
starts with a literal, so the engine skips to the characters that can start one)."""
_GLUE = re.compile(r"[\w-]")


def _redact_secrets(text: str) -> str:
    first = _SECRET_MARKERS.search(text)
    if first is None:
        return text
    marked = _SECRET_MARKERS.finditer(text, first.start())
    for family in sorted({_MARKED_FAMILY[marker.lastindex or 0] for marker in marked}):
        if family == _URL_FAMILY:
            text = _URL_USERINFO.sub(_userinfo, text)
        else:
            text = _SECRETS[family].sub(_secret, text)
    return text


def _userinfo(match: re.Match[str]) -> str:
    """The token for a URL's ``user:password@``; but a host and port that an address follows
    (one the e-mail pass reads: a domain or an IP literal after the ``@``) stay, for that pass
    to take the address (this pass took the part before the ``@`` and left the domain)."""
    text, end = match.string, match.end()
    if _HOST_AND_PORT.match(match.group()) and (
        _domain_length(text, end) or text.startswith("[", end)  # an IP literal
    ):
        return match.group()
    return SECRET_TOKEN + "@"


def _secret(match: re.Match[str]) -> str:
    """The token, unless the match is glued to the word before it (``task-...``, ``xAKIA...``):
    then it is the tail of another word. A JWT is one whatever precedes it (``error-eyJ...``
    was kept): no word ends in a base64url JSON header and two more dotted parts."""
    start, text = match.start(), match.string
    before = text[max(0, start - 2) : start]
    # Glued: a letter, digit or underscore before it, or a dash after a letter (a word's dash,
    # not a number's: ``0000-sk-...`` kept the key).
    glued = _GLUE.match(before[-1:]) is not None and (before[-1:] != "-" or before[:1].isalpha())
    glued = glued and not text.startswith("eyJ", start)
    return match.group() if glued else SECRET_TOKEN


# --- e-mail -------------------------------------------------------------------------------------

# Runs of characters an address can hold ('@' included): one linear scan finds every candidate.
_DOMAIN_RUN = re.compile(r"[\w.\-]*")  # a domain is the part of it before any "_"
_LETTER_LABEL = re.compile(r"\.[^\W\d_]{2}")


def _email_spans(text: str) -> list[Span]:
    """Every address, found from its ``@`` (so text without one costs nothing more): the run of
    local-part characters before it, the domain after it."""
    spans: list[Span] = []
    quoted = "'" in text  # most text has no apostrophe: its local parts need no second look
    at = text.find("@")
    while at >= 0:
        start = _after_scheme(text, _local_start(text, at), at)
        if quoted:
            start = _after_opening_quote(text, start, at)
        local = text[start:at]
        quote = len(local) - len(local.lstrip("'"))  # a quote around the address stays
        if len(local) > quote:
            end = _domain_length(text, at + 1)
            if end:
                spans.append((start + quote, at + 1 + end))
        at = text.find("@", at + 1)
    return spans


# What a local part is made of: letters, digits and every other character RFC 5322 allows
# unquoted (``&``, ``{``, ``}``, ``'``, ``+``, ``=``, ``/``, ...). A ``/`` once ended it, as a
# path or URL before an address reads, and kept what came before it (``a/b@...`` left ``a/``):
# now a URL's scheme and host are set apart by ``_after_scheme`` instead.
_LOCAL_CHARACTERS = r"\w.!#$%&'*+\-/=?^`{|}~"
_LOCAL_RUN = re.compile(rf"[{_LOCAL_CHARACTERS}]*")
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


def _after_scheme(text: str, start: int, at: int) -> int:
    """Where the local part from ``start`` to ``at`` starts when the run begins with a URL's
    ``//``: after it, and after the host when a path follows (``https://bob@...``,
    ``https://example.com/bob@...`` keep ``https://`` and ``https://example.com/``)."""
    if start == 0 or text[start - 1] != ":" or not text.startswith("//", start):
        return start
    slash = text.find("/", start + 2, at)
    return start + 2 if slash < 0 else slash + 1


def _after_opening_quote(text: str, start: int, at: int) -> int:
    """Where the local part from ``start`` to ``at`` starts: after its last apostrophe that no
    letter or digit precedes (it quotes the address: ``value='max@...'``), else at ``start``
    (``o'brien``). Read within the run only, so every character is read once overall."""
    quote = text.rfind("'", start, at)
    while quote >= 0:
        if quote == start or _WORD.match(text, quote - 1) is None:
            return quote + 1
        quote = text.rfind("'", start, quote)
    return start


# "quoted local part"@domain and local@[IP literal]: the two forms the run scan cannot see. A
# quoted string holds any character but a bare quote or backslash, and quoted pairs (``\"``,
# ``\\``): an escaped quote once ended it, and the part before stayed. Each repetition reads a
# fixed character or pair, so the pattern cannot backtrack; it is bounded in length.
_EMAIL_SPECIAL = re.compile(
    rf'(?:"(?:[^"\\\r\n]|\\[^\r\n]){{1,64}}"|[{_LOCAL_CHARACTERS}]{{1,64}})@'
    r"(\[(?:IPv6:)?[0-9A-Fa-f:.]{2,45}\])?"
)


def _special_email_spans(text: str) -> list[Span]:
    """Quoted local parts, with the domain an unquoted one may have (``_domain_length``), and
    IP-literal domains."""
    if '"@' not in text and "@[" not in text:
        return []
    spans: list[Span] = []
    for match in _EMAIL_SPECIAL.finditer(text):
        start, end = match.span()
        if match.group(1):
            spans.append((_after_scheme(text, start, end), end))
        elif match.group().startswith('"'):
            length = _domain_length(text, end)
            if length:
                spans.append((start, end + length))
    return spans


def _domain_length(text: str, at: int) -> int:
    """How much of ``text`` from ``at`` is a domain with a label of two letters or more after a
    dot (``example.com``); 0 when it holds none."""
    run = _DOMAIN_RUN.match(text, at)
    domain = run.group().partition("_")[0] if run is not None else ""
    if domain[:1] in ("", ".", "-"):  # it starts with a letter or digit
        return 0
    domain = domain.rstrip(".-")
    return len(domain) if _LETTER_LABEL.search(domain, 1) else 0


def _redact_emails(text: str) -> str:
    if "@" not in text:
        return text
    spans = sorted(_email_spans(text) + _special_email_spans(text))
    return _replace_spans(text, widen_into_numbers(text, spans, _digit_passes), EMAIL_TOKEN)


# The digit groups and separators right before a local part (an IBAN's groups hold letters too),
# and the digit groups and separators right after a domain: a number an address was read into.
_CHAIN_BEFORE = re.compile(r"[0-9A-Za-z \-./()+\u00a0\u2007\u202f]*")
_CHAIN_AFTER = re.compile(r"[0-9 \-./()\u00a0\u2007\u202f]*")
_GROUP = re.compile(r"[0-9A-Za-z]*")
# A local part's first groups, split as a number's are (``7700-440447'x@``, ``12-04-83-32*x@``).
_GROUPS = re.compile(r"[0-9A-Za-z]+(?:[-./][0-9A-Za-z]+)*")
_NUMBER_REACH = 64  # longer than any number a pass reads with its separators


def widen_into_numbers(text: str, spans: Iterable[Span], read: Callable[[str], str]) -> list[Span]:
    """Each address span widened over a number it starts (ends) inside: a local part that starts
    with the last groups of a number (``07000 000000!0@...``, ``... 92UL A5'x@...``,
    ``+44-(0) 7700-440447'x@...``) or a domain
    that ends with the first group of one (``...lq-900 72 1609``) left the rest of the number
    readable. A group is taken when ``read`` (the digit passes) reads the chain with it into a
    token; the span then reaches the start (end) of that token. Bounded per address: linear."""
    widened: list[Span] = []
    for start, end in spans:
        widened.append((_number_before(text, start, read), _number_after(text, end, read)))
    return widened


def _number_before(text: str, start: int, read: Callable[[str], str]) -> int:
    group = _GROUPS.match(text, start, start + _NUMBER_REACH)
    back = text[max(0, start - _NUMBER_REACH) : start][::-1]
    chain = _CHAIN_BEFORE.match(back)
    if not group or not group.group() or not chain or _DIGIT.search(chain.group()) is None:
        return start
    candidate = chain.group()[::-1] + group.group()
    stripped = read(candidate)
    first, tail = stripped.find("["), stripped[stripped.rfind("]") + 1 :]
    if first < 0 or len(tail) >= len(group.group()):  # the local part's group was not read
        return start
    return start - chain.end() + first


def _number_after(text: str, end: int, read: Callable[[str], str]) -> int:
    back = text[max(0, end - _NUMBER_REACH) : end][::-1]
    group = _GROUP.match(back)
    chain = _CHAIN_AFTER.match(text, end, end + _NUMBER_REACH)
    if not group or not group.group() or not chain or _DIGIT.search(chain.group()) is None:
        return end
    candidate = group.group()[::-1] + chain.group()
    stripped = read(candidate)
    first, tail = stripped.find("["), stripped[stripped.rfind("]") + 1 :]
    if first < 0 or first >= group.end():  # the domain's group was not read
        return end
    return end + len(candidate) - group.end() - len(tail)


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


def _iban_spans(text: str, starts: Iterable[int]) -> list[Span]:
    """The IBANs that start (at their check digits) at one of ``starts``: every place the
    pattern can start, in order (overlapping spans merge)."""
    spans: list[Span] = []
    for start in starts:
        match = _IBAN.match(text, start)
        end = _iban_end(text, match) if match is not None else None
        if end is not None:
            spans.append((start - 2, end))
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


# --- IP addresses -------------------------------------------------------------------------------

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|[01][0-9][0-9]|[1-9]?[0-9])"  # zero-padded too: 010, 001
# Not glued to more dotted digits, nor to a dotted number whose last group is in parentheses
# (``0033.(1).11.17.10.18``: a French number, its area code set off).
_AFTER_DOTTED_PARENTHESES = "".join(rf"(?<![0-9]\.\([0-9]{{{width}}}\)\.)" for width in range(1, 5))
_IPV4 = re.compile(
    rf"(?<![0-9])(?<![0-9]\.){_AFTER_DOTTED_PARENTHESES}{_OCTET}(?:\.{_OCTET}){{3}}(?!\.?[0-9])",
    re.ASCII,
)
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
    return _IPV4.sub(IP_TOKEN, text) if text.count(".") >= 3 else text


# --- phone numbers ------------------------------------------------------------------------------

# How people split the groups of a number: one space, dash, dot or slash, or a dash or slash
# with a space on each side (``020 - 7946 - 0958``, ``030 / 1234567``). Every form has a fixed
# length, so the patterns built with it keep a bounded length.
_GROUPING = r"(?:[-./ ]| [-/] )"


def _not_a_later_group(first: str) -> str:
    """Lookbehinds, read at the character after ``first`` (a pattern's first character): the
    match does not continue a digit group before it."""
    return rf"(?<![0-9][-./ ]{first})(?<![0-9] [-/] {first})"


# "+" or "00" and 8 to 15 digits (E.164), single separators and parentheses allowed between; not
# a later group of a longer grouped number (``DE00 3704 0044 ...``). Its first character comes
# first (the lookbehinds after it read what precedes), so the engine skips to a "+" or "0".
_INTL_PHONE = re.compile(
    rf"[+0](?<![0-9][+0])(?:(?<=\+)|(?<=0){_not_a_later_group('0')}0)"
    rf"[1-9](?:{_GROUPING}?\(?[0-9]\)?){{7,14}}(?![0-9])",
    re.ASCII,
)
# Each pattern below starts with a character class (the lookbehinds after it read what precedes
# the match), so the engine skips to the characters a number can start with.
# A national number: trunk "0" and an area code that does not start with 0 (``00`` dials abroad),
# in parentheses or not, then groups. It may follow another digit group: this pass runs after the
# card and SSN passes, so what is left of a longer chain is no card, and a number after a port or
# another number (``:8080 020 7946 0958``, ``030 260500 030 260500``) is read all the same. An
# area code in parentheses has up to five digits after the trunk 0 and one group or more after it
# (``(033203) 123``, a small German town's: four digits and two groups left it readable).
_NATIONAL_PHONE = re.compile(
    rf"[(0](?<![0-9][(0])(?:(?<=\()0[1-9][0-9]{{0,4}}\)(?:{_GROUPING}?[0-9]{{2,4}}){{1,4}}"
    rf"|(?<=0)[1-9][0-9]{{0,3}}(?:{_GROUPING}?[0-9]{{2,4}}){{2,4}})(?![0-9])",
    re.ASCII,
)
# A "00" number after another digit group, which the first pass left to the card pass: what that
# pass left is read again here.
_LATER_00_PHONE = re.compile(
    rf"0(?<![0-9+]0)0[1-9](?:{_GROUPING}?\(?[0-9]\)?){{7,14}}(?![0-9])", re.ASCII
)
# North American: "+1" or "1" first or not, then 3-3-4 digits (the area code in parentheses or
# not). The branches are the ways its first character can be read, in the order a pattern with
# an optional "+?1" prefix tries them (so each finds the match that pattern would).
_NANP_AREA = r"(?:\([0-9]{3}\) ?|[0-9]{3})"
_NANP_PHONE = re.compile(
    rf"[+(0-9](?<![0-9][+(0-9])"
    rf"(?:(?<=\+)1{_GROUPING}?{_NANP_AREA}|(?<=1){_GROUPING}?{_NANP_AREA}"  # "+1", "1", area
    r"|(?<=\()[0-9]{3}\) ?|(?<=[0-9])[0-9]{2})"  # or the area code from its "(" or first digit
    rf"{_GROUPING}?[0-9]{{3}}{_GROUPING}?[0-9]{{4}}(?![0-9])",
    re.ASCII,
)


def _national_length(chunk: str, digits: int) -> bool:
    """Whether the start of a national match with ``digits`` digits is a number: 10 to 12 digits
    (``0151 12345678``), or 9 set off by a separator (``030/260500``, ``(030) 260500``; a bare 9
    digits is an SSN or an id); never a date and what follows it (``05/12/2026 18:30``)."""
    return (10 <= digits <= 12 or (digits == 9 and not chunk.isdigit())) and (
        _DATE_FIRST.match(chunk) is None
    )


def _later_00_length(chunk: str, digits: int) -> bool:
    """Whether the start of a ``00`` match is a number: 8 to 15 digits after the ``00``, not a
    bare digit run."""
    return 10 <= digits <= 17 and not chunk.isdigit()


def _phone_end(
    text: str, match: re.Match[str], valid: Callable[[str, int], bool], split: bool = True
) -> int | None:
    """Where the number a match starts ends: at the end of one of its digit groups, as many
    digits as its form allows (``valid``). A match may run on into a next number (the pattern
    reads up to its longest form): the whole match when the chain ends with it, else (with
    ``split``) the longest start followed by a group that opens a number (``0[1-9]``, ``00``,
    ``(``, ``+``), else the longest start; ``None`` when no start is a number."""
    start = match.start()
    chunk = match.group()
    best = opening = None
    digits = end = 0
    goes_on = _CHAIN_GOES_ON.match(text, match.end()) is not None
    for group in _DIGITS.finditer(chunk):
        digits += group.end() - group.start()
        end = group.end()
        if not valid(chunk[:end], digits):
            continue
        best = end
        if goes_on and split and _opens_a_number(text, start + end):  # only a split needs one
            opening = end
    if not goes_on:
        if best != end:
            return None
        # A closing parenthesis the number opened goes with it; one it did not open stays
        # (``(+44 20 7946 0958)``).
        closes = chunk.endswith(")") and chunk.count(")") <= chunk.count("(")
        return match.end() if closes else start + end
    if not split:
        return None
    chosen = opening if opening is not None else best
    return None if chosen is None else start + chosen


# After a match: more of its chain (a closing parenthesis or a separator, then a digit). A card's
# separators count, up to two (``+1 000 000 0000 0000\u00a00000...``, ``... 0000  0000``: the
# phone number read the card's first group, and its rest stayed).
_CHAIN_GOES_ON = re.compile(
    rf"\)?(?:{_GROUPING}|[ \u00a0\u2007\u202f\-.]{{1,2}})?\(?[0-9]", re.ASCII
)


def _opens_a_number(text: str, position: int) -> bool:
    """Whether, after a separator, a whole number starts at ``position``: a ``+``, or one a
    phone pattern reads there with as many digits as its form allows."""
    separator = _SEPARATOR_AFTER.match(text, position)
    at = separator.end() if separator is not None else position
    if text.startswith("+", at) or _opens_a_card_or_ssn(text, at):
        return True
    # "(0044 ...", "(555-123-4567": past the parenthesis too (a North American number's pattern
    # starts no "(" that a digit precedes, so it is read from the digit after it)
    starts = (at, at + 1) if text.startswith("(", at) else (at,)
    for start in starts:
        if _NANP_PHONE.match(text, start) is not None:
            return True
        for pattern, valid in _NUMBER_FORMS:
            match = pattern.match(text, start)
            if match is not None and _has_a_number(match.group(), valid):
                return True
    return False


def _opens_a_card_or_ssn(text: str, at: int) -> bool:
    """Whether a card or an SSN starts at ``at``: a phone number of up to 15 digits can run on
    into the groups of one (``+1 000 000 0000 0000.0000.0000.0``, ``+33 6 12 34 56 78) 900-58-
    0001``), and their rest stayed. Read within the longest a card can be written, so each call
    costs a bounded time."""
    ssn = _SSN.match(text, at)
    if ssn is not None and _ssn(ssn) != ssn.group():
        return True
    limit = at + _CARD_REACH
    chain = _DIGIT_CHAIN.match(text, at, limit)
    if chain is None:
        return False
    piece = chain.group()
    if chain.end() == limit:  # the chain may go on: its last group may be cut, leave it out
        piece = piece[: len(piece.rstrip("0123456789"))]
    digits = piece.encode().translate(None, _SEPARATOR_BYTES)
    if len(digits) < _CARD_MIN:
        return False
    loose = "/" in piece or " - " in piece
    window = next(iter(_card_windows(piece, digits, loose)), None)
    return window is not None and window[0] == 0


def _has_a_number(chunk: str, valid: Callable[[str, int], bool]) -> bool:
    digits = 0
    for group in _DIGITS.finditer(chunk):
        digits += group.end() - group.start()
        if valid(chunk[: group.end()], digits):
            return True
    return False


_SEPARATOR_AFTER = re.compile(r"\)?(?: [-/] |[-./ ])?", re.ASCII)  # the longer grouping first


def _redact_phones(
    text: str,
    pattern: re.Pattern[str],
    valid: Callable[[str, int], bool],
    split_00: bool = True,
    anywhere: bool = False,
) -> str:
    """Every number ``pattern`` finds, each read to its end by ``_phone_end`` (a ``00`` number
    only whole, unless ``split_00``), and not in the middle of a longer grouped number unless
    ``anywhere``; the search goes on after it (a number that follows is found from its first
    digit) or, where none ends, from the next character (each start is tried once: linear)."""
    out: list[str] = []
    cursor = position = 0
    while (match := pattern.search(text, position)) is not None:
        split = split_00 or not match.group().startswith("00")
        end = None
        start = match.start()
        if anywhere or text[start] == "+" or not _continues_a_number(text, start, cursor):
            end = _phone_end(text, match, valid, split)
        if end is None:
            position = match.start() + 1
            continue
        out += (text[cursor : match.start()], PHONE_TOKEN)
        cursor = position = end
    if not out:
        return text
    out.append(text[cursor:])
    return "".join(out)


def _continues_a_number(text: str, start: int, last_end: int) -> bool:
    """Whether a match at ``start`` is a later group of a longer grouped number
    (``DE00 3704 0044 ...``): a digit group and a grouping precede it, and that group is neither
    the end of the number just read (``last_end``) nor a port (``:8080 020 7946 0958``)."""
    before = _GROUP_BEFORE.search(text, max(0, start - 9), start)
    if before is None:
        return False
    return before.end("group") != last_end and not before.group("port")


# A digit group and a grouping right before a position, and the colon of a port before it.
_GROUP_BEFORE = re.compile(
    r"(?P<port>(?<![0-9]):)?(?P<group>[0-9]+)(?:[-./ ]| [-/] )\Z",
    re.ASCII,
)


_NUMBER_FORMS: tuple[tuple[re.Pattern[str], Callable[[str, int], bool]], ...] = (
    (_LATER_00_PHONE, _later_00_length),
    (_NATIONAL_PHONE, _national_length),
)


def redact_later_phones(text: str, anywhere: bool = False) -> str:
    """The phone numbers read after the card and SSN passes: ``00`` numbers after another digit
    group, North American and national numbers; ``anywhere``, also in the middle of a longer
    grouped number (the second reading of ``read_window``, before the cards). Shared with the
    reference reading."""
    if "00" in text:
        text = _redact_phones(text, _LATER_00_PHONE, _later_00_length, anywhere=anywhere)
    if "0" in text:
        # National numbers before North American ones: a national number's first groups read as
        # one with the digits before them (a port: ``:133 / 053 3574 9698`` read ``133 / 053
        # 3574``), and its last group stayed; a national match that runs on into a North
        # American number ends before it (``_phone_end``).
        text = _redact_phones(text, _NATIONAL_PHONE, _national_length, anywhere=anywhere)
    return _NANP_PHONE.sub(PHONE_TOKEN, text)


def _redact_phones_anywhere(text: str) -> str:
    return redact_later_phones(text, anywhere=True)


# A day, a month and a year of four digits, split alike by a dash, dot or slash.
_DATE_FIRST = re.compile(r"[0-3]?[0-9]([-./])[0-3]?[0-9]\1(?:1[89]|20)[0-9]{2}(?![0-9])")


def _international_length(chunk: str, digits: int) -> bool:
    """Whether the start of an international match is a number: ``+`` and 8 to 15 digits, or
    ``00`` and as many, not a bare digit run (an id far more often than a dialled number)."""
    if chunk.startswith("+"):
        return 8 <= digits <= 15
    return _later_00_length(chunk, digits)


def _redact_international_phones(text: str) -> str:
    """``+`` and ``00`` numbers, each to its end (``_phone_end``: ``+49-(30)-260500 (0176)...``
    is two numbers); a ``00`` number that another digit group follows is left whole to the card
    pass (as one may not come before it: a longer grouped number, a card), and read again by the
    later phone pass."""
    if "+" not in text and "00" not in text:
        return text
    return _redact_phones(text, _INTL_PHONE, _international_length, split_00=False)


# What any of the later forms holds (its local number, its trunk 0 and groups), from a digit:
# one search that tells a window without one (a date, a time) before the passes run.
_NANP_OR_NATIONAL = re.compile(
    rf"[0-9](?:[0-9]{{2}}\)? ?{_GROUPING}?[0-9]{{3}}{_GROUPING}?[0-9]{{4}}(?![0-9])"
    rf"|(?<=(?<![0-9])0)(?:0[1-9]|[0-9]{{1,4}}\)?(?:{_GROUPING}?[0-9]{{2,4}}){{2}}))",
    re.ASCII,
)


def _redact_north_american_phones(text: str) -> str:
    if _NANP_OR_NATIONAL.search(text) is None:
        return text
    return redact_later_phones(text)


# --- card numbers -------------------------------------------------------------------------------

# Digits split by at most two separators: space, NBSP (U+00A0, U+202F), figure space, dash, dot.
_CARD_SEPARATORS = " \u00a0\u2007\u202f\\-."
_CARD_MIN, _CARD_MAX = 13, 19
# After a group of three digits or more, also a slash, or a dash or slash with a space on each
# side (``4111 / 1111 / 1111 / 1111``); a date's groups are shorter, so ``2026-11-30 - 2026-12-01``
# stays two numbers.
_LOOSE_CARD_SEPARATOR = r"(?<=[0-9]{3})(?: [-/] |/)"
# A chain of 13 characters or more: one with fewer cannot hold 13 digits. (Where the look ahead
# fails at a chain's first digit, the match may start at a later one: a shorter tail of a chain
# too short for a card, which the check below leaves as it is.)
_DIGIT_CHAIN = re.compile(
    rf"[0-9](?=[0-9/{_CARD_SEPARATORS}]{{{_CARD_MIN - 1}}})"
    rf"(?:[{_CARD_SEPARATORS}]{{0,2}}[0-9]|{_LOOSE_CARD_SEPARATOR}[0-9])*"
)
# A chain holds only digits and separators: dropping every byte of the separators' UTF-8 forms
# leaves its digits.
_SEPARATOR_BYTES = bytes(sorted(set((_CARD_SEPARATORS.replace("\\", "") + "/").encode())))
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_CARD_REACH = _CARD_MAX * 4  # 19 digits, at most three separator characters after each
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")  # a digit doubled, its digits summed


def _redact_cards(text: str) -> str:
    return _DIGIT_CHAIN.sub(_cards_in_chain, text)


def _cards_in_chain(chain: re.Match[str]) -> str:
    """The chain with every window of whole digit groups that holds 13 to 19 digits and passes
    the Luhn check replaced (windows that overlap or touch by one token)."""
    text = chain.group()
    digits = text.encode().translate(None, _SEPARATOR_BYTES)
    if len(digits) < _CARD_MIN:
        return text
    loose = "/" in text or " - " in text
    if len(digits) <= _CARD_MAX and _luhn_valid(digits) and not loose:
        # The whole chain is one card: every other window lies inside it and would merge into it.
        return CARD_TOKEN
    return _replace_spans(text, _card_windows(text, digits, loose), CARD_TOKEN)


def _card_windows(text: str, digits: bytes, loose: bool) -> Iterable[Span]:
    """Per digit group of ``text``, the longest window from it that is a card, if any (with
    ``loose`` separators in ``text``, one grouped as a card may be: ``_grouped_as_a_card``).

    Luhn doubles every second digit counted from the right end. For a window ending before digit
    ``b`` those are the digits at offsets of the same parity as ``b``; so two prefix sums, one per
    parity, answer each window in constant time."""
    sums = (_prefix_sums(digits, 0), _prefix_sums(digits, 1))
    starts, places = _digit_groups(text)
    grouping = _loose_and_short_groups(text, starts, places) if loose else None
    for first in range(len(starts) - 1):
        a = starts[first]
        low = bisect_left(starts, a + _CARD_MIN, first + 1)
        high = bisect_right(starts, a + _CARD_MAX, low)
        for last in range(high - 1, low - 1, -1):
            b = starts[last]
            total = sums[b % 2]
            if (total[b] - total[a] - 48 * (b - a)) % 10 == 0 and (
                grouping is None or _grouped_as_a_card(*grouping, first, last)
            ):
                yield (places[first], places[last - 1] + b - starts[last - 1])
                break


def _digit_groups(chain: str) -> tuple[list[int], list[int]]:
    """Per digit group of a chain, and once more for the chain's end: the digit offset where the
    group starts, and where it starts in the text."""
    starts: list[int] = []
    places: list[int] = []
    count = 0
    for group in _DIGITS.finditer(chain):
        starts.append(count)
        places.append(group.start())
        count += group.end() - group.start()
    starts.append(count)
    places.append(len(chain))
    return starts, places


def _loose_and_short_groups(
    chain: str, starts: list[int], places: list[int]
) -> tuple[list[int], list[int]]:
    """Per digit group of a chain (as ``_digit_groups`` gives them, the chain's end last), two
    running counts: the loose separators before it (a slash, or a dash or slash with a space on
    each side), and the groups of fewer than three digits before it."""
    loose = [0]
    short = [0]
    for k in range(1, len(places)):
        size = starts[k] - starts[k - 1]  # a group is all digits: its size in the text too
        separator = chain[places[k - 1] + size : places[k]]
        loose.append(loose[-1] + ("/" in separator or len(separator) == 3))
        short.append(short[-1] + (size < 3))
    return loose, short


def _grouped_as_a_card(loose: list[int], short: list[int], first: int, last: int) -> bool:
    """Whether groups ``first`` to ``last - 1`` are grouped as a card may be: split by loose
    separators, every group but the last has three digits or more (``4111 / 1111 / 1111 /
    1111``); a date's groups are shorter (``05.05.1984 - 1991-11-17`` is no card)."""
    return loose[last - 1] == loose[first] or short[last - 1] == short[first]


def _luhn_valid(digits: bytes) -> bool:
    """The Luhn check over ASCII digits: every second digit from the right end doubled."""
    total = sum(digits[-1::-2]) + sum(digits[-2::-2].translate(_DOUBLED)) - 48 * len(digits)
    return total % 10 == 0


def _prefix_sums(digits: bytes, parity: int) -> list[int]:
    """Prefix sums of the digits' byte values, the digits at offsets of ``parity`` doubled."""
    terms = bytearray(digits)
    terms[parity::2] = digits[parity::2].translate(_DOUBLED)
    return [0, *accumulate(terms)]


# --- SSN and ITIN -------------------------------------------------------------------------------

# Both forms in one pattern: AAA-GG-SSSS or AAA.GG.SSSS (group 1 is the separator; never after
# a dot and digit, as in a version), or AAA GG SSSS or nine bare digits (group 2). The two read
# different separators, so no match of one overlaps a match of the other: one scan finds what a
# pass for each would. A digit first (the lookbehind after it reads the character before the
# match), so the engine skips every position without a digit.
_SSN = re.compile(
    r"[0-9](?<![0-9][0-9])(?:(?<![0-9]\.[0-9])[0-9]{2}([-./]| [-/] )[0-9]{2}\1[0-9]{4}"
    r"|[0-9]{2}( ?)[0-9]{2}\2[0-9]{4})(?![0-9])",
    re.ASCII,
)
_ITIN_GROUPS = frozenset([*range(50, 66), *range(70, 89), 90, 91, 92, *range(94, 100)])


def is_plausible_ssn(digits: str) -> bool:
    """Whether nine digits have the structure of an SSN (SSA rules) or of an ITIN."""
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    if area >= 900:
        return group in _ITIN_GROUPS
    return area not in (0, 666) and group != 0 and serial != 0


def _ssn(match: re.Match[str]) -> str:
    """The token for a dashed or dotted SSN (always, as upstream); for a spaced or bare one, only
    when its structure is plausible."""
    chunk = match.group()
    if match.group(1) or is_plausible_ssn(chunk.replace(" ", "")):
        return SSN_TOKEN
    return chunk


def _redact_ssns(text: str) -> str:
    return _SSN.sub(_ssn, text)


# A run of digits and separators, 7 characters or more, from a digit to a digit: every phone
# number, card, SSN and IPv4 address lies inside one (with a "+" or "(" just before it), so
# their passes run on short windows around such runs, never over the whole text, and each only
# when the run holds enough digits for its form. A run is looked for only where a digit follows
# no digit: a run that fails from its first digit fails from every later one too.
_CHAIN_CHARACTERS = "0-9 .\\-()/\u00a0\u2007\u202f"
# The same scan also stops at the check digits of anything that could be an IBAN (two letters,
# not glued to a word, before two digits), and reads the chain from there too: one pass over the
# text finds both, and every place the IBAN pattern can start.
_DIGIT_SCAN = re.compile(
    rf"[0-9](?<![0-9][0-9])(?:(?<=(?<![A-Za-z0-9])[A-Za-z]{{2}}[0-9])(?=[0-9])(?P<iban>)"
    rf"(?:[{_CHAIN_CHARACTERS}]{{5,}}[0-9])?|[{_CHAIN_CHARACTERS}]{{5,}}[0-9])",
    re.ASCII,
)
_SHORTEST_CHAIN = 7

_WINDOW_BEFORE, _WINDOW_AFTER = 4, 2


def _digit_passes(text: str) -> str:
    """The passes for PII made of digits: IBANs over the text, the others window by window."""
    windows, iban_starts = _windows(text)
    if iban_starts:
        ibans = _iban_spans(text, iban_starts)
        if ibans:  # the other passes run on the text without them, as if after an IBAN pass
            text = _replace_spans(text, ibans, IBAN_TOKEN)
            windows, _ = _windows(text)
    if not windows:
        return text
    out: list[str] = []
    cursor = 0
    for start, end, longest in windows:
        piece = read_window(text[start:end], longest, _WINDOW_PASSES, _READ_AGAIN)
        out += (text[cursor:start], piece)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


WindowPasses = tuple[tuple[int, Callable[[str], str]], ...]


def read_window(
    piece: str, longest: int, passes: WindowPasses, again: tuple[WindowPasses, ...]
) -> str:
    """The window's passes in order, each when its chains hold enough digits for its form. When
    they took something and digits are left, the window is read again in each other order of
    ``again`` (the phone passes first, SSNs and cards first), and the reading that leaves fewest
    digits wins (the earliest on a tie): a Luhn-valid window of groups can span two values
    (``900-50-0001 020 0000 0000``: 16 digits from the SSN into the phone pass the check once in
    ten), and so can an SSN's groups (``001 10 0001`` in ``0000.0000.0000.0 001 10 0001 000``);
    the first reading left the rest of the phone number readable. A card after a ``+``
    (``+5188/3364/3658/5926``) read as a phone number of its first 15 digits and left the rest,
    and a card read into an SSN's first group left the SSN's rest.
    Shared with the reference reading."""
    best = _read(piece, longest, passes)
    if best == piece:
        return best
    for order in again:
        if _DIGIT.search(best) is None:
            break
        reading = _read(piece, longest, order)
        if _count_digits(reading) < _count_digits(best):
            best = reading
    return best


def _read(piece: str, longest: int, passes: WindowPasses) -> str:
    for shortest, redact in passes:
        if longest >= shortest:
            piece = redact(piece)
    return piece


_DIGIT = re.compile(r"[0-9]")


def _count_digits(text: str) -> int:
    return sum(text.count(digit) for digit in "0123456789")


def _windows(text: str) -> tuple[list[list[int]], list[int]]:
    """``[start, end, most digits in a chain]`` of the windows around the chains that can hold
    a form (windows that touch are merged), and where an IBAN may start."""
    windows: list[list[int]] = []
    iban_starts: list[int] = []
    first = _DIGIT_SCAN.search(text)  # most text has none: this one search is all it costs
    if first is None:
        return windows, iban_starts
    last: list[int] = [0, -1, 0]
    for chain in _DIGIT_SCAN.finditer(text, first.start()):
        start, end = chain.span()
        if chain.lastindex:
            iban_starts.append(start)
            if end - start < _SHORTEST_CHAIN:
                continue
        # An upper bound on the chain's digits (the common separators taken off): the passes it
        # lets through on a chain with fewer digits than their form needs find nothing.
        digits = end - start
        if digits >= _SHORTEST_NUMERIC_PII:
            group = chain.group()
            digits -= group.count(" ") + group.count("-") + group.count(".") + group.count("/")
        start = start - _WINDOW_BEFORE if start > _WINDOW_BEFORE else 0
        if start <= last[1]:
            last[1] = end + _WINDOW_AFTER
            last[2] = max(last[2], digits)
        else:
            last = [start, end + _WINDOW_AFTER, digits]
            windows.append(last)
    return windows, iban_starts


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
    (9, _redact_north_american_phones),  # 10 digits; national and later 00 numbers from 9
)
_PHONES_FIRST: WindowPasses = (
    _WINDOW_PASSES[0],  # IPv4
    _WINDOW_PASSES[1],  # international
    (9, _redact_phones_anywhere),  # the later phone passes, in any digit group
    _WINDOW_PASSES[3],  # SSN
    _WINDOW_PASSES[2],  # cards
)
"""The second reading of a window (``read_window``): every phone first."""
_CARDS_FIRST: WindowPasses = (
    _WINDOW_PASSES[0],  # IPv4
    _WINDOW_PASSES[3],  # SSN
    _WINDOW_PASSES[2],  # cards
    _WINDOW_PASSES[1],  # international
    _WINDOW_PASSES[4],  # North American, national and later 00 numbers
)
"""The third reading: SSNs and cards before the phone numbers (a card after a ``+`` is no phone
number), SSNs before cards (a card read on into an SSN's first group: ``0000/0000/0101/022
001.01.0001`` left ``.01.0001``)."""
_READ_AGAIN = (_PHONES_FIRST, _CARDS_FIRST)
