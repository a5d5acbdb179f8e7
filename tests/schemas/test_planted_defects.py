"""Every property, invariant and lint check fails on a planted defect, so none passes vacuously.

Each test plants one defect (a model with a lax ``bool``, a schema copy without a rule, a truthy
``is_tool_error``), then runs the very check function the real test runs
(tests/support/checks.py) over the same strategies (tests/support/strategies/), and asserts that
``hypothesis.find`` turns up a document on which the check reports the defect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field, StrictStr, create_model
from support.checks import (
    accepted_by,
    disagreement,
    error_fields_violation,
    exclusivity_violation,
    fast,
    foreign_pattern_properties,
    identity_problems,
    invalid_fraction,
    judges,
    literal_true_mismatch,
    meta_schema_problems,
    model_json,
    model_python,
    oracle,
    schema_copy,
    undeclared_additional_properties,
    unresolvable_refs,
)
from support.search import found
from support.strategies import (
    BOOLEAN_LOOKALIKES,
    ERROR_CATEGORIES,
    events_of_type,
    json_values,
    near_miss,
    tool_returned_payloads,
    valid_documents,
)

from toolcall_spec import models
from toolcall_spec.catalog import all_schemas
from toolcall_spec.model_bases import ToolCallEventRules
from toolcall_spec.models.events import run_event_payloads_schema as payloads

PAYLOADS_FILE = "events/run-event-payloads.schema.json"
TOOL_CALL_FILE = "analytics/tool-call-event.schema.json"


# --- planted defects ----------------------------------------------------------------------------

LaxCallToolResult = create_model(
    "LaxCallToolResult", __base__=models.CallToolResult, isError=(bool, False)
)
"""A plain ``bool`` instead of ``StrictBool``: ``"true"`` and ``1`` read as ``True``."""


class NoExclusivityToolReturned(payloads.AgentToolReturned):
    """``agent.tool-returned`` without the generated ``not: {required: [error, outcome]}``."""

    __json_schema_not_required_groups__ = ()


class NoExclusivityRunEvent(models.RunEvent):
    """A run event whose ``agent.tool-returned`` payload is checked by the model above."""

    # The planted defect: a plain method shadows the rules base's validator, so it never runs.
    @classmethod
    def _payload_matches_type(cls, data: Any) -> Any:  # type: ignore[override]
        if isinstance(data, dict) and data.get("type") == "agent.tool-returned":
            NoExclusivityToolReturned.model_validate(data.get("payload"))
        return data


class ErrorFieldsAnywhereEvent(models.ToolCallEvent):
    """A tool_call event without the hand-written ``else`` rule of the schema."""

    # The planted defect: shadows ToolCallEventRules' validator, so the rule never runs.
    @classmethod
    def _error_fields_only_on_error(cls, data: Any) -> Any:  # type: ignore[override]
        return data


class StrictIntSummary(models.EvalSummary):
    """An eval summary that reads ``1.0`` as pydantic does, not as JSON Schema does."""

    # The planted defect: shadows JsonModel's validator, so the rule never runs.
    @classmethod
    def _json_schema_numbers_and_patterns(cls, data: Any) -> Any:  # type: ignore[override]
        return data


TIMESTAMP_PATTERN = all_schemas()["common/formats.schema.json"]["$defs"]["Timestamp"]["pattern"]
PatternOnlyRunEvent = create_model(
    "PatternOnlyRunEvent",
    __base__=models.RunEvent,
    timestamp=(Annotated[StrictStr, Field(pattern=TIMESTAMP_PATTERN)], ...),
)
"""A run event whose timestamp is checked by its pattern only, as the generator emits it."""


def without(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """``schema`` (a copy) with the member at ``path`` removed."""
    node = schema
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return schema


def truthy_is_tool_error(result: object) -> bool:
    return isinstance(result, Mapping) and bool(result.get("isError"))


def equality_is_tool_error(result: object) -> bool:
    return isinstance(result, Mapping) and result.get("isError") == True  # noqa: E712


# --- the differential property ------------------------------------------------------------------


def test_the_differential_catches_a_model_with_a_lax_bool() -> None:
    panel = judges("call-tool-result", model_python=model_python(LaxCallToolResult))
    document = found(near_miss("call-tool-result"), lambda d: disagreement(panel, d))
    assert panel["model_python"](document)
    assert not panel["oracle"](document)


def test_the_differential_catches_a_model_that_refuses_integral_floats() -> None:
    panel = judges("eval-summary", model_json=model_json(StrictIntSummary))
    document = found(valid_documents("eval-summary"), lambda d: disagreement(panel, d))
    assert not panel["model_json"](document)
    assert panel["oracle"](document)


def test_the_differential_catches_a_schema_without_exclusivity() -> None:
    overrides = {
        PAYLOADS_FILE: without(schema_copy(PAYLOADS_FILE), "$defs", "AgentToolReturned", "not")
    }
    panel = judges("run-event", fast=fast("run-event", overrides))
    document = found(near_miss("run-event"), lambda d: disagreement(panel, d))
    assert panel["fast"](document)
    assert not panel["model_python"](document)


def test_the_differential_catches_a_date_time_checked_by_its_pattern_only() -> None:
    panel = judges("run-event", model_python=model_python(PatternOnlyRunEvent))
    impossible_days = st.sampled_from(
        ["2026-02-30T00:00:00Z", "2023-02-29T12:00:00Z", "2026-04-31T00:00:00+01:00"]
    )
    documents = st.builds(
        lambda e, t: {**e, "timestamp": t}, valid_documents("run-event"), impossible_days
    )
    document = found(documents, lambda d: disagreement(panel, d))
    assert panel["model_python"](document)
    assert not panel["fast"](document)


def test_near_misses_that_change_nothing_are_caught_as_vacuous() -> None:
    drawn: list[Any] = []

    @settings(max_examples=100, deadline=None, database=None)
    @given(valid_documents("tool-call-event"))
    def collect(document: Any) -> None:
        drawn.append(document)

    collect()
    assert invalid_fraction(oracle("tool-call-event"), drawn) < 0.75


# --- the invariants -----------------------------------------------------------------------------


@pytest.mark.parametrize("defect", [truthy_is_tool_error, equality_is_tool_error])
def test_only_literal_true_catches_a_loose_is_tool_error(defect: Callable[[object], bool]) -> None:
    value = found(
        json_values() | st.sampled_from(BOOLEAN_LOOKALIKES),
        lambda v: literal_true_mismatch(defect, v),
    )
    assert value is not True
    assert defect({"isError": value})


def test_a_lax_bool_model_accepts_a_non_boolean_is_error() -> None:
    panel = judges("call-tool-result", model_json=model_json(LaxCallToolResult))
    documents = st.builds(
        lambda r, v: {**r, "isError": v},
        valid_documents("call-tool-result"),
        st.sampled_from(BOOLEAN_LOOKALIKES),
    )
    document = found(documents, lambda d: accepted_by(panel, d))
    assert accepted_by(panel, document) == ["model_json"]


failed_calls = events_of_type(
    "agent.tool-returned",
    tool_returned_payloads.filter(lambda p: "error" in p and "outcome" not in p),
)


def test_exclusivity_catches_a_schema_copy_without_its_not() -> None:
    overrides = {
        PAYLOADS_FILE: without(schema_copy(PAYLOADS_FILE), "$defs", "AgentToolReturned", "not")
    }
    panel = judges(
        "run-event", fast=fast("run-event", overrides), oracle=oracle("run-event", overrides)
    )
    found(st.tuples(failed_calls, json_values()), lambda pair: exclusivity_violation(panel, *pair))


def test_exclusivity_catches_a_model_without_its_not() -> None:
    panel = judges("run-event", model_python=model_python(NoExclusivityRunEvent))
    event, outcome = found(
        st.tuples(failed_calls, json_values()), lambda pair: exclusivity_violation(panel, *pair)
    )
    assert "model_python accepts error beside outcome" in str(
        exclusivity_violation(panel, event, outcome)
    )


def test_error_fields_only_on_error_catches_a_schema_copy_without_its_else() -> None:
    overrides = {TOOL_CALL_FILE: without(schema_copy(TOOL_CALL_FILE), "else")}
    panel = judges("tool-call-event", fast=fast("tool-call-event", overrides))
    categories = st.sampled_from(ERROR_CATEGORIES)
    found(
        st.tuples(valid_documents("tool-call-event"), categories),
        lambda pair: error_fields_violation(panel, *pair),
    )


def test_error_fields_only_on_error_catches_a_model_without_its_rule() -> None:
    assert issubclass(ErrorFieldsAnywhereEvent, ToolCallEventRules)
    panel = judges("tool-call-event", model_json=model_json(ErrorFieldsAnywhereEvent))
    categories = st.sampled_from(ERROR_CATEGORIES)
    event, category = found(
        st.tuples(valid_documents("tool-call-event"), categories),
        lambda pair: error_fields_violation(panel, *pair),
    )
    assert "model_json accepts" in str(error_fields_violation(panel, event, category))


# --- schema lint --------------------------------------------------------------------------------

SUITE_FILE = "suites/agent-eval-suite.schema.json"


def test_the_meta_schema_check_catches_a_misspelt_type() -> None:
    schema = schema_copy(SUITE_FILE)
    schema["$defs"]["ToolResponse"]["properties"]["isError"]["type"] = "bool"
    assert meta_schema_problems(schema) != []


def test_the_identity_check_catches_a_moved_id_and_an_old_draft() -> None:
    schema = schema_copy(SUITE_FILE)
    schema["$id"] = (
        "https://toolcall-spec.github.io/toolcall-spec/schemas/agent-eval-suite.schema.json"
    )
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    assert len(identity_problems(SUITE_FILE, schema)) == 2


def test_the_additional_properties_check_catches_an_open_default() -> None:
    schema = without(schema_copy(SUITE_FILE), "$defs", "ToolResponse", "additionalProperties")
    assert undeclared_additional_properties(schema) == ["#/$defs/ToolResponse"]


def test_the_hatch_check_catches_a_foreign_pattern() -> None:
    schema = schema_copy(PAYLOADS_FILE)
    schema["$defs"]["ErrorObject"]["patternProperties"] = {"^x-": {}}
    assert foreign_pattern_properties(schema) == ["#/$defs/ErrorObject/patternProperties/^x-"]


def test_the_ref_check_catches_a_ref_that_needs_the_network() -> None:
    schema = schema_copy("analytics/ingest-batch.schema.json")
    schema["properties"]["events"]["items"]["$ref"] = "https://example.com/event.schema.json"
    problems = unresolvable_refs({**all_schemas(), "analytics/ingest-batch.schema.json": schema})
    assert len(problems) == 1
