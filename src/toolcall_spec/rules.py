"""The one rule the whole package exists for, as code.

A tool result is an error exactly when its ``isError`` member is the JSON boolean ``true``.
Absent, ``false``, ``"true"``, ``1``, ``1.0``, ``null``: not an error. Every caller in this package
(fixture replay, run-create checks, classification, promotion, conformance) asks this module.
"""

from __future__ import annotations

from collections.abc import Mapping


def is_literal_true(value: object) -> bool:
    """``True`` only for the boolean ``True`` itself (``1`` and ``1.0`` are not)."""
    return value is True


def is_tool_error(result: object) -> bool:
    """Whether a tool result (a ``CallToolResult``-shaped mapping, or a fixture entry) reports an
    error: its ``isError`` member is the JSON boolean ``true``. Anything that is not a mapping is
    not an error."""
    return isinstance(result, Mapping) and is_literal_true(result.get("isError"))
