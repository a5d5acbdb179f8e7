"""The comparison itself: two versions of a schema walked side by side, from each file's root,
through ``$ref`` (followed once per pair of targets), keyword family by keyword family.

A change is ``minor`` only when every document valid before is certainly valid after; whatever
this walk cannot show to be safe is ``major``, with a message that says why."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from toolcall_spec.compat.changes import Change, Level
from toolcall_spec.compat.keywords import ANNOTATIONS, Collapsed, Family
from toolcall_spec.compat.locations import MISSING, At, Loc, Side
from toolcall_spec.compat.values import mentions, render
from toolcall_spec.json_paths import ROOT
from toolcall_spec.json_values import canonical, json_equal


def _as_dict(schema: Any) -> dict[str, Any] | None:
    if schema is True:
        return {}
    return schema if isinstance(schema, dict) else None


def has_ref(value: Any) -> bool:
    """Whether a ``$ref`` may be inside (when in doubt, yes)."""
    return mentions(value, "$ref")


class Walk:
    """One comparison of two versions, keyword family by keyword family (``families``, in
    order; each is handed this walk as its `Walker`). ``probe`` walks answer a question for
    another keyword (did this ``if`` change?) and follow every reference, even into other files."""

    def __init__(
        self,
        old: Side,
        new: Side,
        families: Sequence[Family],
        *,
        probe: bool = False,
        probed: dict[tuple[bool, Loc, Loc], frozenset[Level]] | None = None,
    ) -> None:
        self.old_side, self.new_side, self.probe_only = old, new, probe
        self.families = tuple(families)
        self._probed = {} if probed is None else probed
        """Levels found by probe walks, by direction and pair of locations, shared by every
        walk of one comparison: nested ``allOf``/``anyOf``/``not`` probe the same pairs again
        at each level, which would otherwise cost time exponential in the depth."""
        self.root_file = ""
        """The file whose root the walk started from: every change is reported in it."""
        self._memo: dict[tuple[Loc, Loc], list[Change]] = {}
        self._busy: set[tuple[str, bytes | None, str, bytes | None]] = set()
        self._annotated: set[tuple[str, Loc | None, Loc | None]] = set()

    # -- reporting -------------------------------------------------------------------------------

    def change(
        self, at: At, kind: str, level: Level, message: str, where: Loc | None = None
    ) -> Change:
        loc = where or at.new
        shown = loc.render() if loc.file == self.root_file else f"{loc.file}#{loc.render()}"
        return Change(at.path, kind, level, message, shown, self.root_file)

    def probe(self, old: Any, new: Any, at: At, *, swap: bool = False) -> frozenset[Level]:
        """The levels of the changes between ``old`` and ``new``, found by a separate walk and
        not reported: with ``swap``, ``old`` lives in the new version and ``new`` in the old one.
        A pair of locations is probed once per comparison."""
        key = (swap, at.old, at.new)
        found = self._probed.get(key)
        if found is None:
            walk = Walk(
                *((self.new_side, self.old_side) if swap else (self.old_side, self.new_side)),
                self.families,
                probe=True,
                probed=self._probed,
            )
            walk.root_file = self.root_file
            changes = walk.schema(old, new, At(at.path, at.new, at.old) if swap else at)
            found = self._probed[key] = frozenset(c.level for c in changes)
        return found

    # -- the walk --------------------------------------------------------------------------------

    def schema(self, old: Any, new: Any, at: At) -> list[Change]:
        """Every change between two subschemas (absent counts as ``true``)."""
        old = True if old is MISSING else old
        new = True if new is MISSING else new
        if json_equal(old, new) and not has_ref(old):
            return []
        if not isinstance(old, (dict, bool)) or not isinstance(new, (dict, bool)):
            message = f"not a JSON Schema ({render(old)} -> {render(new)}), so not classified"
            return [self.change(at, "unclassified", "major", message)]
        if old is False or new is False:
            return self._falsity(old, new, at)
        o = self.collapse(self.old_side, old, at.old)
        n = self.collapse(self.new_side, new, at.new)
        plain = new if o.via_ref else old
        if o.via_ref != n.via_ref and isinstance(plain, dict) and "$ref" in plain:
            # A $ref beside other keywords on one side only: compare the two as written, so
            # the reference is paired with the reference (one more conjunct, not a new schema).
            o, n = (
                self.collapse(self.old_side, old, at.old, follow=False),
                self.collapse(self.new_side, new, at.new, follow=False),
            )
        here = At(at.path, o.loc, n.loc)
        crossed = n.loc.file != at.new.file
        if crossed and o.via_ref and n.via_ref and o.loc == n.loc and not self.probe_only:
            # The same definition in another file: that file's comparison covers it, so only
            # the annotations written here beside the $ref are compared.
            for found, base in ((o, at.old), (n, at.new)):
                found.annotations = {
                    k: v for k, v in found.annotations.items() if v[1].file == base.file
                }
            return self._annotations(o, n, here)
        out = self._annotations(o, n, here)
        if o.unresolved is not None or n.unresolved is not None:
            return out + self._unresolved(o, n, here)
        old_body, new_body = _as_dict(o.schema), _as_dict(n.schema)
        if old_body is None or new_body is None:
            return out + self.schema(o.schema, n.schema, here)  # false, or not a schema
        return out + self._body_once(old_body, new_body, here)

    def collapse(self, side: Side, schema: Any, loc: Loc, *, follow: bool = True) -> Collapsed:
        """Follow a ``$ref`` that stands beside annotations only to the schema it names (again
        while the target is one); the outermost annotation of each keyword wins."""
        found = Collapsed(schema, loc)
        seen: set[Loc] = set()
        while isinstance(found.schema, dict):
            current = found.schema
            for keyword in ANNOTATIONS & current.keys():
                found.annotations.setdefault(keyword, (current[keyword], found.loc))
            if not follow or current.keys() - ANNOTATIONS != {"$ref"}:
                break
            target = (
                side.resolve(current["$ref"], found.loc)
                if isinstance(current["$ref"], str)
                else None
            )
            if target is None or target in seen:
                found.unresolved = str(current["$ref"])
                break
            seen.add(target)
            found.schema, found.loc, found.via_ref = side.at(target), target, True
        return found

    def _body_once(self, old: dict[str, Any], new: dict[str, Any], at: At) -> list[Change]:
        """Each pair of locations is compared once. A pair of schemas already being compared
        further up (a recursive schema, even reached through defaults at ever new locations) is
        taken as unchanged there: the comparison in progress reports what changed in it."""
        key = (at.old, at.new)
        if key in self._memo:
            return self._memo[key]
        text = (at.old.file, canonical(old), at.new.file, canonical(new))
        if text in self._busy:
            return []
        self._busy.add(text)
        try:
            found = [c for family in self.families for c in family(self, old, new, at)]
        finally:
            self._busy.discard(text)
        self._memo[key] = found
        return found

    # -- the special cases -----------------------------------------------------------------------

    def _falsity(self, old: Any, new: Any, at: At) -> list[Change]:
        if old is False and new is False:
            return []
        if old is False:
            message = "accepted no value before (false); now accepts some"
            return [self.change(at, "constraint-removed", "minor", message)]
        message = "now accepts no value (false); documents that had a value here become invalid"
        return [self.change(at, "constraint-added", "major", message)]

    def _unresolved(self, o: Collapsed, n: Collapsed, at: At) -> list[Change]:
        if o.unresolved is not None and json_equal(o.schema, n.schema):
            return []  # the same reference, outside the files compared: nothing changed here
        ref = n.unresolved if n.unresolved is not None else o.unresolved
        message = (
            f"$ref {render(ref)} does not resolve among the files compared, so the change "
            "cannot be classified"
        )
        return [self.change(at, "unclassified", "major", message)]

    def _annotations(self, o: Collapsed, n: Collapsed, at: At) -> list[Change]:
        out = []
        for keyword in sorted(o.annotations.keys() | n.annotations.keys()):
            before, old_loc = o.annotations.get(keyword, (MISSING, None))
            after, new_loc = n.annotations.get(keyword, (MISSING, None))
            if before is not MISSING and after is not MISSING and json_equal(before, after):
                continue
            key = (keyword, old_loc, new_loc)
            if key in self._annotated:
                continue  # a definition's annotation, already reported where it was first used
            self._annotated.add(key)
            where = None if new_loc is None else new_loc.child(keyword)
            out.append(self._annotation(at, keyword, before, after, where))
        return out

    def _annotation(
        self, at: At, keyword: str, before: Any, after: Any, where: Loc | None
    ) -> Change:
        if before is MISSING:
            what = f"{keyword} added"
        elif after is MISSING:
            what = f"{keyword} removed"
        else:
            what = f"{keyword} changed"
        if keyword != "default":
            return self.change(at, "annotation-changed", "patch", what, where)
        message = (
            f"{what} ({render(before) if before is not MISSING else 'none'} -> "
            f"{render(after) if after is not MISSING else 'none'}): a document that leaves the "
            "member out may now mean something else"
        )
        return self.change(at, "default-changed", "major", message, where)


def walk_documents(
    old: Side, new: Side, names: Iterable[str], families: Sequence[Family]
) -> list[Change]:
    """Compare the files present in both versions, each from its root; each change once."""
    walk = Walk(old, new, families)
    found: list[Change] = []
    for name in names:
        walk.root_file = name
        root = At(ROOT, Loc(name), Loc(name))
        found.extend(walk.schema(old.documents[name], new.documents[name], root))
    return unique(found)


def unique(changes: Iterable[Change]) -> list[Change]:
    """Each change once: a definition reached twice hands back the same change objects."""
    seen: set[int] = set()
    out = []
    for change in changes:
        if id(change) not in seen:
            seen.add(id(change))
            out.append(change)
    return out
