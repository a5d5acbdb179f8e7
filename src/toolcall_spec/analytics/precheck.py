"""A fast pre-check for JSONL ingest, derived from the ``tool_call`` event schema: it settles
most lines as "a valid event, nothing to say" straight from their bytes, a group at a time.

Its one promise is one-sided: a line it *accepts* is one the full path (orjson, then the
compiled schema validator) would accept with nothing to report. Everything else (invalid
events, but also valid ones it cannot vouch for: a leap day, ``1.0`` for an integer, a BOM, no
``status``) goes to the full path, which decides.
``tests/analytics/test_ingest_validator_differential.py`` checks that promise against the
pure-Python jsonschema oracle on generated lines.

How the schema becomes a decoder (msgspec decodes and checks in C):

- each member becomes a field: ``const``/``enum`` strings a ``Literal``, strings with their
  length bounds, numbers and integers with their bounds (``1.0`` for an integer is left to the
  full path), open objects a dict of JSON values three levels deep, numbers read as floats (so
  a number orjson refuses is refused here too); unknown members are refused (the schema is
  closed); a keyword not understood raises ``UnsupportedSchemaError``, so a schema change
  cannot silently widen what the pre-check accepts;
- the ``if``/``then``/``else`` on one enum member (``status: error`` needs a category; any other
  status allows neither error field) becomes one tagged struct per value of that member; an
  event without the member is left to the full path;
- ``pattern`` and ``format`` are checked per group of ``GROUP_LINES`` decoded lines: the group's
  values of that member joined by newlines, matched by one regular expression (a call per value
  costs as much as decoding the event). ``date-time`` is matched by ``STRICT_DATE_TIME``, a subset
  of RFC 3339 whose every match is a real calendar date (no 29 February, no leap second, no year
  0000: those go to the full path);
- msgspec keeps the last of repeated members, which every reader of this package refuses: per
  group, ``may_repeat_in_group`` compares colon counts of the lines and of a re-encoding of what
  was decoded (``toolcall_spec.loading.colons_rule_out_repeats``), and only a group that fails is
  looked at line by line.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from typing import Annotated, Any, BinaryIO, Literal

import msgspec

from toolcall_spec.catalog import SCHEMA_FILES, Kind, all_schemas, load_schema
from toolcall_spec.loading import colons_rule_out_repeats, iter_jsonl_blocks, parse_jsonl_line

ProgressCallback = Callable[[int, int, int], None]
EVENT_KIND: Kind = "tool-call-event"

STRICT_DATE_TIME = (
    r"(?!0000)[0-9]{4}-"
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"  # days every month has
    r"|(?:0[13-9]|1[0-2])-(?:29|30)"  # 29 and 30, not in February
    r"|(?:0[13578]|1[02])-31)"  # 31 in the long months
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
"""Date-times the pre-check vouches for: upper-case ``T`` and ``Z``, real calendar dates only."""

_UNSET = msgspec.UNSET
_IGNORED_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment"})
# TypeError: a line over the limit (None); RecursionError: nested deeper than msgspec decodes;
# UnicodeDecodeError: a string of invalid UTF-8, as msgspec before 0.23 reports it (0.23 raises
# DecodeError). Each leaves the line to the exact path, which refuses it with its path.
_SETTLE_ERRORS = (msgspec.DecodeError, TypeError, RecursionError, UnicodeDecodeError)


class UnsupportedSchemaError(ValueError):
    """The schema uses a keyword the pre-check does not translate."""


@dataclass(frozen=True, slots=True)
class PatternCheck:
    """One member whose string values must match ``regex`` (the schema's pattern or format)."""

    member: str
    regex: str
    required: bool  # present in every event the decoder accepts


ColumnCheck = Callable[[Sequence[str]], bool]


@dataclass(frozen=True, slots=True)
class _ColumnPattern:
    """A ``PatternCheck`` ready to run: how to read the member, and its two checks."""

    member: Callable[[Any], Any]
    column_ok: ColumnCheck  # every value of a column at once
    value: re.Pattern[str]  # one value, to find which ones fail
    required: bool


class Precheck:
    """Settles a block of raw lines: which of them are valid events with nothing to report."""

    def __init__(self, decode: Callable[[bytes], Any], patterns: Sequence[PatternCheck]) -> None:
        self.decode = decode
        """The typed decoder alone: raises on a line it cannot vouch for (no repeat guard, no
        pattern checks)."""
        self._patterns = [
            _ColumnPattern(
                attrgetter(p.member), _column_check(p.regex), re.compile(p.regex), p.required
            )
            for p in patterns
        ]

    def unsettled(self, lines: Sequence[bytes | None]) -> list[int]:
        """Positions (in ``lines``) of the lines this check does not accept, in order."""
        unsettled: list[int] = []
        for start in range(0, len(lines), GROUP_LINES):
            group = lines[start : start + GROUP_LINES]
            unsettled += (start + offset for offset in self._group_unsettled(group))
        return unsettled

    def _group_unsettled(self, group: Sequence[bytes | None]) -> list[int]:
        """``unsettled`` for a group of lines whose decoded events are held at once: the repeat
        guard and the pattern checks run once for the whole group, and event by event only
        when the group fails them."""
        decode = self.decode
        failed: list[int] = []
        events: list[Any] = []
        raws: list[bytes] = []
        offsets: list[int] = []  # where each decoded event's line is in ``group``
        for offset, raw in enumerate(group):
            try:
                events.append(decode(raw))  # type: ignore[arg-type]  # None: caught
            except _SETTLE_ERRORS:
                failed.append(offset)
                continue
            raws.append(raw)  # type: ignore[arg-type]  # decoded, so bytes
            offsets.append(offset)
        if not events:
            return failed
        refused = self._pattern_refusals(events)
        if may_repeat_in_group(raws, events):
            encode = _ENCODER.encode
            refused.update(
                index
                for index, (raw, event) in enumerate(zip(raws, events, strict=True))
                if not colons_rule_out_repeats(raw, encode(event))
            )
        if not refused:
            return failed
        return sorted([*failed, *(offsets[index] for index in refused)])

    def _pattern_refusals(self, events: list[Any]) -> set[int]:
        """Indexes (in ``events``) of the events whose pattern members do not match: one check
        per member and group (a regex call per value costs as much as decoding the event); only
        a column that fails is looked at value by value."""
        refused: set[int] = set()
        for pattern in self._patterns:
            column = list(map(pattern.member, events))
            values = column if pattern.required else [v for v in column if v is not _UNSET]
            if values and not pattern.column_ok(values):
                refused.update(_refusals(column, pattern.value))
        return refused

    def accepts(self, raw: bytes) -> bool:
        """Whether one line is settled as a valid event (the block form, for a single line)."""
        return not self.unsettled([raw])


_ENCODER = msgspec.json.Encoder()

GROUP_LINES = 128
"""Lines whose decoded events are held at once for the repeat guard and the pattern checks: few
enough to stay in the processor's cache (a whole block of events does not, and costs more than
the guard saves)."""


def may_repeat_in_group(raws: list[bytes], events: list[Any]) -> bool:
    """Whether any of the lines ``raws`` may repeat a member, given ``events`` (what msgspec,
    which keeps the last of repeated members, decoded from them): one join, one encoding and two
    counts for the whole group (``colons_rule_out_repeats``: no line's count is below its
    decoded count, so equal sums mean every line is equal)."""
    return not colons_rule_out_repeats(b"".join(raws), _ENCODER.encode(events))


def _column_check(regex: str) -> ColumnCheck:
    """Whether every value of a column matches ``regex``: the values joined by newlines, matched
    by one regex call (a newline inside a value shows in the count of newlines)."""
    if regex == UUID_PATTERN:
        return _uuids_ok
    joined_regex = re.compile(f"(?:(?:{regex})\n)*")

    def column_ok(values: Sequence[str]) -> bool:
        joined = "\n".join(values) + "\n"
        return joined.count("\n") == len(values) and joined_regex.fullmatch(joined) is not None

    return column_ok


_NOT_HEX = str.maketrans("", "", "0123456789abcdefABCDEF-\n")


def _uuids_ok(values: Sequence[str]) -> bool:
    """``UUID_PATTERN`` for a whole column with string methods only (several times faster
    than the regex): 36 characters each, hyphens at 8, 13, 18 and 23, hexadecimal elsewhere."""
    count = len(values)
    joined = "\n".join(values) + "\n"
    if len(joined) != 37 * count or joined[36::37] != "\n" * count:
        return False
    hyphens = "-" * count
    if any(joined[at::37] != hyphens for at in (8, 13, 18, 23)):
        return False
    return joined.count("-") == 4 * count and not joined.translate(_NOT_HEX)


def _refusals(column: list[Any], regex: re.Pattern[str]) -> Iterator[int]:
    for index, value in enumerate(column):
        if value is not _UNSET and ("\n" in value or not regex.fullmatch(value)):
            yield index


# --- from the schema ------------------------------------------------------------------------------


def build_precheck(schema: dict[str, Any], defs: dict[str, dict[str, Any]]) -> Precheck:
    """The pre-check for a closed object schema; ``defs`` resolves its ``$ref`` values (by the
    reference text as written)."""
    _only(schema, {"type", "additionalProperties", "required", "properties", "if", "then", "else"})
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        raise UnsupportedSchemaError("only a closed object schema is translated")
    required = set(schema.get("required", []))
    fields: dict[str, Any] = {}
    patterns: list[PatternCheck] = []
    for name, written in schema["properties"].items():
        member = defs[written["$ref"]] if "$ref" in written else written
        fields[name], pattern = _field_type(name, member)
        if pattern is not None:
            patterns.append(PatternCheck(name, pattern, name in required))
    variants = _variants(schema, fields, required)
    decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(variants)
    return Precheck(decoder.decode, patterns)


def _variants(schema: dict[str, Any], fields: dict[str, Any], required: set[str]) -> Any:
    """One struct, or one tagged struct per value of the member the ``if`` tests."""
    if "if" not in schema:
        return _struct("Event", fields, required)
    tag, tag_value, then_required, else_forbidden = _conditional(schema)
    values = _literal_values(fields.pop(tag))
    structs = []
    for value in values:
        if value == tag_value:
            struct = _struct(f"Event_{value}", fields, required | then_required, tag, value)
        else:
            kept = {k: t for k, t in fields.items() if k not in else_forbidden}
            struct = _struct(f"Event_{value}", kept, required, tag, value)
        structs.append(struct)
    union: Any = structs[0]
    for struct in structs[1:]:
        union = union | struct
    return union


def _conditional(schema: dict[str, Any]) -> tuple[str, str, set[str], set[str]]:
    """``if {tag: const V, required [tag]} then {required: R} else {X: false ...}``."""
    condition, then, otherwise = schema["if"], schema.get("then", {}), schema.get("else", {})
    _only(condition, {"properties", "required"})
    _only(then, {"required"})
    _only(otherwise, {"properties"})
    tested = condition.get("properties", {})
    if len(tested) != 1 or condition.get("required") != list(tested):
        raise UnsupportedSchemaError("the if must test one required member")
    ((tag, test),) = tested.items()
    if set(test) != {"const"} or not isinstance(test["const"], str):
        raise UnsupportedSchemaError("the if must compare its member with a string const")
    forbidden = otherwise.get("properties", {})
    if any(value is not False for value in forbidden.values()):
        raise UnsupportedSchemaError("the else may only forbid members")
    return tag, test["const"], set(then.get("required", [])), set(forbidden)


def _struct(
    name: str,
    fields: dict[str, Any],
    required: set[str],
    tag: str | None = None,
    tag_value: str | None = None,
) -> type[msgspec.Struct]:
    if tag is not None and tag in required:
        required = required - {tag}
    missing = required - set(fields)
    if missing:
        raise UnsupportedSchemaError(f"required members without a definition: {sorted(missing)}")
    spec = [
        (field, kind) if field in required else (field, kind | msgspec.UnsetType, _UNSET)
        for field, kind in fields.items()
    ]
    # gc=False: the structs hold no containers that could form a cycle, and are never kept
    options: dict[str, Any] = {"kw_only": True, "forbid_unknown_fields": True, "gc": False}
    if tag is not None:
        options.update(tag_field=tag, tag=tag_value)
    return msgspec.defstruct(name, spec, **options)


def _literal_values(kind: Any) -> tuple[str, ...]:
    values = getattr(kind, "__args__", ())
    if getattr(kind, "__origin__", None) is not Literal or not values:
        raise UnsupportedSchemaError("the member the if tests must be an enum of strings")
    return tuple(values)


def _field_type(name: str, member: dict[str, Any]) -> tuple[Any, str | None]:
    """The msgspec type of one member, and the regex its string values must match, if any."""
    if "const" in member or "enum" in member:
        _only(member, {"const", "enum", "type"})
        values = [member["const"]] if "const" in member else member["enum"]
        if not values or not all(isinstance(v, str) for v in values):
            raise UnsupportedSchemaError(f"{name}: only string enums are translated")
        if member.get("type", "string") != "string":
            raise UnsupportedSchemaError(f"{name}: an enum of strings must have type string")
        return Literal[tuple(values)], None
    kind = member.get("type")
    if kind == "string":
        return _string_type(name, member)
    if kind in ("number", "integer"):
        _only(member, {"type", "minimum", "maximum"})
        bounds = {"ge": member.get("minimum"), "le": member.get("maximum")}
        if kind == "integer" and bounds["le"] is None:
            bounds["le"] = _LARGEST_EXACT_INTEGER  # larger ones reach orjson as floats: full path
        meta = msgspec.Meta(**{k: v for k, v in bounds.items() if v is not None})
        base: type = float if kind == "number" else int
        return Annotated[base, meta], None
    if kind == "object":
        _only(member, {"type", "additionalProperties"})
        if member.get("additionalProperties", True) is not True:
            raise UnsupportedSchemaError(f"{name}: only open objects are translated")
        return dict[str, _Nested], None
    raise UnsupportedSchemaError(f"{name}: type {kind!r} is not translated")


def _string_type(name: str, member: dict[str, Any]) -> tuple[Any, str | None]:
    _only(member, {"type", "minLength", "maxLength", "pattern", "format"})
    bounds = {"min_length": member.get("minLength"), "max_length": member.get("maxLength")}
    meta = msgspec.Meta(**{k: v for k, v in bounds.items() if v is not None})
    fmt = member.get("format")
    if fmt == "date-time":  # a subset of the schema's pattern and of RFC 3339
        return Annotated[str, meta], STRICT_DATE_TIME
    pattern = _python_pattern(name, member.get("pattern"))
    if fmt == "uuid":
        if pattern != UUID_PATTERN:
            raise UnsupportedSchemaError(f"{name}: a uuid needs the hyphenated hexadecimal pattern")
    elif fmt is not None:
        raise UnsupportedSchemaError(f"{name}: format {fmt!r} is not translated")
    return Annotated[str, meta], pattern


_LARGEST_EXACT_INTEGER = 2**53

# The members of an open object, three levels deep. Numbers are read as floats, so a number
# orjson cannot hold (an integer of 309 digits, 1e400) is refused here as there; deeper nesting
# is left to the full path.
_Leaf = str | float | bool | None
_Level2 = _Leaf | list[_Leaf] | dict[str, _Leaf]
_Nested = _Leaf | list[_Level2] | dict[str, _Level2]

UUID_PATTERN = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
"""The schema's uuid pattern (inside ``^...$``): the hyphenated form, the only one it allows."""
_SIMPLE_PATTERN = re.compile(r"\^([\[\]0-9a-zA-Z{},\-|()?:]*)\$")


def _python_pattern(name: str, pattern: str | None) -> str | None:
    """A schema pattern ``^...$`` whose inside means the same in Python and in ECMA 262: ASCII
    character classes, counts and groups only (no ``.``, no escapes, no further anchors)."""
    if pattern is None:
        return None
    simple = _SIMPLE_PATTERN.fullmatch(pattern)
    if simple is None or "(?" in pattern.replace("(?:", ""):
        raise UnsupportedSchemaError(f"{name}: pattern {pattern!r} is not translated")
    return simple.group(1)


def _only(node: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(node) - allowed - _IGNORED_ANNOTATIONS
    if unknown:
        raise UnsupportedSchemaError(f"keywords not translated: {sorted(unknown)}")


@cache
def event_precheck() -> Precheck:
    """The pre-check of the packaged ``tool-call-event`` schema (built once)."""
    schema = load_schema(EVENT_KIND)
    refs = {m["$ref"] for m in schema["properties"].values() if "$ref" in m}
    return build_precheck(schema, {ref: _resolve(SCHEMA_FILES[EVENT_KIND], ref) for ref in refs})


def _resolve(base: str, ref: str) -> dict[str, Any]:
    """A ``file#/$defs/Name`` reference relative to the packaged schema file ``base``."""
    file, _, pointer = ref.partition("#/$defs/")
    path = posixpath.normpath(posixpath.join(posixpath.dirname(base), file))
    definition: dict[str, Any] = all_schemas()[path]["$defs"][pointer]
    return definition


def iter_unsettled_events(
    handle: BinaryIO, counts: list[int], on_progress: ProgressCallback | None = None
) -> Iterator[tuple[int, int, Any, str | None]]:
    """The events of a JSONL stream the pre-check does not settle, as ``(index, line number,
    value, error)`` (as ``toolcall_spec.loading.iter_jsonl`` reads them), for the caller to
    decide; the settled ones are only counted, in ``counts[0]`` (accepted). ``on_progress`` gets
    (events read, accepted, rejected) after each block."""
    precheck = event_precheck()
    line_before = 0  # lines before the block
    events_before = 0  # events (non-blank lines) before the block
    for lines, _ in iter_jsonl_blocks(handle):
        unsettled = precheck.unsettled(lines)
        counts[0] += len(lines) - len(unsettled)
        blanks = 0
        for position in unsettled:
            settled = parse_jsonl_line(lines[position])
            if settled is None:
                blanks += 1
                continue
            yield events_before + position - blanks, line_before + position + 1, *settled
        line_before += len(lines)
        events_before += len(lines) - blanks
        if on_progress is not None:
            on_progress(events_before, counts[0], counts[1])
    record_lines = getattr(handle, "record_lines", None)
    if record_lines is not None:  # a piece of a file (ingest_parallel) renumbers the next ones
        record_lines(line_before)
