"""``toolcall_spec.validate``: problems with paths in the
``tasks[0].fixtures.toolResponses[0].isError`` form, kind inference, warnings for valid but
suspicious documents, and an import of ``toolcall_spec`` that stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.documents import BASE, DROP, variant

import toolcall_spec
from toolcall_spec import Problem, validate
from toolcall_spec.catalog import KINDS, Kind, infer_kind, load_schema
from toolcall_spec.validation import MAX_MESSAGE_LENGTH, UnknownKindError, _within_length

ENTRY = ("tasks", 0, "fixtures", "toolResponses", 0)


def errors(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_valid_document_has_no_problems_and_its_kind_is_inferred(kind: Kind) -> None:
    assert infer_kind(BASE[kind]) == kind
    assert validate(BASE[kind]) == []
    assert validate(BASE[kind], kind) == []


@pytest.mark.requirement("toolcall-spec.requirement.suite.is-error-boolean")
def test_a_problem_names_the_full_path_of_the_member() -> None:
    problems = validate(variant("suite", ((*ENTRY, "isError"), "true")))
    assert [p.path for p in problems] == ["tasks[0].fixtures.toolResponses[0].isError"]
    assert problems[0].severity == "error"
    assert "boolean" in problems[0].message
    assert str(problems[0]).startswith("tasks[0].fixtures.toolResponses[0].isError: ")


@pytest.mark.parametrize(
    ("kind", "changes", "path"),
    [
        ("suite", [(("tasks",), [])], "tasks"),
        ("suite", [(("suiteId",), DROP)], "(root)"),
        (
            "ingest-batch",
            [(("events", 0, "error_category"), "network")],
            "events[0].error_category",
        ),
        ("run-event", [(("payload", "outcome"), 1)], "payload"),
        ("capabilities", [(("memory",), {"status": "stable"})], "memory"),
        ("capabilities", [(("extensions",), {"ab.cd": 1})], 'extensions["ab.cd"]'),
        ("call-tool-result", [(("content", 0, "type"), "video")], "content[0]"),
    ],
)
def test_paths_use_dotted_members_and_indices(
    kind: Kind, changes: list[tuple[tuple[str | int, ...], Any]], path: str
) -> None:
    assert path in {p.path for p in validate(variant(kind, *changes), kind)}


def test_a_problem_stays_on_one_line_whatever_the_document_holds() -> None:
    document = variant("capabilities", (("a\nb",), {"status": "stable"}))
    document["c\u2028d"] = 1
    result = variant("call-tool-result", (("isError",), "line 1\nline 2"))
    started = {"suiteId": "s", "suiteVersion": "1", "taskCount": 1, "modes": []}
    event = variant(
        "run-event",
        (("type",), "eval.started"),
        (("payload",), {**started, "fixtureRuns": {"a\nb": 1}}),
    )
    problems = validate(document) + validate(result) + validate(event)
    assert problems
    for problem in problems:
        assert "\n" not in str(problem)
        assert "\u2028" not in str(problem)
    assert 'payload.fixtureRuns["a\\nb"]' in {p.path for p in problems}


def test_unknown_kinds_and_documents_of_no_kind() -> None:
    with pytest.raises(UnknownKindError, match="unknown kind 'suites'"):
        validate({}, "suites")
    documents: tuple[object, ...] = (42, [], "suite", {"hello": "world"})
    for document in documents:
        (problem,) = validate(document)
        assert problem.path == "(root)"
        assert "cannot tell what kind" in problem.message
        assert all(kind in problem.message for kind in KINDS)


@pytest.mark.requirement("toolcall-spec.requirement.suite.warn-error-inside-response")
def test_a_success_entry_whose_response_carries_is_error_gets_a_warning() -> None:
    response = {"content": [{"type": "text", "text": "503"}], "isError": True}
    success = variant("suite", ((*ENTRY, "isError"), DROP), ((*ENTRY, "response"), response))
    (warning,) = validate(success)
    assert warning.severity == "warning"
    assert warning.path == "tasks[0].fixtures.toolResponses[0].response.isError"
    assert "isError: true" in warning.message
    assert str(warning).startswith(f"{warning.path}: warning: ")
    # Not when the entry itself records the failure, nor when the response has no isError.
    assert validate(variant("suite", ((*ENTRY, "response"), response))) == []
    plain = variant("suite", ((*ENTRY, "isError"), False), ((*ENTRY, "response"), {"ok": 1}))
    assert validate(plain) == []
    # A recorded success says isError: false, as the entry does: nothing to warn about.
    agreeing = {"content": [], "isError": False}
    assert (
        validate(variant("suite", ((*ENTRY, "isError"), DROP), ((*ENTRY, "response"), agreeing)))
        == []
    )
    # Any other value (a string, a number) is a failure written into an opaque payload.
    for lookalike in ("true", 1):
        looks: dict[str, object] = {"content": [], "isError": lookalike}
        (warned,) = validate(
            variant("suite", ((*ENTRY, "isError"), DROP), ((*ENTRY, "response"), looks))
        )
        assert warned.severity == "warning"
    # An invalid document gets its errors, not warnings about what it might mean.
    broken = variant("suite", ((*ENTRY, "isError"), DROP), ((*ENTRY, "response"), response))
    broken["tasks"][0]["fixtures"]["onMiss"] = "retry"
    assert [p.severity for p in validate(broken)] == ["error"]


REASON = pytest.mark.requirement("toolcall-spec.requirement.input.message-keeps-its-reason")


def _only_message(kind: Kind, path: str, *changes: tuple[tuple[str | int, ...], Any]) -> str:
    """The one problem's message, checked to be at the path and within the length."""
    (problem,) = errors(validate(variant(kind, *changes)))
    assert problem.path == path
    assert len(problem.message) <= MAX_MESSAGE_LENGTH
    assert "\n" not in problem.message
    return problem.message


@REASON
def test_messages_of_huge_values_are_cut() -> None:
    problems = validate(variant("call-tool-result", (("isError",), "x" * 10_000)))
    assert errors(problems)
    assert all(len(p.message) <= MAX_MESSAGE_LENGTH for p in problems)


@REASON
@pytest.mark.parametrize(
    ("kind", "member", "value", "start", "reason"),
    [
        (
            "tool-call-event",
            "error_message",
            "x" * 10_000,
            '"xxx',
            " is longer than 500 characters",
        ),
        (
            "tool-call-event",
            "locale",
            "é\u2028" * 300,
            '"é\\u2028é',
            " is longer than 35 characters",
        ),
        (
            "tool-call-event",
            "status",
            "s" * 1_000,
            '"sss',
            ' is not one of the allowed values: "success", "error"',
        ),
        ("tool-call-event", "latency_ms", "9" * 1_000, '"999', ' is not of type "number"'),
        (
            "tool-call-event",
            "latency_ms",
            {f"k{i}": "v" * 40 for i in range(20)},
            '{"k0":"vvv',
            ' is not of type "number"',
        ),
        ("tool-call-event", "locale", 1.5e300, "1500000000", ' is not of type "string"'),
        ("suite", "version", "1" * 1_000, '"111', r' does not match "^[0-9]+\.[0-9]+\.[0-9]+$"'),
    ],
)
def test_a_long_value_is_shortened_and_the_reason_kept(
    kind: Kind, member: str, value: Any, start: str, reason: str
) -> None:
    """The value is cut, never the words after it: the limit, the allowed values, the pattern,
    the expected type. The message still starts with the value as it was sent (a float as the
    validator writes it, in full digits)."""
    changes: list[tuple[tuple[str | int, ...], Any]] = []
    if member == "status":  # not an error any more: without the error members
        changes = [(("error_category",), DROP), (("error_message",), DROP)]
    message = _only_message(kind, member, *changes, ((member,), value))
    assert message.startswith(start)
    assert message.endswith(reason)
    assert "…" in message


@REASON
@given(st.text(st.characters(codec="utf-8"), min_size=501, max_size=3_000))
@settings(max_examples=50)
def test_any_over_long_message_says_it_is_longer_than_the_limit(text: str) -> None:
    message = _only_message("tool-call-event", "error_message", (("error_message",), text))
    assert message.endswith(" is longer than 500 characters")


@REASON
def test_a_long_member_name_is_shortened_and_the_reason_kept() -> None:
    (problem,) = errors(validate(variant("tool-call-event", (("y" * 1_000,), 1))))
    assert len(problem.message) <= MAX_MESSAGE_LENGTH
    assert problem.message.startswith("Additional properties are not allowed ('yyyy")
    assert problem.message.endswith(" was unexpected)")


@REASON
def test_a_message_of_long_words_alone_keeps_both_ends() -> None:
    """The last resorts: a quoted value too short to make room leaves it to the longest word;
    with no word long enough either, the middle goes, and the start and the end of what was
    said stay."""
    words = " ".join(f"w{i:03d}" for i in range(100))
    cut = _within_length(words, "absent", 50)
    assert len(cut) == 50
    assert cut.startswith("w000 w001")
    assert cut.endswith("w098 w099")
    assert _within_length("short", "x", 50) == "short"
    # a quoted value too short to make room: the longest word is shortened instead
    long_word = "1 is not one of: " + "z" * 80
    assert _within_length(long_word, "1", 50) == "1 is not one of: " + "z" * 32 + "…"


def test_problems_are_values() -> None:
    problem = Problem("tasks[0]", "bad")
    assert problem.as_dict() == {"path": "tasks[0]", "message": "bad", "severity": "error"}
    assert json.loads(json.dumps(problem.as_dict()))["path"] == "tasks[0]"


def test_importing_toolcall_spec_stays_light() -> None:
    heavy = ["pydantic", "jsonschema_rs", "jsonschema", "mcp", "starlette", "uvicorn", "httpx"]
    script = (
        "import sys, toolcall_spec\n"
        f"print([m for m in {heavy!r} if m in sys.modules])\n"
        "toolcall_spec.validate({'content': []})\n"
        "print(sorted(m for m in ('pydantic', 'mcp') if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    after_import, after_validate = run.stdout.splitlines()
    assert after_import == "[]", "import toolcall_spec pulled in a heavy module"
    assert after_validate == "[]", "validate needs neither pydantic nor mcp"
    assert toolcall_spec.__version__


@pytest.mark.requirement("toolcall-spec.requirement.suite.on-miss-fail")
@pytest.mark.parametrize(("on_miss", "warned"), [("fail", False), ("live", False), ("error", True)])
def test_on_miss_error_validates_with_a_deprecation_warning(on_miss: str, warned: bool) -> None:
    suite = variant("suite", (("tasks", 0, "fixtures", "onMiss"), on_miss))
    problems = validate(suite, "suite")
    assert [p for p in problems if p.severity == "error"] == []
    warnings = [p for p in problems if p.path == "tasks[0].fixtures.onMiss"]
    assert bool(warnings) is warned
    assert all(p.severity == "warning" and '"fail"' in p.message for p in warnings)


@pytest.mark.requirement("toolcall-spec.requirement.suite.on-miss-fail")
def test_on_miss_defaults_to_fail_and_refuses_other_values() -> None:
    on_miss = load_schema("suite")["$defs"]["Fixtures"]["properties"]["onMiss"]
    assert on_miss["default"] == "fail"
    suite = variant("suite", (("tasks", 0, "fixtures", "onMiss"), "skip"))
    assert [p.path for p in validate(suite, "suite")] == ["tasks[0].fixtures.onMiss"]
