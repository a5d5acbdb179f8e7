"""The named invariants of the package, each its own property over generated documents, checked in
every judge (the jsonschema oracle, the fast validator, the models reading JSON text and Python
objects). tests/schemas/test_planted_defects.py runs the same check functions on planted defects."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.checks import (
    accepted_by,
    error_fields_violation,
    exclusivity_violation,
    judges,
    literal_true_mismatch,
)
from support.strategies import (
    BOOLEAN_LOOKALIKES,
    ERROR_CATEGORIES,
    events_of_type,
    json_values,
    tool_returned_payloads,
    valid_documents,
)

from toolcall_spec.rules import is_literal_true, is_tool_error

INVARIANT = settings(max_examples=300, deadline=None)

any_value = json_values() | st.sampled_from(BOOLEAN_LOOKALIKES) | st.booleans()
not_a_boolean = (json_values() | st.sampled_from(BOOLEAN_LOOKALIKES)).filter(
    lambda v: not isinstance(v, bool)
)


@pytest.mark.requirement("toolcall-spec.requirement.core.only-literal-true")
@INVARIANT
@given(value=any_value)
def test_only_literal_true_is_an_error(value: Any) -> None:
    assert literal_true_mismatch(is_tool_error, value) is None
    assert is_literal_true(value) is (value is True)


@pytest.mark.requirement("toolcall-spec.requirement.core.only-literal-true")
@pytest.mark.requirement("toolcall-spec.requirement.suite.is-error-boolean")
@INVARIANT
@given(
    result=valid_documents("call-tool-result"),
    suite=valid_documents("suite"),
    value=not_a_boolean,
)
def test_a_non_boolean_is_error_is_rejected_by_schemas_and_models(
    result: dict[str, Any], suite: dict[str, Any], value: Any
) -> None:
    """Slow on purpose (over 10 s): each example is judged by every schema and every generated
    model."""
    assert accepted_by(judges("call-tool-result"), {**result, "isError": value}) == []
    entries = suite["tasks"][0].setdefault("fixtures", {}).setdefault("toolResponses", [])
    entries.append({"tool": "billing:lookup", "isError": value})
    assert accepted_by(judges("suite"), suite) == []


failed_calls = events_of_type(
    "agent.tool-returned",
    tool_returned_payloads.filter(lambda p: "error" in p and "outcome" not in p),
)


@pytest.mark.requirement("toolcall-spec.requirement.events.error-outcome-exclusive")
@INVARIANT
@given(event=failed_calls, outcome=json_values())
def test_error_and_outcome_are_mutually_exclusive(event: dict[str, Any], outcome: Any) -> None:
    """Slow on purpose (over 10 s): each example is judged by the schema and the models."""
    assert exclusivity_violation(judges("run-event"), event, outcome) is None


@pytest.mark.requirement("toolcall-spec.requirement.analytics.error-fields-only-on-error")
@INVARIANT
@given(event=valid_documents("tool-call-event"), category=st.sampled_from(ERROR_CATEGORIES))
def test_error_fields_appear_only_on_status_error(event: dict[str, Any], category: str) -> None:
    assert error_fields_violation(judges("tool-call-event"), event, category) is None
