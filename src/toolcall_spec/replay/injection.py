"""Faults injected into a replay (``toolcall-spec serve-fixtures --inject SPEC``): chosen calls are
answered with a tool error the recording never had, or answered late, to see how an agent copes.

A spec is ``KEY=VALUE`` parts joined by commas, e.g. ``tool=lookup,call=2,error=upstream down``
or ``tool=*,delay=1.5s``:

- ``tool``: the tool name, or ``*`` for every tool (the default);
- ``call``: which call of that tool, counted from 1 (with ``tool=*``, of all calls), or ``*`` for
  every one (the default);
- ``error``: answer with a tool error (``isError: true``) whose text is VALUE; a bare ``error``
  (no ``=``) uses a text naming the injection;
- ``delay``: wait this long before answering: ``500ms``, ``2s``, ``1.5s`` (to the millisecond,
  at most an hour). A timeout is a delay longer than the client waits.

At least one of ``error`` and ``delay``; no key twice; no VALUE holds a comma. This module is the
grammar and the selection only: plain Python, no MCP, so the command line parses specs before
anything else is loaded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "EVERY",
    "MAX_DELAY_MS",
    "InjectSpecError",
    "Injection",
    "parse_injection",
    "selected",
]

EVERY: Final = "*"
"""``tool=*`` / ``call=*``: every tool, every call."""

MAX_DELAY_MS: Final = 3_600_000
"""An hour: a longer delay is a typo, not a test."""

KEYS: Final = ("tool", "call", "error", "delay")

_DURATION = re.compile(r"(?P<number>\d+(?:\.\d{1,3})?)(?P<unit>ms|s)")
_ORDINAL = re.compile(r"[1-9]\d{0,8}")


class InjectSpecError(ValueError):
    """A spec that does not parse; the message names the offending part."""


@dataclass(frozen=True, slots=True)
class Injection:
    """One parsed ``--inject`` spec."""

    tool: str | None = None
    """The tool it selects; ``None``: every tool."""
    call: int | None = None
    """The 1-based ordinal of the selected call (among the tool's calls, or all calls when
    ``tool`` is ``None``); ``None``: every call."""
    error: str | None = None
    """The text of the injected tool error, ``""`` for the default text; ``None``: no error."""
    delay_ms: int = 0
    """How long to wait before answering."""

    def selects(self, tool: str, tool_ordinal: int, ordinal: int) -> bool:
        """Whether the call (the ``tool_ordinal``-th of ``tool``, the ``ordinal``-th of all) is
        one this injection answers."""
        if self.tool is not None and self.tool != tool:
            return False
        wanted = ordinal if self.tool is None else tool_ordinal
        return self.call is None or self.call == wanted

    def error_text(self) -> str:
        """What the client reads in the injected tool error."""
        return self.error or f"injected failure (--inject {self.spec()})"

    def spec(self) -> str:
        """The canonical spec: ``parse_injection(i.spec()) == i``."""
        parts = [f"tool={self.tool or EVERY}", f"call={self.call or EVERY}"]
        if self.error is not None:
            parts.append(f"error={self.error}" if self.error else "error")
        if self.delay_ms:
            parts.append(f"delay={self.delay_ms}ms")
        return ",".join(parts)


def parse_injection(text: str) -> Injection:
    """The injection ``text`` describes; ``InjectSpecError`` naming the bad part otherwise."""
    fields: dict[str, str | None] = {}
    for part in text.split(","):
        if not part:
            raise InjectSpecError("an empty part (two commas in a row, or one at an end)")
        key, sep, value = part.partition("=")
        if key not in KEYS:
            raise InjectSpecError(
                f"{part!r}: unknown key {key!r} (the keys: {', '.join(KEYS)}, as KEY=VALUE "
                "joined by commas)"
            )
        if key in fields:
            raise InjectSpecError(f"{part!r}: {key} is given twice")
        if not sep and key != "error":
            raise InjectSpecError(f"{part!r}: {key} needs a value ({key}=...)")
        fields[key] = value if sep else None
    if "error" not in fields and "delay" not in fields:
        raise InjectSpecError("nothing to inject: add error, error=TEXT or delay=DURATION")
    return Injection(
        tool=_tool(fields.get("tool")),
        call=_call(fields.get("call")),
        error=_error(fields),
        delay_ms=_delay(fields.get("delay")),
    )


def _tool(value: str | None) -> str | None:
    if value == "":
        raise InjectSpecError("'tool=': the tool name is empty (a name, or * for every tool)")
    return None if value in (None, EVERY) else value


def _call(value: str | None) -> int | None:
    if value in (None, EVERY):
        return None
    if not _ORDINAL.fullmatch(value):
        raise InjectSpecError(
            f"'call={value}': not a call number (1 for the first call, 2 for the second..., "
            "or * for every call)"
        )
    return int(value)


def _error(fields: dict[str, str | None]) -> str | None:
    if "error" not in fields:
        return None
    value = fields["error"]
    if value == "":
        raise InjectSpecError("'error=': the error text is empty (write a bare error instead)")
    return value or ""


def _delay(value: str | None) -> int:
    if value is None:
        return 0
    match = _DURATION.fullmatch(value)
    if match is None:
        raise InjectSpecError(
            f"'delay={value}': not a duration (a number and ms or s: 500ms, 2s, 1.5s)"
        )
    number, unit = match["number"], match["unit"]
    if unit == "ms" and "." in number:
        raise InjectSpecError(f"'delay={value}': milliseconds are whole (write 2ms, not 1.5ms)")
    whole, _, fraction = number.partition(".")
    milliseconds = int(whole) if unit == "ms" else int(whole) * 1000 + int(fraction.ljust(3, "0"))
    if not 0 < milliseconds <= MAX_DELAY_MS:
        raise InjectSpecError(f"'delay={value}': a delay is more than 0 and at most 1 hour")
    return milliseconds


def selected(
    injections: Sequence[Injection], tool: str, tool_ordinal: int, ordinal: int
) -> tuple[int, str | None]:
    """What the injections do to one call: the total delay (ms) of those that select it, and the
    text of the first error among them (``None``: answered as recorded)."""
    chosen = [i for i in injections if i.selects(tool, tool_ordinal, ordinal)]
    errors = [i.error_text() for i in chosen if i.error is not None]
    return sum(i.delay_ms for i in chosen), (errors[0] if errors else None)
