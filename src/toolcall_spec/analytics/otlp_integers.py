"""The integer-valued fields of an OTLP/JSON trace export, and the one reader of their values.

OTLP/JSON is the protobuf JSON mapping (ProtoJSON) of the OTLP messages. An integer field's value
is a JSON number or a string holding one (64-bit integers are sent as decimal strings, since a
JSON reader may keep numbers as doubles), exponent notation included (``"1e3"``), as long as the
value is a whole number in the field's range; an enum is its name or its number. Anything else
is not a trace export: ``"12x"``, ``"-1"`` for a count, ``"1.5"``, ``" 12"``, ``"+12"``,
``"012"``, digits of other scripts, a boolean, a number past the range.

A string is read as Go's ``protojson`` reads it (the string must be a JSON number token), not
as Python's ``int()`` would (which also takes ``"+12"``, ``"1_000"``, ``" 12"`` and ``"١٢"``:
``google.protobuf.json_format`` inherits those); a JSON number past 2**53 that is not an integer
token has lost digits on its way (a double), so it is refused too, with the advice to send a
decimal string.

``integer_problems`` walks an export and yields the first bad integer field by its path
(``resourceSpans[0].scopeSpans[0].spans[2].events[0].timeUnixNano``); the endpoint answers it
with 400. Fields the decoder does not use are checked as well: a receiver that stored the good
spans of an export it cannot parse would be guessing what its sender meant.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from toolcall_spec.json_paths import format_path, printable


@dataclass(frozen=True, slots=True)
class IntegerKind:
    """A protobuf integer type (or an enum) as OTLP/JSON carries it."""

    name: str
    low: int
    high: int
    names: Mapping[str, int] = field(default_factory=dict)
    """An enum's value names (a name is a value too)."""


UINT32 = IntegerKind("uint32", 0, 2**32 - 1)
FIXED32 = IntegerKind("fixed32", 0, 2**32 - 1)
FIXED64 = IntegerKind("fixed64", 0, 2**64 - 1)
INT64 = IntegerKind("int64", -(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)
INT32 = IntegerKind("int32", *_INT32)
SPAN_KIND = IntegerKind(
    "enum SpanKind",
    *_INT32,
    {
        "SPAN_KIND_UNSPECIFIED": 0,
        "SPAN_KIND_INTERNAL": 1,
        "SPAN_KIND_SERVER": 2,
        "SPAN_KIND_CLIENT": 3,
        "SPAN_KIND_PRODUCER": 4,
        "SPAN_KIND_CONSUMER": 5,
    },
)
STATUS_CODE = IntegerKind(
    "enum StatusCode",
    *_INT32,
    {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2},
)

Field = IntegerKind | tuple[str, bool]
"""An integer field's kind, or a message field: (message name, repeated)."""

MESSAGES: dict[str, dict[str, Field]] = {
    "ExportTraceServiceRequest": {"resourceSpans": ("ResourceSpans", True)},
    "ResourceSpans": {"resource": ("Resource", False), "scopeSpans": ("ScopeSpans", True)},
    "Resource": {"attributes": ("KeyValue", True), "droppedAttributesCount": UINT32},
    "ScopeSpans": {"scope": ("InstrumentationScope", False), "spans": ("Span", True)},
    "InstrumentationScope": {"attributes": ("KeyValue", True), "droppedAttributesCount": UINT32},
    "Span": {
        "flags": FIXED32,
        "kind": SPAN_KIND,
        "startTimeUnixNano": FIXED64,
        "endTimeUnixNano": FIXED64,
        "attributes": ("KeyValue", True),
        "droppedAttributesCount": UINT32,
        "events": ("Event", True),
        "droppedEventsCount": UINT32,
        "links": ("Link", True),
        "droppedLinksCount": UINT32,
        "status": ("Status", False),
    },
    "Event": {
        "timeUnixNano": FIXED64,
        "attributes": ("KeyValue", True),
        "droppedAttributesCount": UINT32,
    },
    "Link": {"attributes": ("KeyValue", True), "droppedAttributesCount": UINT32, "flags": FIXED32},
    "Status": {"code": STATUS_CODE},
    "KeyValue": {"value": ("AnyValue", False), "keyStrindex": INT32},
    "AnyValue": {
        "intValue": INT64,
        "stringValueStrindex": INT32,
        "arrayValue": ("ArrayValue", False),
        "kvlistValue": ("KeyValueList", False),
    },
    "ArrayValue": {"values": ("AnyValue", True)},
    "KeyValueList": {"values": ("KeyValue", True)},
}
"""Every message of a trace export that holds an integer field or leads to one (from
opentelemetry-proto's trace/v1, common/v1 and resource/v1 .proto files, 1.45: the ``*Strindex``
fields are the profiles signal's string-table references), by JSON name."""


def snake_case(camel: str) -> str:
    return re.sub(r"[A-Z]", lambda upper: "_" + upper.group().lower(), camel)


_FIELDS: dict[str, dict[str, Field]] = {
    message: {
        name: kind
        for json_name, kind in fields.items()
        for name in (json_name, snake_case(json_name))
    }
    for message, fields in MESSAGES.items()
}
"""Per message: each field under its JSON name and its proto name -> its kind."""

_NUMBER_TOKEN = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_MAX_TEXT = 400
"""A longer string is no integer any field holds (an exponent past this is out of every range)."""
_EXACT_DOUBLE = 2**53


class BadIntegerError(ValueError):
    """A value that is not an integer of its field's kind; the message says what is expected."""


def integer_value(value: Any, kind: IntegerKind) -> int:
    """The integer an OTLP/JSON value holds for a field of ``kind``; ``BadIntegerError``."""
    if isinstance(value, bool):
        raise _bad(value, kind)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if abs(value) >= _EXACT_DOUBLE:  # a double this large has lost its last digits
            raise _bad(value, kind, "send a 64-bit value as a decimal string")
        if not value.is_integer():
            raise _bad(value, kind)
        number = int(value)
    elif isinstance(value, str) and value in kind.names:
        return kind.names[value]
    elif isinstance(value, str) and not kind.names:
        number = _integer_text(value, kind)
    else:
        raise _bad(value, kind)
    if not kind.low <= number <= kind.high:
        raise _bad(value, kind, f"out of range {kind.low}..{kind.high}")
    return number


def _integer_text(text: str, kind: IntegerKind) -> int:
    if len(text) > _MAX_TEXT or _NUMBER_TOKEN.fullmatch(text) is None:
        raise _bad(text, kind)
    if text.lstrip("-").isdigit():
        return int(text)
    exact = Decimal(text)
    if abs(exact.adjusted()) > 40 or exact != exact.to_integral_value():
        raise _bad(text, kind, "not a whole number in range")
    return int(exact)


def _bad(value: Any, kind: IntegerKind, why: str = "") -> BadIntegerError:
    shown = printable(json.dumps(value, ensure_ascii=False))[:80]
    expected = (
        f"one of its names or its number ({kind.name})"
        if kind.names
        else f"a whole number, as a JSON number or a decimal string ({kind.name})"
    )
    return BadIntegerError(f"{shown} is not {expected}" + (f": {why}" if why else ""))


def integer_problems(export: Any) -> Iterator[str]:
    """``path: reason`` for each integer field of an OTLP/JSON trace export whose value is not
    an integer of its kind, in document order. Walks with a stack of its own, not recursion: an
    ``AnyValue`` may nest as deep as the JSON reader allows. Values of the wrong shape elsewhere
    (a message that is not an object) are left to the decoder, which names them."""
    stack: list[tuple[Any, str, list[str | int]]] = [(export, "ExportTraceServiceRequest", [])]
    while stack:
        message, name, path = stack.pop()
        if not isinstance(message, dict):
            continue
        fields = _FIELDS[name]
        children: list[tuple[Any, str, list[str | int]]] = []
        for member, value in message.items():
            kind = fields.get(member)
            if kind is None or value is None:
                continue
            if isinstance(kind, IntegerKind):
                try:
                    integer_value(value, kind)
                except BadIntegerError as exc:
                    yield f"{format_path([*path, member])}: {exc}"
                continue
            inner, repeated = kind
            if not repeated:
                children.append((value, inner, [*path, member]))
            elif isinstance(value, list):
                children += ((item, inner, [*path, member, i]) for i, item in enumerate(value))
        stack += reversed(children)


__all__ = [
    "FIXED32",
    "FIXED64",
    "INT32",
    "INT64",
    "MESSAGES",
    "SPAN_KIND",
    "STATUS_CODE",
    "UINT32",
    "BadIntegerError",
    "IntegerKind",
    "integer_problems",
    "integer_value",
    "snake_case",
]
