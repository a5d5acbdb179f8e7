"""Classification of a returned result, a raised exception and a call refused before the handler
into the tool_call fields. The first cases are the upstream review's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.strategies.pii_text import card_numbers, emails

from toolcall_spec.analytics.classify import (
    MAX_ERROR_MESSAGE_LENGTH,
    MESSAGE_SAFETY_CEILING,
    Classification,
    classify_exception,
    classify_pre_handler_failure,
    classify_result,
    error_message,
    first_text,
)
from toolcall_spec.rules import is_tool_error

TOOL_ERROR = pytest.mark.requirement("toolcall-spec.requirement.analytics.tool-error-category")
FIRST_TEXT = pytest.mark.requirement("toolcall-spec.requirement.analytics.message-first-text")
CLAMPED = pytest.mark.requirement("toolcall-spec.requirement.analytics.message-clamped")
PII = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")
THROWN = pytest.mark.requirement("toolcall-spec.requirement.analytics.thrown-unknown")
NO_CAPTURE = pytest.mark.requirement("toolcall-spec.requirement.analytics.status-without-capture")


def text_result(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


@TOOL_ERROR
@FIRST_TEXT
def test_an_error_result_with_text_gives_error_tool_error_and_the_text() -> None:
    result = text_result("boom", isError=True)
    assert classify_result(result).fields() == {
        "status": "error",
        "error_category": "tool_error",
        "error_message": "boom",
    }


@FIRST_TEXT
def test_the_message_is_the_first_text_item_trimmed() -> None:
    result = {
        "isError": True,
        "content": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "  This offer reference has expired.\n"},
            {"type": "text", "text": "second"},
        ],
    }
    assert classify_result(result).error_message == "This offer reference has expired."


@TOOL_ERROR
@FIRST_TEXT
@pytest.mark.parametrize(
    "content",
    [[], [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], [{"type": "text"}]],
)
def test_an_error_result_without_text_gives_no_message(content: list[Any]) -> None:
    assert classify_result({"isError": True, "content": content}).fields() == {
        "status": "error",
        "error_category": "tool_error",
    }


@TOOL_ERROR
@pytest.mark.requirement("toolcall-spec.requirement.core.only-literal-true")
@pytest.mark.parametrize("flag", [False, "true", "True", 1, 1.0, None, "1", [], {}])
def test_anything_but_the_boolean_true_is_a_success(flag: object) -> None:
    assert classify_result(text_result("boom", isError=flag)).fields() == {"status": "success"}


@TOOL_ERROR
def test_a_missing_flag_is_a_success() -> None:
    assert classify_result(text_result("boom")) == Classification("success")


@TOOL_ERROR
@given(st.dictionaries(st.text(max_size=8), st.none() | st.booleans() | st.integers() | st.text()))
@example({"is_error": None})  # what random test order once drew
@example({"is_error": True, "isError": True})
def test_status_is_error_exactly_when_the_one_rule_says_so(result: dict[str, Any]) -> None:
    """Any wire mapping; one that has only the SDK's snake_case ``is_error`` is refused whatever
    else it holds (tests/analytics/test_analytics_representations.py says why)."""
    if "is_error" in result and "isError" not in result:
        with pytest.raises(TypeError, match="model_dump"):
            classify_result(result)
        return
    classification = classify_result(result)
    assert classification.is_error is is_tool_error(result)
    assert (classification.error_category == "tool_error") is is_tool_error(result)


@CLAMPED
def test_the_message_is_clamped_to_500_characters() -> None:
    assert MAX_ERROR_MESSAGE_LENGTH == 500
    text = "".join(f"step-{i:04d}; " for i in range(100))  # 1,100 characters, no PII
    message = classify_result(text_result(text, isError=True)).error_message
    assert message == text[:500]
    assert len(message) == 500
    exact = "y" * 700
    assert classify_exception(exact).error_message == "y" * 500


@CLAMPED
@PII
@pytest.mark.parametrize("cut", range(480, 500))
def test_a_clamp_never_leaves_half_an_address_readable(cut: int) -> None:
    """The address straddles the 500th character wherever it starts around the clamp."""
    text = "x" * cut + " max.mustermann@example.com trailing text"
    for classification in (
        classify_result(text_result(text, isError=True)),
        classify_exception(RuntimeError(text)),
    ):
        message = classification.error_message
        assert message is not None
        assert len(message) <= MAX_ERROR_MESSAGE_LENGTH
        assert "max" not in message
        assert "@" not in message
        assert "mustermann" not in message


@PII
@CLAMPED
@given(emails(), st.integers(0, 6_000))
def test_no_address_survives_on_either_path_wherever_it_sits(address: str, position: int) -> None:
    text = ("lorem ipsum " * 600)[:position] + " " + address + " and more"
    for classification in (
        classify_result(text_result(text, isError=True)),
        classify_exception(text),
        classify_pre_handler_failure(text),
    ):
        message = classification.error_message or ""
        assert "@" not in message
        assert len(message) <= MAX_ERROR_MESSAGE_LENGTH


@PII
@CLAMPED
@given(card_numbers(), st.floats(0, 1, exclude_min=True, exclude_max=True))
def test_a_card_cut_by_the_safety_ceiling_is_not_kept_in_part(card: str, where: float) -> None:
    """Long addresses shrink to short tokens, which brings the text near the ceiling inside the
    500 kept characters; a card the ceiling cuts in two must not survive as a fragment."""
    at = MESSAGE_SAFETY_CEILING - max(1, min(len(card) - 1, round(where * len(card))))
    count = 28  # 28 tokens and their spaces stay under 500 characters
    size = (at - count) // count  # so the addresses and their spaces end before the card
    address = "a" * 64 + "@" + "d" * (size - 69) + ".com"
    filler = " ".join([address] * count)
    text = filler + " " * (at - len(filler)) + card + " tail"
    message = error_message(text) or ""
    assert message.count("[EMAIL_REDACTED]") == count
    digits = "".join(c for c in message if c.isdigit())
    assert digits == "", message


@THROWN
@PII
def test_a_thrown_message_is_stripped_not_passed_through() -> None:
    exc = RuntimeError("customer max@example.com not found")
    assert classify_exception(exc).fields() == {
        "status": "error",
        "error_category": "unknown",
        "error_message": "customer [EMAIL_REDACTED] not found",
    }


@THROWN
def test_an_exception_without_a_message_is_named_by_its_type() -> None:
    assert classify_exception(KeyError()).error_message == "KeyError"
    assert classify_exception(ValueError("   ")).error_message == "ValueError"


@THROWN
def test_a_thrown_message_given_as_text() -> None:
    assert classify_exception("  disk full ").fields() == {
        "status": "error",
        "error_category": "unknown",
        "error_message": "disk full",
    }


@NO_CAPTURE
def test_without_output_capture_status_and_category_stay_and_the_message_goes() -> None:
    result = text_result("offer expired for max@example.com", isError=True)
    assert classify_result(result, capture_output=False).fields() == {
        "status": "error",
        "error_category": "tool_error",
    }
    assert classify_result(text_result("fine"), capture_output=False).fields() == {
        "status": "success"
    }
    refused = classify_pre_handler_failure("Unknown tool: x", capture_output=False)
    assert refused.fields() == {"status": "error", "error_category": "validation"}


@pytest.mark.requirement("toolcall-spec.requirement.analytics.pre-handler-validation")
def test_a_refused_call_is_a_validation_error_with_the_text_stripped() -> None:
    text = "1 validation error for addArguments\na\n  input_value='max@example.com'"
    assert classify_pre_handler_failure(text).fields() == {
        "status": "error",
        "error_category": "validation",
        "error_message": "1 validation error for addArguments\na\n  input_value='[EMAIL_REDACTED]'",
    }


@pytest.mark.requirement("toolcall-spec.requirement.analytics.error-fields-only-on-error")
@given(
    st.one_of(
        st.builds(classify_result, st.builds(text_result, st.text(), isError=st.booleans())),
        st.builds(classify_exception, st.text()),
        st.builds(classify_pre_handler_failure, st.none() | st.text()),
    )
)
def test_error_members_appear_only_on_errors(classification: Classification) -> None:
    fields = classification.fields()
    assert ("error_category" in fields) is (fields["status"] == "error")
    if "error_message" in fields:
        assert fields["status"] == "error"
        assert 0 < len(fields["error_message"]) <= MAX_ERROR_MESSAGE_LENGTH


@pytest.mark.parametrize(
    ("result", "text"),
    [
        ({"content": "not a list"}, None),
        ({"content": [{"type": "text", "text": 5}]}, None),
        ({"content": ["text", {"type": "text", "text": "b"}]}, "b"),
        ({}, None),
    ],
)
def test_first_text_reads_only_well_formed_text_items(result: dict[str, Any], text: Any) -> None:
    assert first_text(result) == text
