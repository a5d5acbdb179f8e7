"""Serving one task's recorded tool responses (RFC 0244 §D, RFC 0245 §A).

A call is answered by the first entry, in declaration order, that names the call's tool, is not yet
consumed and matches its arguments; the served entry is consumed.

Entries are indexed by tool, then by how they match, so a call costs the same however many entries
its tool has, in any order: exact entries by the hash key of their arguments (``lookup_key``: key
order ignored, ``1`` equal to ``1.0``, ``true`` not ``1``), subset entries by the set of members
they require and the key of those members, entries without ``args`` in a queue. Each index holds
unconsumed entries in declaration order, so the first candidate of each is its earliest match, and
the call gets the earliest of those few candidates: exactly the first unconsumed match of a scan.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Final

from toolcall_spec.replay.matching import args_match, lookup_key, member_keys
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


Bucket = deque[int]
"""Indices of unconsumed entries that a call matches alike, in declaration order."""


class _ToolIndex:
    """The unconsumed entries of one tool."""

    def __init__(self) -> None:
        self.without_args: Bucket = deque()
        self.exact: dict[Hashable, Bucket] = {}
        # required member names -> key of those members -> entries
        self.subset: dict[frozenset[str], dict[Hashable, Bucket]] = {}
        self.unkeyed: list[int] = []  # arguments without an exact key: compared one by one

    def add(self, index: int, entry: Mapping[str, Any]) -> None:
        if "args" not in entry:
            self.without_args.append(index)
            return
        expected = entry["args"]
        if entry.get("argsMatch", "exact") == "subset":
            if not isinstance(expected, dict):
                return  # matches no call (args_match): never served, stays unconsumed
            keys, exact = member_keys(expected)
            if exact:
                table = self.subset.setdefault(frozenset(keys), {})
                table.setdefault(frozenset(keys.items()), deque()).append(index)
                return
        else:
            key, exact = lookup_key(expected)
            if exact:
                self.exact.setdefault(key, deque()).append(index)
                return
        self.unkeyed.append(index)

    def candidates(self, args: Any) -> tuple[list[Bucket], bool]:
        """The non-empty buckets whose entries have the key of ``args``, and whether that key is
        exact (if not, e.g. an ``IntEnum`` member, a bucket's entries still need comparing)."""
        found = [self.without_args] if self.without_args else []
        if isinstance(args, dict):
            keys, exact = member_keys(args)
            key: Hashable = frozenset(keys.items())
        else:
            key, exact = lookup_key(args)
        bucket = self.exact.get(key)
        if bucket:
            found.append(bucket)
        if self.subset and isinstance(args, dict):
            found += self._subset_candidates(keys)
        return found, exact

    def _subset_candidates(self, keys: dict[str, Hashable]) -> Iterator[Bucket]:
        """Subset buckets whose required members the call has with equal values: every known
        set of required names, or every subset of the call's names when those are fewer."""
        names = frozenset(keys)
        if len(names) < 16 and 1 << len(names) < len(self.subset):
            shapes: Iterator[frozenset[str]] = (
                frozenset(chosen)
                for size in range(len(names) + 1)
                for chosen in combinations(names, size)
            )
        else:
            shapes = iter(self.subset)
        for shape in shapes:
            table = self.subset.get(shape)
            if table is not None and shape <= names:
                bucket = table.get(frozenset((name, keys[name]) for name in shape))
                if bucket:
                    yield bucket


class FixtureServer:
    """The fixtures of one task. ``serve`` picks and consumes; ``served`` lists the entry indices
    served so far, in serving order, so a test can prove no entry is served twice."""

    def __init__(self, entries: Sequence[Any]) -> None:
        self._by_tool: dict[str, _ToolIndex] = {}
        self._entries = entries
        self._unconsumed: set[int] = set()
        for index, entry in enumerate(entries):
            tool = entry.get("tool") if isinstance(entry, Mapping) else None
            if isinstance(tool, str):
                self._by_tool.setdefault(tool, _ToolIndex()).add(index, entry)
                self._unconsumed.add(index)
        self.served: list[int] = []

    @classmethod
    def for_task(cls, task: Mapping[str, Any]) -> FixtureServer:
        fixtures = task.get("fixtures")
        entries = fixtures.get("toolResponses") if isinstance(fixtures, Mapping) else None
        return cls(entries if isinstance(entries, list) else [])

    def serve(self, tool: str, args: Any) -> Served | Miss:
        """The first unconsumed entry of ``tool`` matching ``args``, now consumed; or ``MISS``."""
        index = self._by_tool.get(tool)
        if index is None:
            return MISS
        best: tuple[int, Bucket | list[int], int] | None = None  # entry, its bucket, position
        buckets, exact = index.candidates(args)
        for bucket in buckets:
            # Entries sharing an exact key are equal JSON values, so the head speaks for all.
            if (best is None or bucket[0] < best[0]) and (
                exact or bucket is index.without_args or args_match(self._entries[bucket[0]], args)
            ):
                best = (bucket[0], bucket, 0)
        for position, unkeyed in enumerate(index.unkeyed):
            if best is not None and unkeyed > best[0]:
                break  # declaration order: a later entry cannot win
            if args_match(self._entries[unkeyed], args):
                best = (unkeyed, index.unkeyed, position)
                break
        if best is None:
            return MISS
        chosen, holder, position = best
        del holder[position]
        self._unconsumed.discard(chosen)
        self.served.append(chosen)
        return Served(chosen, self._entries[chosen])

    def unconsumed(self) -> list[int]:
        """Indices of the entries not served yet, in declaration order."""
        return sorted(self._unconsumed)
