"""From what a tool call produced to the ``tool_call`` fields ``status``, ``error_category`` and
``error_message``.

Three ways a call can end, three classifiers:

- the handler returned a result: ``classify_result``. An error exactly when ``isError`` is
  the JSON boolean ``true`` (``toolcall_spec.rules.is_tool_error``); category ``tool_error``.
  The result may be the wire mapping (``isError``), an ``mcp`` SDK ``CallToolResult`` or this
  package's generated model: ``wire_result`` turns each into what the client receives.
- the handler raised: ``classify_exception``; category ``unknown``, the exception's own
  message (what the server knows, not the generic text an MCP client is shown).
- the call failed before the handler ran (unknown tool, invalid arguments):
  ``classify_pre_handler_failure``; category ``validation``.

Every message goes through ``error_message``: cut to ``MESSAGE_SAFETY_CEILING``, PII
stripped, then clamped to ``MAX_ERROR_MESSAGE_LENGTH``. Stripping before the clamp means a
clamp can only cut a redaction token, never leave half of an address readable.

With output capture off, a message taken from the result (the ``tool_error`` text, the
pre-handler text) is dropped, because it is output the model saw; ``status`` and
``error_category`` always stay. A raised exception's message is not output and stays.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, overload

from toolcall_spec.analytics.pii import safe_cut, strip_pii
from toolcall_spec.rules import is_tool_error

MAX_ERROR_MESSAGE_LENGTH = 500
"""Longest ``error_message`` an event carries (characters)."""

MESSAGE_SAFETY_CEILING = 4_000
"""Longest text PII stripping is run on; a longer message is cut here first."""

Status = Literal["success", "error"]
ErrorCategory = Literal[
    "auth", "validation", "timeout", "rate_limit", "server", "unknown", "tool_error"
]


@dataclass(frozen=True, slots=True)
class Classification:
    """The derived ``tool_call`` fields. ``error_category`` is set exactly when ``status`` is
    ``error``; ``error_message`` only then, and only when there is a message."""

    status: Status
    error_category: ErrorCategory | None = None
    error_message: str | None = None

    @property
    def is_error(self) -> bool:
        return self.status == "error"

    def fields(self) -> dict[str, str]:
        """The members to put on an event: ``status``, plus the error members that apply."""
        out: dict[str, str] = {"status": self.status}
        if self.error_category is not None:
            out["error_category"] = self.error_category
        if self.error_message is not None:
            out["error_message"] = self.error_message
        return out


SUCCESS = Classification("success")


class WireModel(Protocol):
    """A pydantic model of a ``CallToolResult``: the ``mcp`` SDK's (``mcp.types.CallToolResult``,
    attribute ``is_error``, wire name ``isError``) or this package's generated model."""

    def model_dump(self, *, mode: str = ..., by_alias: bool | None = ...) -> dict[str, Any]: ...


ToolResult = Mapping[str, Any] | WireModel
"""What ``classify_result`` accepts: the wire mapping, or a model that serializes to it."""

SNAKE_CASE_HINT = (
    "a result mapping with snake_case 'is_error' and no 'isError' is not what the client "
    "receives; pass the model itself or its model_dump(by_alias=True)"
)


def wire_result(result: ToolResult) -> Mapping[str, Any]:
    """The result as the client receives it. A model is serialized by alias in JSON mode, so its
    ``isError`` is the value the SDK sends (pydantic has already coerced what it was built from:
    ``CallToolResult(is_error="true")`` holds, and sends, ``true``). A mapping is taken as the
    wire form; one that only has the snake_case ``is_error`` raises ``TypeError``, because
    reading it as a wire result would count an error as a success."""
    if isinstance(result, Mapping):
        if "is_error" in result and "isError" not in result:
            raise TypeError(SNAKE_CASE_HINT)
        return result
    dump = getattr(result, "model_dump", None)
    if not callable(dump):
        kind = type(result).__name__
        raise TypeError(f"expected a CallToolResult (a mapping or a pydantic model), got {kind}")
    wire = dump(mode="json", by_alias=True)
    if not isinstance(wire, Mapping):
        raise TypeError(f"{type(result).__name__}.model_dump() did not return a mapping")
    return wire


def error_message(text: str | None) -> str | None:
    """``text`` trimmed, cut to the safety ceiling, PII-stripped and clamped; ``None`` when
    nothing is left."""
    if text is None:
        return None
    text = strip_pii(safe_cut(text.strip(), MESSAGE_SAFETY_CEILING))[
        :MAX_ERROR_MESSAGE_LENGTH
    ].strip()
    return text or None


def first_text(result: Mapping[str, Any]) -> str | None:
    """The ``text`` of the first content item of type ``text``, or ``None``."""
    content = result.get("content")
    if not isinstance(content, list):
        return None
    for item in content:
        if isinstance(item, Mapping) and item.get("type") == "text":
            text = item.get("text")
            return text if isinstance(text, str) else None
    return None


@overload
def classify_result(
    result: Mapping[str, Any], *, capture_output: bool = True
) -> Classification: ...
@overload
def classify_result(result: WireModel, *, capture_output: bool = True) -> Classification: ...
def classify_result(result: ToolResult, *, capture_output: bool = True) -> Classification:
    """Classify a returned ``CallToolResult``: the wire mapping, an ``mcp`` SDK result object or
    the generated model (see ``wire_result``). Only ``isError: true`` is an error;
    ``"true"``, ``1``, ``false``, ``null`` and a missing flag are successes."""
    wire = wire_result(result)
    if not is_tool_error(wire):
        return SUCCESS
    message = error_message(first_text(wire)) if capture_output else None
    return Classification("error", "tool_error", message)


def exception_text(error: BaseException) -> str:
    """The exception's message, or its type name when it has none or when ``str()`` raises (an
    exception's ``__str__`` is user code; the call must still be counted)."""
    try:
        text = str(error).strip()
    except Exception:
        text = ""
    return text or type(error).__name__


def classify_exception(error: BaseException | str) -> Classification:
    """Classify a raised exception (or its message): category ``unknown``, the exception's own
    message. An exception without a message, or whose ``str()`` raises, is named by its type."""
    text = error if isinstance(error, str) else exception_text(error)
    return Classification("error", "unknown", error_message(text))


def classify_pre_handler_failure(
    message: str | None, *, capture_output: bool = True
) -> Classification:
    """Classify a call refused before the handler ran (unknown tool, invalid arguments)."""
    return Classification("error", "validation", error_message(message) if capture_output else None)


def classify_server_failure(message: str | None, *, capture_output: bool = True) -> Classification:
    """Classify a call whose handler returned but whose result could not be delivered as it was
    (e.g. it failed output conversion): category ``server``."""
    return Classification("error", "server", error_message(message) if capture_output else None)
