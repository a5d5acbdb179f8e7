"""The requirement registry is complete: every requirement has a witness test, every marker names
a known id, and the spec pages state every id."""

from __future__ import annotations

import json
import re

from support.repo import REPO

from toolcall_spec.requirement_registry import find_witnesses, registry


def test_every_requirement_has_a_witness() -> None:
    witnessed = {w.requirement_id for w in find_witnesses(REPO / "tests")}
    missing = [rid for rid in registry() if rid not in witnessed]
    assert not missing, f"requirements without a witness test: {missing}"


def test_every_marker_names_a_known_requirement() -> None:
    unknown = [w for w in find_witnesses(REPO / "tests") if w.requirement_id not in registry()]
    assert not unknown, f"markers naming unknown ids: {unknown}"


def test_registry_ids_are_unique_and_well_formed() -> None:
    pattern = re.compile(r"^(openwop|toolcall-spec)\.requirement\.[a-z0-9]+\.[a-z0-9-]+$")
    entries = json.loads((REPO / "spec" / "requirements.json").read_text())["requirements"]
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids)) == len(registry())
    assert [rid for rid in ids if not pattern.match(rid)] == []
