"""PII items that know what of them is private, the messages they sit in, and the separators two
messages are joined by: the generators of the compositional PII properties (issue 29, part 7).

An ``Item`` is one value as written, with what may legitimately stay of it (``kept``: a URL's host
after its credentials) and, for a value without digits, the part that must not survive
(``sensitive``). Around the items, messages hold words without digits or ``@``; so a digit or an
``@`` left in a stripped message, once the tokens and every ``kept`` piece are taken out, is a
part of an item that leaked. E-mail local parts carry a digit in every word for the same reason:
a word of one left behind shows.

National phone numbers are written for every country spec/analytics.md names (UK, FR, DE, and the
US numbers of the North American plan), in every grouping people use: a space, ``-``, ``.``,
``/``, `` - ``, `` / ``, the area code in parentheses, pairs of digits, and the international
forms with ``+`` or ``00``, with or without the trunk ``(0)``.
"""

from __future__ import annotations

import ipaddress
import string
from dataclasses import dataclass

from hypothesis import strategies as st

from support.strategies.pii_text import (
    card_numbers,
    emails,
    ibans,
    ip_addresses,
    looser_pii,
    phone_numbers,
    secrets,
    ssns,
    written_cards,
    written_emails,
    written_ibans,
    written_ids,
    written_phones,
)

TOKENS = (
    "[EMAIL_REDACTED]",
    "[CC_REDACTED]",
    "[SSN_REDACTED]",
    "[PHONE_REDACTED]",
    "[IBAN_REDACTED]",
    "[IP_REDACTED]",
    "[SECRET_REDACTED]",
)
"""The redaction markers as the stripper writes them (written out, not imported: a separator
is text a message holds, whatever the code under test calls its tokens)."""


@dataclass(frozen=True)
class Item:
    """A value planted in a message. ``kept``: pieces of it that stay by design; ``sensitive``:
    for a value a leak may show without a digit (a secret), the part that must not survive."""

    text: str
    kind: str
    kept: tuple[str, ...] = ()
    sensitive: str = ""


@dataclass(frozen=True)
class Message:
    """Text and the items planted in it (in the order they appear)."""

    text: str
    items: tuple[Item, ...] = ()
    kept: tuple[str, ...] = ()

    def __add__(self, other: Message) -> Message:
        return Message(self.text + other.text, self.items + other.items, self.kept + other.kept)


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text(string.digits, min_size=count, max_size=count)


# --- national phone numbers -----------------------------------------------------------------------

# A country's numbers as (international code, area codes without the trunk 0, digits of the
# subscriber number for each area length). UK: London 20, cities 1X1, towns 1XXX, mobiles 7XXX;
# FR: 1 to 9 then eight digits; DE: Berlin 30 (6 to 8 digits), Cologne 221, Heidelberg 6221,
# small towns 33203, mobiles 151 / 171 (7 or 8 digits).
_UK_AREAS = st.sampled_from(["20", "113", "121", "161", "1632", "1223", "7700", "7911", "7096"])
_DE_AREAS = st.sampled_from(["30", "40", "89", "221", "228", "711", "6221", "4651", "33203"])
_DE_MOBILE = st.sampled_from(["151", "160", "171", "176"])
COUNTRIES = ("uk", "fr", "de", "us")
"""The countries spec/analytics.md names (UK, FR, DE; the US numbers of the North American
plan)."""

# How a number's groups are split: one character, or a dash or slash with a space on each side.
GROUPINGS = (" ", "-", ".", "/", " - ", " / ", "")


@st.composite
def national_number(draw: st.DrawFn, country: str) -> tuple[str, list[str]]:
    """``(international code, [area code, subscriber groups...])`` without the trunk 0."""
    if country == "uk":
        area = draw(_UK_AREAS)
        subscriber = draw(_digits(10 - len(area)))
        if len(area) == 2:
            return "44", [area, subscriber[:4], subscriber[4:]]
        if len(area) == 3:
            return "44", [area, subscriber[:3], subscriber[3:]]
        return "44", [area, subscriber]
    if country == "fr":
        first = str(draw(st.integers(1, 9)))
        rest = draw(_digits(8))
        return "33", [first, *(rest[i : i + 2] for i in range(0, 8, 2))]
    if country == "de":
        if draw(st.booleans()):
            area = draw(_DE_MOBILE)
            return "49", [area, draw(_digits(draw(st.integers(7, 8))))]
        area = draw(_DE_AREAS)  # 9 to 11 digits with the trunk 0: "030 260500", "06221 123456"
        length = draw(st.integers(8 - len(area), 10 - len(area)))
        subscriber = draw(_digits(length))
        if draw(st.booleans()) and length % 2 == 0:  # the old style: pairs of digits
            return "49", [area, *(subscriber[i : i + 2] for i in range(0, length, 2))]
        return "49", [area, subscriber]
    area = str(draw(st.integers(2, 9))) + draw(_digits(2))
    exchange = str(draw(st.integers(2, 9))) + draw(_digits(2))
    return "1", [area, exchange, draw(_digits(4))]


@st.composite
def phone_in_national_form(draw: st.DrawFn, country: str) -> str:
    """As dialled at home: the trunk 0 (none in the US), the area code bare or in parentheses,
    the groups split by one grouping or written together."""
    _, groups = draw(national_number(country))
    trunk = "" if country == "us" else "0"
    separator = draw(st.sampled_from(GROUPINGS))
    area, rest = trunk + groups[0], groups[1:]
    if draw(st.booleans()):
        # Dots after a parenthesis read as an IP address (``(01)10.10.10.10``): not written so.
        after = draw(st.sampled_from(["", " "]))
        return f"({area}){after}" + separator.replace(".", " ").join(rest)
    if draw(st.booleans()) and len(rest) > 1:  # the area code set off, the rest written together
        return area + separator + "".join(rest)
    return separator.join([area, *rest])


@st.composite
def phone_in_international_form(draw: st.DrawFn, country: str) -> str:
    """As dialled from abroad: ``+`` or ``00``, the country code, the trunk ``(0)`` or not."""
    code, groups = draw(national_number(country))
    prefix = draw(st.sampled_from(["+", "00"]))
    separator = draw(st.sampled_from([s for s in GROUPINGS if s]))
    trunk = draw(st.sampled_from(["", "(0)", "(0) "])) if country != "us" else ""
    area = trunk + groups[0]
    if draw(st.booleans()):
        area = f"({groups[0]})" if not trunk else area
    return prefix + code + separator + separator.join([area, *groups[1:]])


@st.composite
def national_phones(draw: st.DrawFn) -> str:
    """A phone number of a country spec/ names, in a national or international form."""
    country = draw(st.sampled_from(COUNTRIES))
    if draw(st.booleans()):
        return draw(phone_in_national_form(country))
    return draw(phone_in_international_form(country))


# --- e-mail addresses with every local-part character RFC 5322 allows ----------------------------

ATEXT_SPECIALS = "!#$%&'*+-/=?^_`{|}~"
"""RFC 5322 atext besides letters and digits: every one may stand anywhere in a dot-atom."""
_WORD = st.tuples(
    st.text(string.ascii_letters + string.digits, max_size=5), st.sampled_from(string.digits)
).map(lambda parts: parts[0] + parts[1])  # a digit in every word: a word left behind shows
_SPECIALS = st.text(ATEXT_SPECIALS.replace("'", ""), min_size=1, max_size=3)


@st.composite
def dot_atom_local_parts(draw: st.DrawFn) -> str:
    """Atoms of words and specials (``/`` among them) joined by single dots; an apostrophe only
    after a letter or digit, as in a name (after anything else it reads as a quote around the
    address, and the stripper keeps it out)."""
    atoms = []
    for _ in range(draw(st.integers(1, 3))):
        pieces = draw(st.lists(_WORD | _SPECIALS | st.just("'"), min_size=1, max_size=4))
        atom = ""
        for piece in pieces:
            if piece == "'" and not atom[-1:].isalnum():
                continue
            atom += piece
        atoms.append(atom or draw(_WORD))
    local = ".".join(atoms)
    return local if any(c.isdigit() for c in local) else local + draw(_WORD)


@st.composite
def quoted_local_parts(draw: st.DrawFn) -> str:
    """A quoted string: printable characters, spaces, ``@`` and ``.`` too, quoted pairs
    (``\\"``, ``\\\\``)."""
    qtext = st.text(
        string.ascii_letters + string.digits + ATEXT_SPECIALS + " .,:;<>@[]()", max_size=6
    )
    pieces = draw(st.lists(qtext | st.sampled_from(['\\"', "\\\\"]), min_size=1, max_size=4))
    return '"' + "".join(pieces) + draw(_WORD) + '"'


_LABEL = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)


@st.composite
def rfc5322_addresses(draw: st.DrawFn) -> str:
    local = draw(dot_atom_local_parts() | quoted_local_parts())
    if draw(st.integers(0, 9)) == 0:
        literal = ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1)))
        return f"{local}@[{literal}]"
    labels = ".".join(draw(st.lists(_LABEL, min_size=1, max_size=3)))
    tld = draw(st.text(string.ascii_lowercase, min_size=2, max_size=6))
    return f"{local}@{labels}.{tld}"


# --- items of every kind --------------------------------------------------------------------------


def _secret_item(value: str) -> Item:
    if "://" in value:  # URL credentials: the host and path after them stay
        credentials, _, host = value.split("://", 1)[1].partition("@")
        return Item(value, "secret", kept=("@" + host,), sensitive=credentials)
    return Item(value, "secret", sensitive=value.removeprefix("Bearer "))


def pii_items() -> st.SearchStrategy[Item]:
    """One item of every kind the stripper handles, the new national and e-mail forms most."""
    return st.one_of(
        national_phones().map(lambda v: Item(v, "phone")),
        rfc5322_addresses().map(lambda v: Item(v, "email")),
        st.one_of(phone_numbers(), written_phones()).map(lambda v: Item(v, "phone")),
        st.one_of(emails(), written_emails()).map(lambda v: Item(v, "email")),
        looser_pii().map(lambda v: Item(v, "looser form")),
        st.one_of(card_numbers(), written_cards()).map(lambda v: Item(v, "card")),
        st.one_of(ibans(), written_ibans()).map(lambda v: Item(v, "iban")),
        st.one_of(ssns(), written_ids()).map(lambda v: Item(v, "ssn or ip")),
        ip_addresses().filter(_has_a_digit).map(lambda v: Item(v, "ip")),
        secrets().map(_secret_item),
    )


def _has_a_digit(value: str) -> bool:
    """An IPv6 address in letters only leaves no digit to show a leak; ``secrets`` and the
    12-character check would be the only telltale, so such addresses are left to the planting
    properties."""
    return any(c.isdigit() for c in value)


# --- messages and separators ----------------------------------------------------------------------

_WORDS = st.sampled_from(
    ["error", "call", "Tel.", "mail", "see", "failed for", "to", "from", "Fehler:", "appelez le"]
)
WHITESPACE = st.sampled_from([" ", "\n", "\t", "  ", " \n"])
PUNCTUATION = st.sampled_from(
    [
        ",",
        ";",
        "-",
        "/",
        "(",
        ")",
        "!",
        "?",
        "=",
        "'",
        '"',
        "|",
        "#",
        "&",
        "*",
        "+",
        "<",
        ">",
        "[",
        "]",
        ", ",
        ". ",
        " - ",
        " / ",
        ": ",
        "; ",
        " (",
        ") ",
        " <",
        "> ",
    ]
)
# A bare "." or ":" is left out: between two digits it continues a number (a version, a time, an
# IP address), which reads as one value, not two.
_BOUNDARY = WHITESPACE | PUNCTUATION
_APART = WHITESPACE | st.sampled_from([",", ";", "(", ", ", "; ", "=", "/"])
"""What sets a number apart from digits before it (a dot or a colon would continue them)."""


@st.composite
def messages(draw: st.DrawFn) -> Message:
    """An item, with words before and after it or at an edge of the message."""
    item = draw(pii_items())
    before = draw(_WORDS) + draw(_BOUNDARY) if draw(st.booleans()) else ""
    after = draw(_BOUNDARY) + draw(_WORDS) if draw(st.booleans()) else ""
    return Message(before + item.text + after, (item,))


@st.composite
def separators(draw: st.DrawFn) -> tuple[str, Message]:
    """``(class, separator)``: what two messages are joined by."""
    kind = draw(st.sampled_from(["whitespace", "punctuation", "item", "marker", "ip:port", "url"]))
    if kind == "whitespace":
        return kind, Message(draw(WHITESPACE))
    if kind == "punctuation":
        return kind, Message(draw(PUNCTUATION))
    if kind == "item":
        item = draw(pii_items())
        return kind, Message(draw(_BOUNDARY) + item.text + draw(_BOUNDARY), (item,))
    edge = st.just("") | _BOUNDARY
    if kind == "marker":
        return kind, Message(draw(edge) + draw(st.sampled_from(TOKENS)) + draw(edge))
    if kind == "ip:port":
        port = ":" + str(draw(st.integers(1, 65535)))
        address = str(ipaddress.IPv4Address(draw(st.integers(0, 2**32 - 1))))
        if draw(st.booleans()):
            address = draw(st.sampled_from(TOKENS[5:6]))  # already redacted
        ip = Item(address, "ip") if address[0].isdigit() else None
        text = draw(_APART) + address + port + draw(_BOUNDARY)
        return kind, Message(text, (ip,) if ip else (), kept=(port,))
    path = draw(st.sampled_from(["", "/", "/api/users", "/a?b=c&d=e", "/x#top"]))
    host = draw(st.sampled_from(["example.com", "api.example.org", "localhost"]))
    port = draw(st.sampled_from(["", ":8080"]))
    text = f"{draw(_BOUNDARY)}https://{host}{port}{path}{draw(_BOUNDARY)}"
    return kind, Message(text, kept=(port,) if port else ())


# --- what leaked ----------------------------------------------------------------------------------


def leaks(message: Message, stripped: str) -> list[Item]:
    """The items of ``message`` a part of which survives in ``stripped``: with the tokens and the
    pieces kept by design taken out, a digit or ``@`` left belongs to an item (nothing else in the
    message has one), and so does a 12-character piece of a secret."""
    rest = stripped
    for token in TOKENS:
        rest = rest.replace(token, "\x00")
    for piece in (*message.kept, *(kept for item in message.items for kept in item.kept)):
        rest = rest.replace(piece, "\x00", 1)
    digits_left = any(c in string.digits or c == "@" for c in rest)
    return [
        item
        for item in message.items
        if (not item.sensitive and digits_left) or _piece_left(item.sensitive, rest)
    ]


def _piece_left(sensitive: str, rest: str) -> bool:
    return bool(sensitive) and any(
        sensitive[i : i + 12] in rest for i in range(max(len(sensitive) - 11, 1))
    )
