"""The compatibility policy as code (spec/compatibility.md): changes planted on copies of the real
packaged schemas, and small schemas for each keyword family, are classified as the policy says.
Every expected kind, level and path below is read off the policy and the schema's structure."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from support.repo import REPO

from toolcall_spec.catalog import all_schemas
from toolcall_spec.compat import Change, compare, compare_documents, read_schema, verdict

SUITE = "suites/agent-eval-suite.schema.json"
DISCOVERY = "capabilities/discovery.schema.json"
CALL_TOOL_RESULT = "mcp/call-tool-result.schema.json"
TOOL_CALL_EVENT = "analytics/tool-call-event.schema.json"
FORMATS = "common/formats.schema.json"
ENTRY = "tasks[].fixtures.toolResponses[]"
"""Where a fixture entry sits in a suite, as the comparison names document locations."""

RFC_0244_SUITE = REPO / "tests/data/compat/rfc0244/agent-eval-suite.schema.json"
"""The suite schema as RFC 0244 published it: an entry is ``{tool, args?, argsMatch?,
response}``."""
RELEASE_0_1 = REPO / "tests/data/compat/0.1"
"""The schemas of this package's 0.1 release (RFC 0245 landed), before the OpenWOP v2 alignment."""

Schemas = dict[str, Any]


def planted(edit: Callable[[Schemas], object]) -> list[Change]:
    """The changes from the packaged schemas to a copy with ``edit`` applied."""
    new = copy.deepcopy(all_schemas())
    edit(new)
    return compare_documents(all_schemas(), new)


def found(changes: list[Change]) -> list[tuple[str, str, str, str]]:
    """``(level, kind, file, path)`` of each change, patch-level ones left out."""
    return [(c.level, c.kind, c.file, c.path) for c in changes if c.level != "patch"]


def entry(schemas: Schemas) -> dict[str, Any]:
    site: dict[str, Any] = schemas[SUITE]["$defs"]["ToolResponse"]
    return site


def event_member(schemas: Schemas, name: str) -> dict[str, Any]:
    member: dict[str, Any] = schemas[TOOL_CALL_EVENT]["properties"][name]
    return member


# -- the same schemas ----------------------------------------------------------------------------


def test_the_packaged_schemas_compared_with_a_copy_have_no_changes() -> None:
    assert compare_documents(all_schemas(), copy.deepcopy(all_schemas())) == []


@pytest.mark.parametrize("path", sorted(all_schemas()))
def test_each_schema_compared_with_itself_has_no_changes(path: str) -> None:
    assert compare(all_schemas()[path], copy.deepcopy(all_schemas()[path])) == []


# -- the policy's table, on the real schemas -----------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_an_optional_member_on_the_fixture_entry_is_additive() -> None:
    changes = planted(lambda s: entry(s)["properties"].update(note={"type": "string"}))
    assert found(changes) == [("minor", "member-added-optional", SUITE, f"{ENTRY}.note")]
    assert changes[0].schema_path == "$defs.ToolResponse.properties.note"
    assert verdict(changes) == "minor"


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_a_required_member_on_the_fixture_entry_is_major() -> None:
    def edit(s: Schemas) -> None:
        entry(s)["properties"]["note"] = {"type": "string"}
        entry(s)["required"].append("note")

    changes = planted(edit)
    assert found(changes) == [("major", "member-added-required", SUITE, f"{ENTRY}.note")]
    assert verdict(changes) == "major"


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_closing_the_open_call_tool_result_is_major() -> None:
    changes = planted(lambda s: s[CALL_TOOL_RESULT].update(additionalProperties=False))
    assert found(changes) == [("major", "object-closed", CALL_TOOL_RESULT, "*")]


def test_closing_an_open_content_block_is_major_where_content_is() -> None:
    changes = planted(
        lambda s: s[CALL_TOOL_RESULT]["$defs"]["TextContent"].update(additionalProperties=False)
    )
    assert found(changes) == [("major", "object-closed", CALL_TOOL_RESULT, "content[].*")]


def test_opening_a_closed_object_is_additive() -> None:
    changes = planted(lambda s: entry(s).update(additionalProperties=True))
    assert found(changes) == [("minor", "object-opened", SUITE, f"{ENTRY}.*")]


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@pytest.mark.parametrize(
    ("edit", "kind", "path"),
    [
        (
            lambda s: event_member(s, "latency_ms").update(type="integer"),
            "type-narrowed",
            "latency_ms",
        ),
        (
            lambda s: event_member(s, "error_category")["enum"].remove("tool_error"),
            "enum-value-removed",
            "error_category",
        ),
        (
            lambda s: event_member(s, "error_message").update(maxLength=200),
            "bound-tightened",
            "error_message",
        ),
        (
            lambda s: event_member(s, "locale").update(pattern="^[a-z]{2}"),
            "pattern-added",
            "locale",
        ),
        (lambda s: event_member(s, "tokens_in").update(minimum=1), "bound-tightened", "tokens_in"),
        (
            lambda s: event_member(s, "country_code").update(pattern="^[A-Z]{3}$"),
            "pattern-changed",
            "country_code",
        ),
        (
            lambda s: event_member(s, "metadata").update(maxProperties=5),
            "bound-tightened",
            "metadata",
        ),
        (
            lambda s: event_member(s, "source").update(const="server"),
            "enum-value-removed",
            "source",
        ),
        (
            lambda s: event_member(s, "trace_id").update(format="uuid"),
            "format-added",
            "trace_id",
        ),
    ],
    ids=[
        "number-to-integer",
        "enum-value-removed",
        "maxLength-lowered",
        "pattern-added",
        "minimum-raised",
        "pattern-changed",
        "maxProperties-added",
        "const-narrows-enum",
        "format-added",
    ],
)
def test_narrowing_a_type_is_major(edit: Callable[[Schemas], object], kind: str, path: str) -> None:
    changes = planted(edit)
    assert found(changes) == [("major", kind, TOOL_CALL_EVENT, path)]


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@pytest.mark.parametrize(
    ("edit", "kind", "path"),
    [
        (
            lambda s: event_member(s, "error_category")["enum"].append("quota"),
            "enum-value-added",
            "error_category",
        ),
        (
            lambda s: event_member(s, "error_message").update(maxLength=1000),
            "bound-relaxed",
            "error_message",
        ),
        (lambda s: event_member(s, "is_retry").update(type="number"), "type-widened", "is_retry"),
        (
            lambda s: event_member(s, "country_code").pop("pattern"),
            "pattern-removed",
            "country_code",
        ),
        (lambda s: event_member(s, "trace_id").pop("minLength"), "bound-relaxed", "trace_id"),
        (
            lambda s: event_member(s, "status").update(type=["string", "null"]),
            "type-widened",
            "status",
        ),
    ],
    ids=[
        "enum-value-added",
        "maxLength-raised",
        "integer-to-number",
        "pattern-removed",
        "minLength-removed",
        "null-allowed",
    ],
)
def test_widening_a_type_is_additive(
    edit: Callable[[Schemas], object], kind: str, path: str
) -> None:
    changes = planted(edit)
    assert found(changes) == [("minor", kind, TOOL_CALL_EVENT, path)]
    assert verdict(changes) == "minor"


def test_making_a_member_required_is_major_and_optional_additive() -> None:
    required = planted(lambda s: entry(s)["required"].append("response"))
    assert found(required) == [("major", "member-made-required", SUITE, f"{ENTRY}.response")]
    optional = planted(lambda s: s[SUITE]["required"].remove("modes"))
    assert found(optional) == [("minor", "member-made-optional", SUITE, "modes")]


def test_removing_a_member_is_major_even_from_an_open_object() -> None:
    changes = planted(lambda s: s[CALL_TOOL_RESULT]["properties"].pop("structuredContent"))
    assert found(changes) == [("major", "member-removed", CALL_TOOL_RESULT, "structuredContent")]
    assert changes[0].schema_path == "properties.structuredContent"


def test_changing_what_an_absent_member_means_is_major() -> None:
    changes = planted(lambda s: entry(s)["properties"]["argsMatch"].update(default="subset"))
    assert found(changes) == [("major", "default-changed", SUITE, f"{ENTRY}.argsMatch")]


def test_a_description_change_is_a_patch() -> None:
    changes = planted(lambda s: entry(s).update(description="Another description."))
    assert [(c.level, c.kind, c.path) for c in changes] == [("patch", "annotation-changed", ENTRY)]
    assert verdict(changes) == "patch"


def test_a_member_added_to_an_open_object_narrows_what_it_may_hold() -> None:
    constrained = planted(
        lambda s: s[CALL_TOOL_RESULT]["properties"].update(traceId={"type": "string"})
    )
    assert ("major", "type-narrowed", CALL_TOOL_RESULT, "traceId") in found(constrained)
    unconstrained = planted(
        lambda s: s[CALL_TOOL_RESULT]["properties"].update(traceId={"description": "Any."})
    )
    assert found(unconstrained) == []
    assert "member-documented" in [c.kind for c in unconstrained]


def test_a_family_dropped_from_the_closed_discovery_root_is_major() -> None:
    changes = planted(lambda s: s[DISCOVERY]["properties"].pop("memory"))
    assert ("major", "member-removed", DISCOVERY, "memory") in found(changes)


def test_a_schema_file_removed_is_major_and_one_added_minor() -> None:
    removed = planted(lambda s: s.pop(CALL_TOOL_RESULT))
    assert found(removed) == [("major", "schema-removed", CALL_TOOL_RESULT, "(root)")]
    added = planted(lambda s: s.update({"mcp/extra.schema.json": {"type": "object"}}))
    assert found(added) == [("minor", "schema-added", "mcp/extra.schema.json", "(root)")]


def test_a_shared_definition_is_reported_once_in_its_own_file() -> None:
    changes = planted(lambda s: s[FORMATS]["$defs"]["Uuid"].update(maxLength=36))
    assert found(changes) == [("major", "bound-tightened", FORMATS, "$defs.Uuid")]


def test_a_changed_reference_to_another_file_is_followed() -> None:
    def edit(s: Schemas) -> None:
        s[TOOL_CALL_EVENT]["properties"]["event_id"] = {
            "$ref": "../common/formats.schema.json#/$defs/Timestamp"
        }

    changes = planted(edit)
    assert ("major", "pattern-changed", TOOL_CALL_EVENT, "event_id") in found(changes)
    pattern = next(c for c in changes if c.kind == "pattern-changed")
    assert pattern.schema_path == f"{FORMATS}#$defs.Timestamp"
    assert verdict(changes) == "major"


def test_a_new_content_block_told_apart_by_its_type_is_additive() -> None:
    video = {
        "type": "object",
        "required": ["type", "uri"],
        "properties": {"type": {"const": "video"}, "uri": {"type": "string"}},
    }
    changes = planted(lambda s: s[CALL_TOOL_RESULT]["$defs"]["ContentBlock"]["oneOf"].append(video))
    assert found(changes) == [("minor", "alternative-added", CALL_TOOL_RESULT, "content[]")]


def test_a_new_content_block_that_may_overlap_another_is_major() -> None:
    changes = planted(
        lambda s: s[CALL_TOOL_RESULT]["$defs"]["ContentBlock"]["oneOf"].append({"type": "object"})
    )
    assert found(changes) == [("major", "alternative-added", CALL_TOOL_RESULT, "content[]")]


def test_a_changed_condition_is_major() -> None:
    changes = planted(lambda s: s[TOOL_CALL_EVENT]["if"]["properties"]["status"].update(const="x"))
    assert found(changes) == [("major", "condition-changed", TOOL_CALL_EVENT, "(root)")]


# -- RFC 0245 is additive ------------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_rfc_0245_fixture_entry_is_additive_over_rfc_0244() -> None:
    """The published RFC 0244 entry ``{tool, args?, argsMatch?, response}`` becomes ours: an
    optional ``isError``, and ``response`` no longer required (an error entry may leave it out)."""
    changes = compare(read_schema(RFC_0244_SUITE), read_schema(RELEASE_0_1 / SUITE))
    assert found(changes) == [
        ("minor", "member-added-optional", "", f"{ENTRY}.isError"),
        ("minor", "member-made-optional", "", f"{ENTRY}.response"),
    ]
    assert verdict(changes) == "minor"


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_rfc_0245_capability_member_is_additive() -> None:
    before = copy.deepcopy(all_schemas()[DISCOVERY])
    del before["$defs"]["EvalSuiteCapability"]["properties"]["fixtureErrors"]
    changes = compare(before, all_schemas()[DISCOVERY])
    assert found(changes) == [
        ("minor", "member-added-optional", "", "agents.evalSuite.fixtureErrors")
    ]


# -- keyword families, on small schemas ----------------------------------------------------------

DEFS = {"$defs": {"Name": {"type": "string"}}}

CASES: list[tuple[str, Any, Any, str, str]] = [
    ("false-to-true", False, True, "constraint-removed", "minor"),
    ("true-to-false", True, False, "constraint-added", "major"),
    ("min-to-exclusive", {"minimum": 0}, {"exclusiveMinimum": 0}, "bound-tightened", "major"),
    ("exclusive-to-min", {"exclusiveMinimum": 0}, {"minimum": 0}, "bound-relaxed", "minor"),
    ("maximum-removed", {"maximum": 5}, {}, "bound-relaxed", "minor"),
    ("multipleOf-finer", {"multipleOf": 0.01}, {"multipleOf": 0.001}, "bound-relaxed", "minor"),
    ("multipleOf-coarser", {"multipleOf": 2}, {"multipleOf": 3}, "bound-tightened", "major"),
    ("minItems-raised", {"minItems": 1}, {"minItems": 2}, "bound-tightened", "major"),
    ("uniqueItems-added", {}, {"uniqueItems": True}, "constraint-added", "major"),
    ("uniqueItems-removed", {"uniqueItems": True}, {}, "constraint-removed", "minor"),
    ("enum-added", {"type": "string"}, {"type": "string", "enum": ["a"]},
     "constraint-added", "major"),
    ("enum-removed", {"enum": ["a"]}, {}, "constraint-removed", "minor"),
    ("anyOf-alternative-added", {"anyOf": [{"type": "string"}]},
     {"anyOf": [{"type": "string"}, {"type": "null"}]}, "alternative-added", "minor"),
    ("anyOf-alternative-removed", {"anyOf": [{"type": "string"}, {"type": "null"}]},
     {"anyOf": [{"type": "string"}]}, "alternative-removed", "major"),
    ("allOf-constraint-added", {"allOf": [{"type": "string"}]},
     {"allOf": [{"type": "string"}, {"minLength": 1}]}, "constraint-added", "major"),
    ("allOf-constraint-removed", {"allOf": [{"type": "string"}, {"minLength": 1}]},
     {"allOf": [{"type": "string"}]}, "constraint-removed", "minor"),
    ("not-excludes-less", {"not": {"type": ["string", "null"]}}, {"not": {"type": "string"}},
     "constraint-relaxed", "minor"),
    ("not-excludes-more", {"not": {"type": "string"}}, {"not": {"type": ["string", "null"]}},
     "constraint-changed", "major"),
    ("not-added", {}, {"not": {"type": "null"}}, "constraint-added", "major"),
    ("if-added", {}, {"if": {"required": ["a"]}, "then": {"required": ["b"]}},
     "constraint-added", "major"),
    ("if-removed", {"if": {"required": ["a"]}, "then": {"required": ["b"]}}, {},
     "constraint-removed", "minor"),
    ("then-widened", {"if": {"required": ["a"]}, "then": {"maxProperties": 2}},
     {"if": {"required": ["a"]}, "then": {"maxProperties": 3}}, "bound-relaxed", "minor"),
    ("dependency-added", {"dependentRequired": {"a": ["b"]}},
     {"dependentRequired": {"a": ["b", "c"]}}, "dependency-added", "major"),
    ("dependency-removed", {"dependentRequired": {"a": ["b"]}}, {}, "dependency-removed", "minor"),
    ("dependent-schema-added", {}, {"dependentSchemas": {"a": {"required": ["b"]}}},
     "member-made-required", "major"),
    ("pattern-members-opened", {"additionalProperties": False},
     {"additionalProperties": False, "patternProperties": {"^x-": {}}},
     "member-pattern-added", "minor"),
    ("pattern-members-closed", {"additionalProperties": False, "patternProperties": {"^x-": {}}},
     {"additionalProperties": False}, "member-pattern-removed", "major"),
    ("item-schema-narrowed", {"items": {"type": "number"}}, {"items": {"type": "integer"}},
     "type-narrowed", "major"),
    ("prefix-item-added", {"prefixItems": [{}], "items": False},
     {"prefixItems": [{}, {}], "items": False}, "constraint-removed", "minor"),
    ("contains-added", {}, {"contains": {"type": "string"}}, "constraint-added", "major"),
    ("member-names-restricted", {}, {"propertyNames": {"maxLength": 8}},
     "bound-tightened", "major"),
    ("ref-sibling-added", {**DEFS, "$ref": "#/$defs/Name"},
     {**DEFS, "$ref": "#/$defs/Name", "minLength": 1}, "bound-tightened", "major"),
    ("ref-sibling-removed", {**DEFS, "$ref": "#/$defs/Name", "minLength": 1},
     {**DEFS, "$ref": "#/$defs/Name"}, "bound-relaxed", "minor"),
    ("definition-removed", {"$defs": {"A": {}}}, {}, "definition-removed", "major"),
    ("definition-added", {}, {"$defs": {"A": {}}}, "definition-added", "minor"),
    ("id-changed", {"$id": "https://a.example/s.json"}, {"$id": "https://b.example/s.json"},
     "id-changed", "major"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("old", "new", "kind", "level"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_keyword_family_classifies_its_changes(
    old: Any, new: Any, kind: str, level: str
) -> None:
    changes = compare(old, new)
    assert [(c.kind, c.level) for c in changes if c.level != "patch"] == [(kind, level)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"required": ["a", "b"]}, {"required": ["b", "a"]}),
        ({"enum": [1, "a"]}, {"enum": ["a", 1.0]}),
        ({"maximum": 1}, {"maximum": 1.0}),
        ({"minLength": 0}, {}),
        (
            {"properties": {"a": {"type": "string"}}},
            {**DEFS, "properties": {"a": {"$ref": "#/$defs/Name"}}},
        ),
    ],
    ids=[
        "required-order",
        "enum-order-and-1.0",
        "integral-float",
        "default-bound",
        "inline-to-ref",
    ],
)
def test_equivalent_spellings_are_not_validation_changes(old: Any, new: Any) -> None:
    assert [c for c in compare(old, new) if c.kind != "definition-added"] == []


def test_true_and_1_are_different_values() -> None:
    changes = compare({"const": True}, {"const": 1})
    assert [(c.kind, c.level, c.message) for c in changes] == [
        ("enum-value-removed", "major", "value true no longer accepted"),
        ("enum-value-added", "minor", "value 1 now accepted"),
    ]


def test_a_constraint_every_allowed_value_already_meets_is_a_patch() -> None:
    assert verdict(compare({"const": "text"}, {"const": "text", "type": "string"})) == "patch"
    assert (
        verdict(compare({"enum": ["ab", "abc"]}, {"enum": ["ab", "abc"], "maxLength": 3}))
        == "patch"
    )
    # ... and one that rejects an allowed value is not.
    assert (
        verdict(compare({"enum": ["ab", "abc"]}, {"enum": ["ab", "abc"], "maxLength": 2}))
        == "major"
    )


def test_a_recursive_schema_is_compared_once_per_definition() -> None:
    def node(*extra: tuple[str, Any]) -> dict[str, Any]:
        members = {"next": {"$ref": "#/$defs/Node"}, **dict(extra)}
        return {
            "$defs": {
                "Node": {"type": "object", "properties": members, "additionalProperties": False}
            },
            "$ref": "#/$defs/Node",
        }

    changes = compare(node(), node(("value", {"type": "integer"})))
    assert [(c.kind, c.path) for c in changes] == [("member-added-optional", "value")]


# -- conservative: what cannot be classified is major --------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"$ref": "other.schema.json"}, {"$ref": "another.schema.json"}),
        ({"$dynamicRef": "#a"}, {"$dynamicRef": "#b"}),
        (
            {"unevaluatedProperties": False},
            {"unevaluatedProperties": False, "properties": {"a": {}}},
        ),
        ({"type": "strng"}, {"type": "string"}),
        ({"items": [{}]}, {"items": [{}, {}]}),
        ({"maxLength": "10"}, {"maxLength": "12"}),
    ],
    ids=[
        "unresolvable-ref",
        "dynamic-ref",
        "unevaluated",
        "malformed-type",
        "draft-7-items",
        "bad-bound",
    ],
)
def test_a_change_that_cannot_be_classified_is_major_and_says_why(old: Any, new: Any) -> None:
    changes = compare(old, new)
    unclassified = [c for c in changes if c.kind == "unclassified"]
    assert unclassified, changes
    assert all(c.level == "major" for c in unclassified)
    assert all("cannot" in c.message or "not" in c.message for c in unclassified)


def test_a_reference_into_another_file_unchanged_on_both_sides_is_no_change() -> None:
    ref = {"properties": {"at": {"$ref": "../common/formats.schema.json#/$defs/Timestamp"}}}
    assert compare(ref, copy.deepcopy(ref)) == []


def test_a_non_draft_2020_12_keyword_is_an_annotation() -> None:
    changes = compare({"x-note": 1, "dependencies": {"a": ["b"]}}, {"x-note": 2})
    assert {(c.kind, c.level) for c in changes} == {("annotation-changed", "patch")}
    assert len(changes) == 2


def test_a_change_prints_as_level_kind_location_message() -> None:
    change = planted(lambda s: entry(s)["required"].append("response"))[0]
    assert str(change) == (
        f"major member-made-required {SUITE}:{ENTRY}.response: member response is now "
        "required: documents without it become invalid"
    )
    assert change.as_dict()["file"] == SUITE
    assert change.as_dict()["schemaPath"] == "$defs.ToolResponse.required"


def test_a_shared_definitions_description_is_reported_in_its_own_file_only() -> None:
    changes = planted(lambda s: s[FORMATS]["$defs"]["Timestamp"].update(description="Reworded."))
    assert [(c.kind, c.file, c.path) for c in changes] == [
        ("annotation-changed", FORMATS, "$defs.Timestamp")
    ]


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_reordered_alternatives_and_enum_values_are_no_change() -> None:
    """Alternatives are a set: reordering them (and the values of their enums) must not pair
    unrelated alternatives, which would report a removed value (true and 1 differ in JSON)."""
    old = {"anyOf": [{"enum": [False, True]}, {"enum": [False, True, 0, 1]}]}
    new = {"anyOf": [{"enum": [1, 0, True, False]}, {"enum": [True, False]}]}
    assert compare(old, new) == []
    narrowed = {"anyOf": [{"enum": [True, False, 0]}, {"enum": [True, False]}]}
    assert [change.level for change in compare(old, narrowed)] == ["major"]


@pytest.mark.requirement("toolcall-spec.requirement.suite.on-miss-fail")
def test_on_miss_fail_is_recorded_as_a_new_value_and_a_changed_default() -> None:
    """0.1 -> now: ``fail`` joins the values and becomes the default. The default changed, so the
    comparison calls it major (a reader of 0.1 refuses ``fail``), although ``fail`` means what
    ``error`` meant; the CHANGELOG says so."""
    changes = compare_documents(
        {
            path: read_schema(RELEASE_0_1 / path)
            for path in all_schemas()
            if (RELEASE_0_1 / path).exists()
        },
        dict(all_schemas()),
    )
    on_miss = [
        (c.level, c.kind)
        for c in changes
        if c.file == SUITE and c.path == "tasks[].fixtures.onMiss"
    ]
    assert ("major", "default-changed") in on_miss
    assert ("minor", "enum-value-added") in on_miss
    assert ("major", "enum-value-removed") not in on_miss  # error stays accepted
    assert verdict(changes) == "major"
