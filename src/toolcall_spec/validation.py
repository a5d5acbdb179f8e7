"""``validate(document, kind=None)``: every problem of a document, each with a path in the
``tasks[0].fixtures.toolResponses[0].isError`` form, from the packaged JSON Schemas (checked with
jsonschema-rs, formats included) plus the package's warnings for valid but suspicious documents."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

import jsonschema_rs

from toolcall_spec.catalog import KINDS, Kind, all_schemas, infer_kind, is_kind, validator
from toolcall_spec.json_paths import ROOT, format_path, printable
from toolcall_spec.json_values import milliseconds
from toolcall_spec.problems import Problem
from toolcall_spec.rules import is_tool_error

MAX_MESSAGE_LENGTH = 300
"""Most characters of a message. Messages quote the offending value; a huge value is shortened so
a problem stays one readable line, and the words that say what is wrong are kept whole."""

MAX_DEPTH = 128
"""Deepest nesting of arrays and objects accepted in any document (``[]`` is 1 level, ``[[]]``
2). Whatever the package writes wraps a document's values in a few levels of its own (an event
around a fixture response), and stays far below the 254 levels orjson can write and Python's
recursion limit; deeper documents are refused here, before anything copies or replays them."""

INTEGER_RANGE = range(-(2**63), 2**64)
"""Integers a document may hold: what JSON writers of 64-bit integers (orjson among them) can
write. Only the Python API can hand over larger ones; parsed JSON never holds them."""


class UnknownKindError(ValueError):
    """The kind named is not one this package has a schema for."""


def validate(document: Any, kind: Kind | str | None = None) -> list[Problem]:
    """Return the problems of ``document`` (empty when valid). ``kind`` is inferred when ``None``;
    a document whose kind cannot be inferred gets one problem saying so."""
    resolved = _resolve_kind(document, kind)
    if resolved is None:
        return [
            Problem(
                ROOT, f"cannot tell what kind of document this is; name one of: {', '.join(KINDS)}"
            )
        ]
    problems = structure_problems(document) or schema_problems(document, resolved)
    if problems:
        return problems
    return list(_warnings(document, resolved))


def structure_problems(document: Any, max_depth: int = MAX_DEPTH) -> list[Problem]:
    """What makes a document unusable whatever its kind: nesting deeper than ``max_depth``, or
    an integer outside ``INTEGER_RANGE``. Walked without recursion, so any depth is safe."""
    if within_structure_limits(document, max_depth):
        return []
    return _first_structure_problem(document, max_depth)


def within_structure_limits(document: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``structure_problems`` finds nothing, answered level by level without building
    a path per node (about a fifth of the cost): every ingested event pays for this check,
    and only a document that fails it needs the path of its first problem."""
    level: list[Any] = [document]
    depth = 0
    while level:
        nested: list[Any] = []
        for node in level:
            kind = type(node)  # exact types first: most nodes are leaves of parsed JSON
            if kind is str or kind is float or kind is bool or node is None:
                continue
            if kind is int:
                if node not in INTEGER_RANGE:
                    return False
            elif isinstance(node, (dict, list)):
                if depth == max_depth:
                    return False
                nested.extend(node.values() if isinstance(node, dict) else node)
        level = nested
        depth += 1
    return True


def _first_structure_problem(document: Any, max_depth: int) -> list[Problem]:
    """The first structure problem in document order, with its path."""
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(document, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if type(node) is int and node not in INTEGER_RANGE:
            message = f"integer {_digits(node)} is beyond 64 bits; JSON readers cannot all hold it"
            return [Problem(format_path(path), message)]
        if not isinstance(node, (dict, list)):
            continue
        if depth == max_depth:
            message = f"nested deeper than {max_depth} levels, this package's limit"
            return [Problem(format_path(path), message)]
        items = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((child, depth + 1, (*path, key)) for key, child in reversed(list(items)))
    return []


def _digits(number: int) -> str:
    return str(number) if abs(number) < 10**60 else f"with {len(str(abs(number)))} digits"


def _resolve_kind(document: Any, kind: Kind | str | None) -> Kind | None:
    if kind is None:
        return infer_kind(document)
    if not is_kind(kind):
        raise UnknownKindError(f"unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return kind


def schema_problems(document: Any, kind: Kind) -> list[Problem]:
    """The schema's verdict alone, as problems. ``is_valid`` first: valid documents, the common
    case, never pay for error collection. A document past the structure limits that the schema
    rejects gets those limits as its problems: jsonschema-rs cannot report errors on values
    nested past its own recursion limit."""
    try:
        if validator(kind).is_valid(document):
            return []
        return structure_problems(document) or schema_error_problems(document, kind)
    except ValueError:  # jsonschema-rs: "Recursion limit reached"
        return structure_problems(document) or [Problem(ROOT, "nested too deeply to validate")]


def schema_error_problems(document: Any, kind: Kind) -> list[Problem]:
    """The schema's errors for a document within the structure limits that fails the schema of
    ``kind``, each with its path."""
    return validator_problems(validator(kind), document)


def validator_problems(checker: jsonschema_rs.Validator, document: Any) -> list[Problem]:
    """Every error ``checker`` finds in ``document``, each with its path and a message on one
    line of bounded length."""
    return [
        Problem(format_path(error.instance_path), _message(error))
        for error in checker.iter_errors(document)
    ]


def _message(error: jsonschema_rs.ValidationError) -> str:
    kind = type(error.kind).__name__
    schema_path = list(error.schema_path)
    if kind == "Not" and schema_path[-1:] == ["not"]:
        message = "members that are mutually exclusive appear together"
        required = getattr(error.kind, "schema", {})
        if isinstance(required, dict) and isinstance(required.get("required"), list):
            message = f"{' and '.join(map(str, required['required']))} are mutually exclusive"
    elif kind == "FalseSchema" and error.instance_path:
        member = error.instance_path[-1]
        message = f"{member} is not allowed here"
        if "else" in schema_path or "then" in schema_path:
            message += " (a condition on the other members excludes it)"
    elif kind == "Required" and "dependentRequired" in schema_path:
        message = _dependent_required(error)
    elif kind == "Enum":
        allowed = json.dumps(list(getattr(error.kind, "options", ())))[1:-1]  # one call: a, b
        message = f"{_rendered(error.instance)} is not one of the allowed values: {allowed}"
    else:
        message = error.message
    message = printable(message)
    if len(message) <= MAX_MESSAGE_LENGTH:
        return message
    return _within_length(message, printable(_rendered(error.instance)))


def _rendered(value: Any) -> str:
    """``value`` written as jsonschema-rs quotes an instance in its messages: compact JSON,
    members in key order, characters unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


_SHORTEST_CUT = 16
"""Fewest characters a shortened value keeps: below that it says nothing of what was sent."""


def _within_length(message: str, value: str, limit: int = MAX_MESSAGE_LENGTH) -> str:
    """``message`` in at most ``limit`` characters, the reason kept whole: the ``value`` it
    quotes is shortened (``"xxxxxxxx…" is longer than 500 characters``); where the value is not
    found as written, the longest word (a value written another way, a long member name) is;
    only a message whose words alone are too long loses its middle."""
    if len(message) <= limit:
        return message
    excess = len(message) - limit
    at = _quoted_at(message, value)
    if at < 0 or len(value) - excess < _SHORTEST_CUT:
        longest = max(message.split() or [""], key=len)
        at, value = message.find(longest), longest
    if len(value) - excess >= _SHORTEST_CUT:
        return message[:at] + _shortened(value, len(value) - excess) + message[at + len(value) :]
    head = (limit - 1) // 2
    return message[:head] + "…" + message[len(message) - (limit - 1 - head) :]


def _quoted_at(message: str, value: str) -> int:
    """Where ``message`` quotes ``value``: messages quote it first or last (a value found only
    inside a quoted schema could be a part of it)."""
    if message.startswith(value):
        return 0
    if message.endswith(value):
        return len(message) - len(value)
    return message.find(value)


def _shortened(value: str, length: int) -> str:
    """``value`` in ``length`` characters, ``…`` where it was cut; a string keeps its closing
    quote, so it still reads as a string."""
    if value[:1] == value[-1:] == '"' and len(value) > 1:
        return value[: length - 2] + '…"'
    return value[: length - 1] + "…"


def _dependent_required(error: jsonschema_rs.ValidationError) -> str:
    """Names the member that needs the missing one (``argsMatch`` needs ``args``)."""
    missing = getattr(error.kind, "property", None)
    present = error.instance if isinstance(error.instance, dict) else {}
    needing = [m for m in _dependents_of(str(missing)) if m in present]
    if not needing:
        return f"{error.message}, because a member that depends on it is present"
    return f"{json.dumps(missing)} is required because {json.dumps(needing[0])} is present"


@cache
def _dependents_of(member: str) -> tuple[str, ...]:
    """Every member that some packaged schema's ``dependentRequired`` makes need ``member``."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            rules = node.get("dependentRequired")
            if isinstance(rules, dict):
                found.extend(k for k, v in rules.items() if isinstance(v, list) and member in v)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(all_schemas())
    return tuple(dict.fromkeys(found))


# Warnings: valid documents that are almost certainly mistakes. One function per rule.


def _suite_success_entry_carries_is_error(document: Any) -> Iterator[Problem]:
    """A success entry whose opaque ``response`` has an ``isError`` key is served as a success
    (RFC 0245 §A keeps ``response`` opaque); it is almost always a recording mistake. A recorded
    ``isError: false`` says the same as the entry, so it is left alone."""
    for t, task in enumerate(document.get("tasks", [])):
        entries = (task.get("fixtures") or {}).get("toolResponses", [])
        for e, entry in enumerate(entries):
            response = entry.get("response")
            if is_tool_error(entry) or not isinstance(response, dict):
                continue
            if "isError" in response and response["isError"] is not False:
                where: list[str | int] = [
                    "tasks",
                    t,
                    "fixtures",
                    "toolResponses",
                    e,
                    "response",
                    "isError",
                ]
                yield Problem(
                    format_path(where),
                    "this entry is served as a success although its response carries isError; "
                    "set the entry's own isError: true to replay a recorded failure",
                    "warning",
                )


DEPRECATED_ON_MISS = "error"
"""This package's 0.1 spelling of ``onMiss: fail`` (upstream's word, RFC 0252)."""


def _suite_deprecated_on_miss(document: Any) -> Iterator[Problem]:
    """``onMiss: error`` still means ``fail``; it validates, with a warning to rename it."""
    for t, task in enumerate(document.get("tasks", [])):
        if (task.get("fixtures") or {}).get("onMiss") == DEPRECATED_ON_MISS:
            yield Problem(
                format_path(["tasks", t, "fixtures", "onMiss"]),
                'onMiss "error" is deprecated: it means "fail", the spelling OpenWOP uses; '
                'write "fail"',
                "warning",
            )


def _recorded_mcp_members(
    document: Any, member: str
) -> Iterator[tuple[list[str | int], dict[str, Any], Any]]:
    """Where each task keeps ``member`` of what a recording put in its opaque input
    (``input.mcp``), the task, and the value."""
    for t, task in enumerate(document.get("tasks", [])):
        task_input = task.get("input")
        mcp_part = task_input.get("mcp") if isinstance(task_input, dict) else None
        if isinstance(mcp_part, dict) and member in mcp_part:
            yield ["tasks", t, "input", "mcp", member], task, mcp_part[member]


def recorded_tool_list_problems(document: Any) -> Iterator[Problem]:
    """The tool list a recording keeps in a task's opaque input (``input.mcp.tools``, MCP
    ``Tool`` objects, what ``serve-fixtures`` lists and ``verify`` compares with the live
    server's) must be one: a list of objects, each with a non-empty string ``name``, unique in the
    list, and an object ``inputSchema``. The suite schema cannot say so (OpenWOP keeps ``input``
    opaque): a warning for ``validate``, an error for the commands that read the list."""
    for where, _task, tools in _recorded_mcp_members(document, "tools"):
        if not isinstance(tools, list):
            yield _input_warning(where, "the recorded tool list is not an array")
            continue
        names: set[str] = set()
        for i, tool in enumerate(tools):
            yield from _recorded_tool_problems([*where, i], tool, names)


def _recorded_tool_problems(
    where: list[str | int], tool: Any, names: set[str]
) -> Iterator[Problem]:
    if not isinstance(tool, dict):
        yield _input_warning(where, "a recorded tool is an object (an MCP Tool)")
        return
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        yield _input_warning([*where, "name"], "a recorded tool needs a non-empty name")
    elif name in names:
        yield _input_warning([*where, "name"], f"the tool {name!r} is listed twice")
    else:
        names.add(name)
    if not isinstance(tool.get("inputSchema"), dict):
        yield _input_warning([*where, "inputSchema"], "a recorded tool's inputSchema is an object")


def _input_warning(where: list[str | int], message: str) -> Problem:
    return Problem(format_path(where), message, "warning")


def recorded_durations_problems(document: Any) -> Iterator[Problem]:
    """The durations ``record --timings`` keeps (``input.mcp.durationsMs``, what
    ``serve-fixtures --pace recorded`` waits) are one per fixture entry, in entry order, each a
    number of milliseconds (0 or more) or ``null``: a warning otherwise, as for the tool list."""
    for where, task, durations in _recorded_mcp_members(document, "durationsMs"):
        entries = (task.get("fixtures") or {}).get("toolResponses", [])
        if not isinstance(durations, list) or len(durations) != len(entries):
            message = f"the recorded durations are an array of {len(entries)}, one per entry"
            yield _input_warning(where, message)
            continue
        for i, value in enumerate(durations):
            if value is not None and milliseconds(value) is None:
                yield _input_warning([*where, i], "a duration is milliseconds (>= 0) or null")


WARNINGS: dict[Kind, tuple[Callable[[Any], Iterable[Problem]], ...]] = {
    "suite": (
        _suite_success_entry_carries_is_error,
        _suite_deprecated_on_miss,
        recorded_tool_list_problems,
        recorded_durations_problems,
    ),
}


def _warnings(document: Any, kind: Kind) -> Iterator[Problem]:
    for rule in WARNINGS.get(kind, ()):
        yield from rule(document)
