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
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from operator import itemgetter
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


class _SubsetTable:
    """The subset entries that require one set of member names, by the keys of those members."""

    __slots__ = ("buckets", "pick")

    def __init__(self, names: frozenset[str]) -> None:
        # The key of the required members, the same for an entry's args and a call's arguments:
        # one C-level pick from the member keys (a tuple for several names, the key for one).
        ordered = sorted(names)
        self.pick: Callable[[dict[str, Hashable]], Hashable] = (
            itemgetter(*ordered) if ordered else _no_key
        )
        self.buckets: dict[Hashable, Bucket] = {}


def _no_key(keys: dict[str, Hashable]) -> Hashable:
    return ()


class _ToolIndex:
    """The unconsumed entries of one tool."""

    def __init__(self) -> None:
        self.without_args: Bucket = deque()
        self.exact: dict[Hashable, Bucket] = {}
        self.subset: dict[frozenset[str], _SubsetTable] = {}  # by the member names required
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
                names = frozenset(keys)
                table = self.subset.get(names)
                if table is None:
                    table = self.subset[names] = _SubsetTable(names)
                table.buckets.setdefault(table.pick(keys), deque()).append(index)
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
        if isinstance(args, dict) and self.subset:
            keys, exact = member_keys(args)
            if self.exact:
                bucket = self.exact.get(frozenset(keys.items()))
                if bucket:
                    found.append(bucket)
            found += self._subset_candidates(keys)
            return found, exact
        key, exact = lookup_key(args)
        bucket = self.exact.get(key)
        if bucket:
            found.append(bucket)
        return found, exact

    def _subset_candidates(self, keys: dict[str, Hashable]) -> list[Bucket]:
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
        found: list[Bucket] = []
        for shape in shapes:
            table = self.subset.get(shape)
            if table is not None and shape <= names:
                bucket = table.buckets.get(table.pick(keys))
                if bucket:
                    found.append(bucket)
        return found


class FixtureServer:
    """The fixtures of one task. ``serve`` picks and consumes; ``served`` lists the entry indices
    served so far, in serving order, so a test can prove no entry is served twice."""

    def __init__(self, entries: Sequence[Any]) -> None:
        self._by_tool: dict[str, _ToolIndex] = {}
        self._entries = entries
        self._servable: list[int] = []  # entries that name a tool, in declaration order
        for index, entry in enumerate(entries):
            tool = entry.get("tool") if isinstance(entry, Mapping) else None
            if isinstance(tool, str):
                self._by_tool.setdefault(tool, _ToolIndex()).add(index, entry)
                self._servable.append(index)
        self.served: list[int] = []

    @property
    def entries(self) -> Sequence[Any]:
        """The task's fixture entries, as declared."""
        return self._entries

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
        if not (index.without_args or index.subset or index.unkeyed):
            return self._serve_exact(index, args)  # the common shape: one lookup, no list
        chosen: int | None = None
        holder: Bucket | None = None
        buckets, exact = index.candidates(args)
        for bucket in buckets:
            # Entries sharing an exact key are equal JSON values, so the head speaks for all.
            head = bucket[0]
            if (chosen is None or head < chosen) and (
                exact or bucket is index.without_args or args_match(self._entries[head], args)
            ):
                chosen, holder = head, bucket
        if index.unkeyed:
            unkeyed = self._first_unkeyed(index.unkeyed, args, chosen)
            if unkeyed is not None:
                chosen, holder = index.unkeyed[unkeyed], None
                del index.unkeyed[unkeyed]
        if chosen is None:
            return MISS
        if holder is not None:
            holder.popleft()
        return self._consumed(chosen)

    def _serve_exact(self, index: _ToolIndex, args: Any) -> Served | Miss:
        """``serve`` for a tool whose unconsumed entries all have exact keys."""
        key, exact = lookup_key(args)
        bucket = index.exact.get(key)
        if not bucket or not (exact or args_match(self._entries[bucket[0]], args)):
            return MISS
        return self._consumed(bucket.popleft())

    def _consumed(self, chosen: int) -> Served:
        self.served.append(chosen)
        return Served(chosen, self._entries[chosen])

    def _first_unkeyed(self, unkeyed: list[int], args: Any, before: int | None) -> int | None:
        """The position in ``unkeyed`` of its first entry declared before ``before`` (any, when
        None) that matches ``args``; entries compared one by one, in declaration order."""
        for position, entry in enumerate(unkeyed):
            if before is not None and entry > before:
                return None  # declaration order: a later entry cannot win
            if args_match(self._entries[entry], args):
                return position
        return None

    def unconsumed(self) -> list[int]:
        """Indices of the entries not served yet, in declaration order."""
        served = set(self.served)  # once per task, not a set kept up to date on every call
        return [index for index in self._servable if index not in served]
