"""Where a subschema is: a ``Loc`` (file and JSON pointer) in one version, a ``Side``
that resolves ``$ref`` offline among the files of one version, and ``At``, the position of
a comparison: the document path it concerns plus the location on each side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from toolcall_spec.json_paths import ROOT, format_path, join_path, printable

Pointer = tuple[str | int, ...]
MISSING: Any = object()
"""A keyword or member that is not there."""

_FALLBACK_BASE = "https://compat.invalid/"
"""Base URI of a file without ``$id``, so relative references between such files still resolve."""


@dataclass(frozen=True, slots=True)
class Loc:
    file: str
    pointer: Pointer = ()

    def child(self, *keys: str | int) -> Loc:
        return Loc(self.file, self.pointer + keys)

    def render(self) -> str:
        """``$defs.ToolResponse.properties.isError``; the file's root is ``(root)``."""
        return format_path(self.pointer)


class Side:
    """One version of the schemas: files by path (``suites/agent-eval-suite.schema.json``)."""

    def __init__(self, documents: Mapping[str, Any]) -> None:
        self.documents = documents
        self._resolved: dict[tuple[str, str], Loc | None] = {}
        self._by_uri: dict[str, str] = {}
        for name, document in documents.items():
            self._by_uri[urljoin(_FALLBACK_BASE, name)] = name
            if isinstance(document, dict) and isinstance(document.get("$id"), str):
                self._by_uri.setdefault(urldefrag(document["$id"]).url, name)

    def at(self, loc: Loc) -> Any:
        """The value at ``loc``, or ``MISSING``."""
        node = self.documents.get(loc.file, MISSING)
        for key in loc.pointer:
            in_object = isinstance(node, dict) and isinstance(key, str) and key in node
            in_array = isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)
            if not (in_object or in_array):
                return MISSING
            node = node[key]
        return node

    def _normalized(self, name: str, parts: tuple[str, ...]) -> Loc | None:
        """The pointer with array indices as ``int``, as ``At.to`` writes them; ``None`` when
        it leads nowhere."""
        node, out = self.documents.get(name, MISSING), []
        for part in parts:
            key: str | int = int(part) if isinstance(node, list) and part.isdigit() else part
            out.append(key)
            node = self.at(Loc(name, tuple(out)))
            if node is MISSING:
                return None
        return Loc(name, tuple(out))

    def resolve(self, ref: str, base: Loc) -> Loc | None:
        """The target of ``ref`` written in ``base``'s file; ``None`` when it is not among this
        version's files (a remote schema, an ``$anchor``, a missing definition)."""
        key = (ref, base.file)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(ref, base)
        return self._resolved[key]

    def _resolve(self, ref: str, base: Loc) -> Loc | None:
        document = self.documents.get(base.file)
        declared = document.get("$id") if isinstance(document, dict) else None
        base_uri = declared if isinstance(declared, str) else urljoin(_FALLBACK_BASE, base.file)
        uri, fragment = urldefrag(urljoin(base_uri, ref))
        name = self._by_uri.get(uri)
        parts = _pointer(fragment)
        if name is None or parts is None:
            return None
        return self._normalized(name, parts)


def _pointer(fragment: str) -> tuple[str, ...] | None:
    if fragment == "":
        return ()
    if not fragment.startswith("/"):
        return None  # a named anchor: not used by these schemas, so not resolved
    return tuple(unquote(p).replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/"))


@dataclass(frozen=True, slots=True)
class At:
    """The position of one comparison: ``path`` in documents, ``old``/``new`` in the schemas."""

    path: str
    old: Loc
    new: Loc

    def to(self, segment: str | Segment | None, *keys: str | int) -> At:
        """One step down the same keywords on both sides; ``segment`` extends the document path."""
        return At(extend(self.path, segment), self.old.child(*keys), self.new.child(*keys))

    def split(self, segment: str | Segment | None, old_keys: Pointer, new_keys: Pointer) -> At:
        """One step down different keywords on each side (``oneOf[1]`` paired with ``oneOf[2]``)."""
        return At(extend(self.path, segment), self.old.child(*old_keys), self.new.child(*new_keys))


@dataclass(frozen=True, slots=True)
class Segment:
    """A document path segment that is not a member name."""

    text: str


ITEMS = Segment("[]")
"""Every item of an array."""
UNLISTED = Segment("*")
"""Every member an object does not list in ``properties``."""
NAMES = Segment("(member names)")
"""The names of an object's members (``propertyNames``)."""
SOME_ITEM = Segment("[contains]")
"""The item an array must contain (``contains``)."""


def matching(pattern: str) -> Segment:
    """Every member whose name matches ``pattern`` (``patternProperties``)."""
    return Segment(f"/{printable(pattern)}/")


def extend(path: str, segment: str | Segment | None) -> str:
    """``path`` plus a member name or a ``Segment``."""
    if segment is None:
        return path
    if isinstance(segment, str):
        return join_path(path, [segment])
    if path == ROOT:
        return segment.text
    return path + segment.text if segment.text.startswith("[") else f"{path}.{segment.text}"


def index(position: int) -> Segment:
    """One item of an array, by position (``prefixItems``)."""
    return Segment(f"[{position}]")
