"""Compile-time checks of the generated TypeScript (generated/typescript/index.d.ts) with the tsc
pinned in typescript/package-lock.json, ``--noEmit --strict``:

- every valid example document (examples/index.json) type-checks as its kind's generated type;
- tests/typescript/compile/wrong-documents.ts, documents TypeScript itself must refuse, compiles
  only thanks to its ``@ts-expect-error`` lines: each is needed (tsc reports an unused one), and
  without them tsc fails on exactly the marked lines;
- documents that break a rule TypeScript cannot state (the docs' list of rules only the validator
  enforces) type-check, and both validators refuse them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.node import GENERATED, NodeJudge, run, tsc
from support.repo import EXAMPLES

from toolcall_spec import validate

HERE = Path(__file__).parent
WRONG_DOCUMENTS = HERE / "compile" / "wrong-documents.ts"
EXPECT_ERROR = "// @ts-expect-error"
TYPES = (GENERATED / "index.js").as_posix()
"""The import specifier of the generated types (index.d.ts, imported as index.js)."""

TSC_OPTIONS = [
    "--noEmit",
    "--strict",
    "--target",
    "es2022",
    "--module",
    "esnext",
    "--moduleResolution",
    "bundler",
]


def type_names() -> dict[str, str]:
    """Each kind's generated type name (generated/typescript/kinds.json)."""
    manifest = json.loads((GENERATED / "kinds.json").read_text(encoding="utf-8"))
    return {kind: entry["type"] for kind, entry in manifest.items()}


def compile_errors(source: Path) -> list[str]:
    """tsc's error lines for ``source`` (empty when it type-checks)."""
    result = run([tsc(), *TSC_OPTIONS, str(source)], cwd=source.parent, timeout=180)
    errors = [line for line in result.stdout.splitlines() if ": error TS" in line]
    assert errors or result.returncode == 0, result.stdout + result.stderr
    return errors


def declarations(documents: list[tuple[str, Any]]) -> str:
    """A module declaring each document as a constant of the named type."""
    names = sorted({type_name for type_name, _ in documents})
    lines = [f"import type {{ {', '.join(names)} }} from {json.dumps(TYPES)};", ""]
    for index, (type_name, document) in enumerate(documents):
        lines.append(f"export const document{index}: {type_name} = {json.dumps(document)};")
    return "\n".join(lines) + "\n"


def valid_examples() -> list[tuple[str, Any]]:
    index = json.loads((EXAMPLES / "index.json").read_text(encoding="utf-8"))
    return [
        (entry["kind"], document)
        for entry in index["examples"]
        if entry["valid"]
        for document in documents_in(EXAMPLES / entry["file"])
    ]


def documents_in(path: Path) -> list[Any]:
    """The document of a .json file, or each line's document of a .jsonl file."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def test_every_valid_example_type_checks_as_its_kinds_type(tmp_path: Path) -> None:
    examples = valid_examples()
    assert {kind for kind, _ in examples} >= {"suite", "capabilities", "tool-call-event"}
    names = type_names()
    source = tmp_path / "examples.ts"
    source.write_text(declarations([(names[kind], doc) for kind, doc in examples]), "utf-8")
    assert compile_errors(source) == []


def test_a_document_of_the_wrong_kind_does_not_type_check(tmp_path: Path) -> None:
    # The check above can fail: a suite is not a CallToolResult.
    suite = next(doc for kind, doc in valid_examples() if kind == "suite")
    source = tmp_path / "wrong-kind.ts"
    source.write_text(declarations([(type_names()["call-tool-result"], suite)]), "utf-8")
    assert compile_errors(source) != []


@pytest.mark.requirement("toolcall-spec.requirement.suite.is-error-boolean")
def test_each_expected_error_in_the_wrong_documents_is_needed() -> None:
    # tsc fails on an unused @ts-expect-error (TS2578), so a clean run means every marked line
    # is an error TypeScript reports.
    assert WRONG_DOCUMENTS.read_text(encoding="utf-8").count(f"\n{EXPECT_ERROR} ") >= 1
    assert compile_errors(WRONG_DOCUMENTS) == []


def test_without_the_directives_tsc_fails_on_exactly_the_marked_lines(tmp_path: Path) -> None:
    lines = WRONG_DOCUMENTS.read_text(encoding="utf-8").splitlines()
    marked = {
        number + 1
        for number, line in enumerate(lines, start=1)
        if line.strip().startswith(EXPECT_ERROR)
    }
    assert len(marked) >= 10
    stripped = [
        ""
        if line.strip().startswith(EXPECT_ERROR)
        else line.replace('"../../../generated/typescript/index.js"', json.dumps(TYPES))
        for line in lines
    ]
    source = tmp_path / "stripped.ts"
    source.write_text("\n".join(stripped) + "\n", encoding="utf-8")
    failing = {
        int(m.group(1)) for e in compile_errors(source) if (m := re.search(r"\((\d+),\d+\)", e))
    }
    assert failing == marked


VALIDATOR_ONLY: list[tuple[str, str, str, dict[str, Any]]] = []
"""Documents that type-check but break a rule only the validator enforces: (rule, kind, type,
document). docs/typescript.md lists the same rules."""


def event(**members: Any) -> dict[str, Any]:
    return {
        "event_id": "123e4567-e89b-12d3-a456-426614174000",
        "event_type": "tool_call",
        "trace_id": "trace-1",
        "session_id": "session-1",
        "timestamp": "2026-11-30T12:00:00Z",
        "source": "server",
        **members,
    }


def suite_with_entry(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "suiteId": "core.openwop.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t1",
                "input": {},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
                "fixtures": {"toolResponses": [entry]},
            }
        ],
    }


def tool_returned(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventId": "0000000000000000",
        "runId": "tenant/0000000000000000",
        "schemaVersion": 1,
        "sequence": 0,
        "timestamp": "2026-11-30T12:00:00Z",
        "type": "agent.tool-returned",
        "payload": payload,
    }


VALIDATOR_ONLY = [
    ("pattern", "tool-call-event", "ToolCallEvent", event(country_code="usa")),
    ("pattern (uuid)", "tool-call-event", "ToolCallEvent", event(event_id="not-a-uuid")),
    (
        "format (date-time)",
        "tool-call-event",
        "ToolCallEvent",
        event(timestamp="2026-02-30T00:00:00Z"),
    ),
    (
        "maxLength",
        "tool-call-event",
        "ToolCallEvent",
        event(status="error", error_category="server", error_message="x" * 501),
    ),
    ("minLength", "tool-call-event", "ToolCallEvent", event(trace_id="")),
    ("maximum", "tool-call-event", "ToolCallEvent", event(is_retry=2)),
    ("minimum", "tool-call-event", "ToolCallEvent", event(latency_ms=-1)),
    ("integer", "tool-call-event", "ToolCallEvent", event(tokens_in=1.5)),
    ("status: error names a category", "tool-call-event", "ToolCallEvent", event(status="error")),
    (
        "a category only on an error",
        "tool-call-event",
        "ToolCallEvent",
        event(status="success", error_category="server"),
    ),
    (
        "argsMatch only with args",
        "suite",
        "AgentEvalSuite",
        suite_with_entry({"tool": "billing:lookup", "argsMatch": "exact"}),
    ),
    (
        "error code grammar (openwop. is reserved)",
        "error-envelope",
        "ErrorEnvelope",
        {"error": "openwop.custom", "message": "m"},
    ),
    (
        "error XOR outcome on agent.tool-returned",
        "run-event",
        "RunEvent",
        tool_returned(
            {
                "agentId": "a",
                "toolName": "t",
                "callId": "c",
                "outcome": "ok",
                "error": {"code": "x.y", "message": "m"},
            }
        ),
    ),
    ("payload by event type", "run-event", "RunEvent", tool_returned({"agentId": "a"})),
    (
        "exactly one of text and blob (oneOf)",
        "call-tool-result",
        "CallToolResult",
        {
            "content": [
                {"type": "resource", "resource": {"uri": "file:///a", "text": "t", "blob": "AA=="}}
            ]
        },
    ),
]


def test_rules_only_the_validator_enforces_type_check(tmp_path: Path) -> None:
    source = tmp_path / "validator-only.ts"
    source.write_text(
        declarations([(type_name, doc) for _, _, type_name, doc in VALIDATOR_ONLY]), "utf-8"
    )
    assert compile_errors(source) == []


@pytest.mark.parametrize(("rule", "kind", "document"), [(r, k, d) for r, k, _, d in VALIDATOR_ONLY])
def test_rules_only_the_validator_enforces_are_enforced_by_both_validators(
    node_judge: NodeJudge, rule: str, kind: str, document: dict[str, Any]
) -> None:
    assert [p for p in validate(document, kind) if p.severity == "error"], rule
    assert node_judge.judge(kind, document)["valid"] is False, rule
