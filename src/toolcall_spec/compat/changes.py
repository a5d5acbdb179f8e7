"""What a comparison finds: one ``Change`` per difference, each with the release it needs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Level = Literal["major", "minor", "patch"]
"""``major``: some document valid before is invalid now, or means something else (or that cannot
be ruled out). ``minor``: additive, every document valid before stays valid. ``patch``: what
validates is unchanged (descriptions, titles, a member listed with no constraint)."""

LEVELS: tuple[Level, ...] = ("major", "minor", "patch")

RELEASE = {
    "major": "a major release: the change breaks documents that were valid",
    "minor": "a minor release: the change is additive",
    "patch": "a patch release: what validates is unchanged",
    None: "no release: the schemas are the same",
}
"""What each verdict asks of the next release, as the CLI words it."""


@dataclass(frozen=True, slots=True, eq=False)
class Change:
    """One difference between two versions of a schema.

    ``path`` is where it shows in a document (``tasks[].fixtures.toolResponses[].isError``; ``[]``
    is every array item, ``*`` every unlisted member); a definition no document reaches is named by
    its schema location (``$defs.Uuid``). ``file`` is the schema file compared (empty when two
    single schemas are compared) and ``schema_path`` the location in its new version
    (``$defs.ToolResponse.properties.isError``), as ``FILE#PATH`` when a reference led into another
    file.
    """

    path: str
    kind: str
    level: Level
    message: str
    schema_path: str = ""
    file: str = ""

    @property
    def location(self) -> str:
        return f"{self.file}:{self.path}" if self.file else self.path

    def __str__(self) -> str:
        return f"{self.level} {self.kind} {self.location}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        out = {"level": self.level, "kind": self.kind, "path": self.path}
        if self.file:
            out["file"] = self.file
        return {**out, "schemaPath": self.schema_path, "message": self.message}


def verdict(changes: Iterable[Change]) -> Level | None:
    """The release the changes need: the highest level among them, ``None`` when there are none."""
    found = {change.level for change in changes}
    return next((level for level in LEVELS if level in found), None)


def counts(changes: Iterable[Change]) -> dict[str, int]:
    tally = Counter(change.level for change in changes)
    return {level: tally[level] for level in LEVELS}


def ordered(changes: Iterable[Change]) -> list[Change]:
    """Major changes first, then minor, then patch; otherwise in the order they were found."""
    return sorted(changes, key=lambda change: LEVELS.index(change.level))
