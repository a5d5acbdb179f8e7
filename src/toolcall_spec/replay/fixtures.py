"""Serving one task's recorded tool responses (RFC 0244 §D, RFC 0245 §A).

A call is answered by the first entry, in declaration order, that names the call's tool, is not yet
consumed and matches its arguments; the served entry is consumed. Entries are indexed by tool name,
so the cost of one call depends only on the entries of its own tool, never on how many entries the
task holds for other tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from toolcall_spec.replay.matching import args_match
from toolcall_spec.rules import is_tool_error


@dataclass(frozen=True, slots=True)
class Served:
    """An entry chosen for a call: its index in ``toolResponses`` and the entry itself."""

    index: int
    entry: Mapping[str, Any]

    @property
    def is_error(self) -> bool:
        """The entry records a failed call (its ``isError`` is the JSON boolean ``true``)."""
        return is_tool_error(self.entry)

    @property
    def response(self) -> Any:
        return self.entry.get("response")


class Miss:
    """The marker a call gets when no unconsumed entry matches it (compare with ``MISS``)."""

    def __repr__(self) -> str:
        return "MISS"


MISS: Final = Miss()


class FixtureServer:
    """The fixtures of one task. ``serve`` picks and consumes; ``served`` lists the entry indices
    served so far, in serving order, so a test can prove no entry is served twice."""

    def __init__(self, entries: Sequence[Any]) -> None:
        # tool name -> indices of its unconsumed entries, in declaration order.
        self._by_tool: dict[str, list[int]] = {}
        self._entries = entries
        for index, entry in enumerate(entries):
            tool = entry.get("tool") if isinstance(entry, Mapping) else None
            if isinstance(tool, str):
                self._by_tool.setdefault(tool, []).append(index)
        self.served: list[int] = []

    @classmethod
    def for_task(cls, task: Mapping[str, Any]) -> FixtureServer:
        fixtures = task.get("fixtures")
        entries = fixtures.get("toolResponses") if isinstance(fixtures, Mapping) else None
        return cls(entries if isinstance(entries, list) else [])

    def serve(self, tool: str, args: Any) -> Served | Miss:
        """The first unconsumed entry of ``tool`` matching ``args``, now consumed; or ``MISS``."""
        candidates = self._by_tool.get(tool)
        if not candidates:
            return MISS
        for position, index in enumerate(candidates):
            entry = self._entries[index]
            if args_match(entry, args):
                del candidates[position]
                self.served.append(index)
                return Served(index, entry)
        return MISS

    def unconsumed(self) -> list[int]:
        """Indices of the entries not served yet, in declaration order."""
        return sorted(index for indices in self._by_tool.values() for index in indices)
