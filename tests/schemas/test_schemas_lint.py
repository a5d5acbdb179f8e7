"""Every packaged schema: valid draft 2020-12, a stable ``$id``, ``additionalProperties`` declared
on every object definition, ``patternProperties`` only for the discovery ``extensions`` keys, and
every ``$ref`` resolvable offline from package data. The checks live in tests/support/checks.py,
where tests/schemas/test_planted_defects.py proves each one finds a planted fault."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support.checks import (
    DRAFT_2020_12,
    foreign_pattern_properties,
    identity_problems,
    meta_schema_problems,
    undeclared_additional_properties,
    unresolvable_refs,
)
from support.repo import REPO

from toolcall_spec.catalog import SCHEMA_FILES, all_schemas

SCHEMAS = all_schemas()
PATHS = sorted(SCHEMAS)


def test_every_schema_file_is_packaged_and_every_kind_has_one() -> None:
    on_disk = sorted(
        p.relative_to(REPO / "schemas").as_posix() for p in REPO.glob("schemas/**/*.json")
    )
    assert on_disk == PATHS
    assert set(SCHEMA_FILES.values()) <= set(PATHS)


@pytest.mark.requirement("toolcall-spec.requirement.schemas.draft-2020-12")
@pytest.mark.parametrize("path", PATHS)
def test_the_schema_is_valid_draft_2020_12_with_a_stable_id(path: str) -> None:
    schema = SCHEMAS[path]
    Draft202012Validator.check_schema(schema)
    assert meta_schema_problems(schema) == []
    assert schema["$schema"] == DRAFT_2020_12
    assert identity_problems(path, schema) == []


@pytest.mark.requirement("toolcall-spec.requirement.schemas.draft-2020-12")
@pytest.mark.parametrize("path", PATHS)
def test_every_object_definition_declares_additional_properties(path: str) -> None:
    assert undeclared_additional_properties(SCHEMAS[path]) == []


@pytest.mark.requirement("toolcall-spec.requirement.schemas.vendor-hatch-only")
@pytest.mark.parametrize("path", PATHS)
def test_no_closed_object_has_a_vendor_hatch(path: str) -> None:
    assert foreign_pattern_properties(SCHEMAS[path]) == []


@pytest.mark.requirement("toolcall-spec.requirement.schemas.draft-2020-12")
def test_every_ref_resolves_offline_from_package_data() -> None:
    refs = [
        sub["$ref"]
        for schema in SCHEMAS.values()
        for sub in _all_dicts(schema)
        if isinstance(sub.get("$ref"), str)
    ]
    assert any(ref.startswith("../") for ref in refs), "expected cross-file refs to check"
    assert unresolvable_refs(SCHEMAS) == []


def _all_dicts(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value, *(d for item in value.values() for d in _all_dicts(item))]
    if isinstance(value, list):
        return [d for item in value for d in _all_dicts(item)]
    return []
