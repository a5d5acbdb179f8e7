"""From what a tool call produced to the ``tool_call`` fields ``status``, ``error_category`` and
``error_message``.

Three ways a call can end, three classifiers:

- the handler returned a result: ``classify_result``. An error exactly when ``isError`` is
  the JSON boolean ``true`` (``toolcall_spec.rules.is_tool_error``); category ``tool_error``.
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

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolcall_spec.analytics.pii import strip_pii
from toolcall_spec.rules import is_tool_error

MAX_ERROR_MESSAGE_LENGTH = 500
"""Longest ``error_message`` an event carries (characters)."""

MESSAGE_SAFETY_CEILING = 4_000
"""Longest text PII stripping is run on; a longer message is cut here first."""

Status = Literal["success", "error"]
ErrorCategory = Literal[
    "auth", "validation", "timeout", "rate_limit", "server", "unknown", "tool_error"
]

# A space no PII can span: PII that holds whitespace (cards, phones, spaced SSNs, IBANs) only has
# single spaces between digits, capitals and parentheses.
_SAFE_SPACE = re.compile(r"(?<![A-Z0-9()])\s|\s(?![A-Z0-9()])")


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


def error_message(text: str | None) -> str | None:
    """``text`` trimmed, cut to the safety ceiling, PII-stripped and clamped; ``None`` when
    nothing is left."""
    if text is None:
        return None
    text = strip_pii(_cut(text.strip()))[:MAX_ERROR_MESSAGE_LENGTH].strip()
    return text or None


def _cut(text: str) -> str:
    """``text`` cut to the safety ceiling, at the last space no PII can span when there is one:
    half a card number or address would not be recognised, so must not be kept."""
    if len(text) <= MESSAGE_SAFETY_CEILING:
        return text
    # One character past the cut, so a space at the cut sees its right-hand neighbour.
    head = text[: MESSAGE_SAFETY_CEILING + 2]
    cut = MESSAGE_SAFETY_CEILING
    for space in _SAFE_SPACE.finditer(head):
        if space.start() <= MESSAGE_SAFETY_CEILING:
            cut = space.start()
    return head[:cut]


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


def classify_result(result: object, *, capture_output: bool = True) -> Classification:
    """Classify a returned ``CallToolResult`` (the JSON mapping). Only ``isError: true`` is an
    error; ``"true"``, ``1``, ``false``, ``null`` and a missing flag are successes."""
    if not is_tool_error(result):
        return SUCCESS
    assert isinstance(result, Mapping)  # is_tool_error holds only for mappings
    message = error_message(first_text(result)) if capture_output else None
    return Classification("error", "tool_error", message)


def classify_exception(error: BaseException | str) -> Classification:
    """Classify a raised exception (or its message): category ``unknown``, the exception's own
    message. An exception without a message is named by its type."""
    text = error if isinstance(error, str) else (str(error).strip() or type(error).__name__)
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
