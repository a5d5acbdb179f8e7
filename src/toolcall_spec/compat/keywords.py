"""What the walk and its keyword families share, so neither imports the other: the walk hands
itself to each family as a `Walker`, and the list of families is assembled above both
(`toolcall_spec.compat.trees`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolcall_spec.compat.changes import Change, Level
from toolcall_spec.compat.locations import MISSING, At, Loc, Side

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
"""Keywords that never change what validates (draft 2020-12); ``default`` changes a meaning."""


@dataclass(slots=True)
class Collapsed:
    """A schema with its leading ``$ref`` (and one-element ``allOf``) wrappers followed."""

    schema: Any
    loc: Loc
    annotations: dict[str, tuple[Any, Loc]] = field(default_factory=dict)
    via_ref: bool = False
    unresolved: str | None = None


def trivially_true(schema: Any) -> bool:
    """Accepts every value: ``true``, absent, or annotations only."""
    if schema is True or schema is MISSING:
        return True
    return isinstance(schema, dict) and set(schema) <= ANNOTATIONS


class Walker(Protocol):
    """The walk as a keyword family sees it: report a change, compare two subschemas, probe a
    pair without reporting, follow a ``$ref``."""

    @property
    def new_side(self) -> Side: ...

    def change(
        self, at: At, kind: str, level: Level, message: str, where: Loc | None = None
    ) -> Change: ...

    def schema(self, old: Any, new: Any, at: At) -> list[Change]: ...

    def probe(self, old: Any, new: Any, at: At, *, swap: bool = False) -> frozenset[Level]: ...

    def collapse(self, side: Side, schema: Any, loc: Loc, *, follow: bool = True) -> Collapsed: ...


Family = Callable[[Walker, dict[str, Any], dict[str, Any], At], list[Change]]
"""One family of keywords (types and bounds, objects, ``allOf`` ...): the changes it finds
between two schema bodies at one location."""
