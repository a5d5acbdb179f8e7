"""Schema rules the model generator drops silently, carried by hand.

``JsonModel`` is the base of every generated model (``base-class`` in pyproject.toml): it
restores JSON Schema's reading of numbers and patterns where pydantic's strict types differ.
``Timestamp`` is the type of every ``date-time`` member (``type-overrides``). Each other class
here is the base of one generated model (``base-class-map``) and inherits ``JsonModel``. Each
rule runs before field validation on the raw mapping, so it sees exactly the members the document
carries, as the JSON Schema does. tests/schemas/test_models_strict.py proves every rule in both
the JSON Schema validator and the models.
"""

from __future__ import annotations

import re
import types
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin
from urllib.parse import urljoin

from pydantic import AfterValidator, BaseModel, RootModel, StrictStr, model_validator

if TYPE_CHECKING:
    import jsonschema_rs


def _members(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {}


class JsonModel(BaseModel):
    """Base of every generated model.

    - JSON Schema's ``integer`` is a number with no fractional part, so ``1.0`` is an integer;
      pydantic's ``StrictInt`` refuses it. Integral floats are turned into ints for integer
      members (booleans and strings stay refused by ``StrictInt``).
    - JSON Schema patterns are ECMA-262: ``$`` matches only at the very end. Python's ``re``
      (the engine of models with ``regex_engine='python-re'``, needed for lookaheads) also
      matches ``$`` before a final newline, so those patterns are checked again with ``\\Z``.
    """

    @model_validator(mode="before")
    @classmethod
    def _json_schema_numbers_and_patterns(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        for name, pattern in _python_re_patterns(cls).items():
            value = data.get(name)
            if isinstance(value, str) and pattern.search(value) is None:
                raise ValueError(f"{name} should match pattern {pattern.pattern!r}")
        for name, (patterns, literals) in _python_re_alternatives(cls).items():
            value = data.get(name)
            if not isinstance(value, str) or value in literals:
                continue  # another type is the field's own check to report
            if not any(p.search(value) for p in patterns):
                raise ValueError(f"{name} matches neither a listed value nor a pattern")
        integral = {
            name: int(value)
            for name in _integer_members(cls)
            if type(value := data.get(name)) is float and value.is_integer()
        }
        return {**data, **integral} if integral else data


def _input_names(model: type[BaseModel]) -> dict[str, Any]:
    """Each field's name in the document (its alias when it has one) and its field info."""
    return {field.alias or name: field for name, field in model.model_fields.items()}


@cache
def _integer_members(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(
        name for name, field in _input_names(model).items() if _is_integer_type(field.annotation)
    )


def _is_integer_type(annotation: Any) -> bool:
    """``int`` (strict or not), an optional int, or a ``Literal`` of ints only."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_integer_type(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_is_integer_type(arm) for arm in get_args(annotation))
    if origin is Literal:
        values = get_args(annotation)
        return bool(values) and all(type(v) is int for v in values)
    return annotation is int


@cache
def _python_re_patterns(model: type[BaseModel]) -> dict[str, re.Pattern[str]]:
    if model.model_config.get("regex_engine") != "python-re":
        return {}
    found: dict[str, re.Pattern[str]] = {}
    for name, field in _input_names(model).items():
        for constraint in field.metadata:
            pattern = getattr(constraint, "pattern", None)
            if isinstance(pattern, str) and pattern.endswith("$") and not pattern.endswith("\\$"):
                found[name] = _end_anchored(pattern)
    return found


def _end_anchored(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern[:-1] + r"\Z")


@cache
def _python_re_alternatives(
    model: type[BaseModel],
) -> dict[str, tuple[tuple[re.Pattern[str], ...], frozenset[str]]]:
    """Members typed ``Literal[...] | <patterned root model>`` (a registered value or a vendor
    pattern) whose root model checks its pattern with Python's ``re``: the pattern again with
    ``\\Z``, beside the listed values."""
    found: dict[str, tuple[tuple[re.Pattern[str], ...], frozenset[str]]] = {}
    for name, field in _input_names(model).items():
        patterns: list[re.Pattern[str]] = []
        literals: set[str] = set()
        for arm in _union_arms(field.annotation):
            if get_origin(arm) is Literal:
                literals.update(v for v in get_args(arm) if isinstance(v, str))
            elif isinstance(arm, type) and issubclass(arm, RootModel):
                if arm.model_config.get("regex_engine") != "python-re":
                    continue
                for constraint in arm.model_fields["root"].metadata:
                    pattern = getattr(constraint, "pattern", None)
                    if isinstance(pattern, str) and pattern.endswith("$"):
                        patterns.append(_end_anchored(pattern))
        if patterns:
            found[name] = (tuple(patterns), frozenset(literals))
    return found


def _union_arms(annotation: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _union_arms(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return [arm for part in get_args(annotation) for arm in _union_arms(part)]
    return [annotation]


_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))\Z"
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_LAST_MINUTE_OF_DAY = 23 * 60 + 59


def _is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def check_date_time(value: str) -> str:
    """The ``date-time`` format beyond the schema's pattern: a real calendar day, and second 60
    only in the last minute of a UTC day (a leap second), as RFC 3339 and jsonschema-rs read it.
    The schema's pattern already fixed the shape; this is what a pattern cannot express."""
    match = _DATE_TIME.match(value)
    if match is None:
        raise ValueError("not an RFC 3339 date-time with a time zone")
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    if not 1 <= month <= 12:
        raise ValueError(f"{value[:10]} has no month {month}")
    days = 29 if month == 2 and _is_leap_year(year) else _DAYS_IN_MONTH[month - 1]
    if not 1 <= day <= days:
        raise ValueError(f"{value[:10]} is not a calendar day")
    if second == 60:
        sign, offset_hours, offset_minutes = match.groups()[6:]
        offset = 0 if sign is None else int(offset_hours) * 60 + int(offset_minutes)
        utc_minute = hour * 60 + minute - (offset if sign == "+" else -offset)
        if utc_minute % (24 * 60) != _LAST_MINUTE_OF_DAY:
            raise ValueError("second 60 is a leap second: only in the last minute of a UTC day")
    return value


Timestamp = Annotated[StrictStr, AfterValidator(check_date_time)]
"""A ``date-time`` member (schemas/common/formats.schema.json ``Timestamp``); the generated field
adds the schema's pattern."""


class ToolResponseRules(JsonModel):
    """``dependentRequired: {argsMatch: [args]}`` on a fixture entry."""

    @model_validator(mode="before")
    @classmethod
    def _args_match_needs_args(cls, data: Any) -> Any:
        members = _members(data)
        if "argsMatch" in members and "args" not in members:
            raise ValueError("argsMatch is only allowed together with args")
        return data


class AgentToolReturnedRules(JsonModel):
    """The ``status`` conditionals of ``agent.tool-returned`` the generator drops."""

    @model_validator(mode="before")
    @classmethod
    def _status_agrees_with_members(cls, data: Any) -> Any:
        members = _members(data)
        status = members.get("status")
        if status == "ok" and "error" in members:
            raise ValueError("status ok cannot carry error")
        if status in ("forbidden", "rate_limited") and "durationMs" in members:
            raise ValueError(f"status {status} carries no durationMs")
        return data


class ToolCallEventRules(JsonModel):
    """``error_category`` and ``error_message`` only on ``status: error`` (the ``else``)."""

    @model_validator(mode="before")
    @classmethod
    def _error_fields_only_on_error(cls, data: Any) -> Any:
        members = _members(data)
        if members.get("status") != "error":
            present = [name for name in ("error_category", "error_message") if name in members]
            if present:
                raise ValueError(f"{', '.join(present)} only allowed when status is error")
        return data


class CapabilityRecordRules(JsonModel):
    """A capability record's lifetime (``RecordLifetime``): a ``stable`` record has no ``until``;
    an ``experimental`` or ``deprecated`` one must carry it."""

    @model_validator(mode="before")
    @classmethod
    def _until_agrees_with_status(cls, data: Any) -> Any:
        members = _members(data)
        status = members.get("status")
        if status == "stable" and "until" in members:
            raise ValueError("a stable capability record has no until")
        if status in ("experimental", "deprecated") and "until" not in members:
            raise ValueError(f"an {status} capability record must say until when it ends")
        return data


class SubjectRules(JsonModel):
    """The lane/kind conditionals of a run owner's subject (and of each actor in its chain)."""

    @model_validator(mode="before")
    @classmethod
    def _lane_agrees_with_kind(cls, data: Any) -> Any:
        members = _members(data)
        lane, kind = members.get("lane"), members.get("kind")
        if (
            (kind == "anonymous") != (lane == "anonymous")
            and "lane" in members
            and "kind" in members
        ):
            raise ValueError("an anonymous subject is on the anonymous lane, and only it")
        key_class_lane = lane in ("saml", "scim")
        if key_class_lane and "keyClass" not in members:
            raise ValueError(f"the {lane} lane requires keyClass")
        if "lane" in members and not key_class_lane and "keyClass" in members:
            raise ValueError("keyClass is only allowed on the saml and scim lanes")
        return data


_UNSUPPORTED_STREAM_MODES = frozenset({"values", "updates", "messages", "debug"})


def _is_str_list(value: Any, allowed: frozenset[str] | None = None) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(v, str) and (allowed is None or v in allowed) for v in value)
    )


def _is_projection_details(members: dict[str, Any]) -> bool:
    """The closed ``payload_unprojectable`` details shape ``{type, keys, eventId?, sequence?}``."""
    if not {"type", "keys"} <= members.keys() <= {"type", "keys", "eventId", "sequence"}:
        return False
    sequence = members.get("sequence", 0)
    event_id = members.get("eventId", "0" * 16)
    return (
        isinstance(members["type"], str)
        and _is_str_list(members["keys"])
        and type(sequence) is int
        and sequence >= 0
        and isinstance(event_id, str)
        and _event_id_pattern().fullmatch(event_id) is not None
    )


@cache
def _event_id_pattern() -> re.Pattern[str]:
    """The ``EventId`` grammar, read from the packaged schema (its one source)."""
    from toolcall_spec.catalog import all_schemas  # noqa: PLC0415

    pattern: str = all_schemas()["common/ids.schema.json"]["$defs"]["EventId"]["pattern"]
    return re.compile(pattern.removeprefix("^").removesuffix("$"))


class ErrorDetailsRules(JsonModel):
    """Error-envelope ``details`` shaped like one of OpenWOP's code-specific details is refused
    (the schema's ``not: {anyOf: [...]}``), as upstream's ``oneOf`` with a catch-all refuses it."""

    @model_validator(mode="before")
    @classmethod
    def _not_a_code_specific_shape(cls, data: Any) -> Any:
        members = _members(data)
        if "supported" in members and _is_str_list(members["supported"], _UNSUPPORTED_STREAM_MODES):
            raise ValueError("details shaped like unsupported_stream_mode details are refused")
        if isinstance(members.get("runStatus"), str):
            raise ValueError("details shaped like run_state_conflict details are refused")
        if _is_projection_details(members):
            raise ValueError("details shaped like payload_unprojectable details are refused")
        return data


class RunEventRules(JsonModel):
    """The payload of a known event type is checked against that type's payload schema, as the
    run-event schema's own ``if``/``then`` branches name it. The check goes through the packaged
    schemas, not the generated payload models: the models import this module, so importing them
    here would close a circle."""

    @model_validator(mode="before")
    @classmethod
    def _payload_matches_type(cls, data: Any) -> Any:
        members = _members(data)
        event_type = members.get("type")  # any JSON value: the type's own check reports it
        check = _payload_checks().get(event_type) if isinstance(event_type, str) else None
        payload = members.get("payload")
        if check is not None and isinstance(payload, dict):
            error = next(iter(check.iter_errors(payload)), None)
            if error is not None:
                raise ValueError(f"payload of a {event_type} event: {error.message}")
        return data


@cache
def _payload_checks() -> dict[str, jsonschema_rs.Validator]:
    """A compiled check per event type with a payload schema, read from the run-event schema."""
    import jsonschema_rs  # noqa: PLC0415  (models load without the validator until first use)

    from toolcall_spec.catalog import all_schemas, registry  # noqa: PLC0415

    schema = all_schemas()["events/run-event.schema.json"]
    checks: dict[str, jsonschema_rs.Validator] = {}
    for branch in schema["allOf"]:
        event_type = branch["if"]["properties"]["type"]["const"]
        reference = urljoin(schema["$id"], branch["then"]["properties"]["payload"]["$ref"])
        checks[event_type] = jsonschema_rs.Draft202012Validator(
            {"$ref": reference}, registry=registry(), validate_formats=True
        )
    return checks
