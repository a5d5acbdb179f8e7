"""An Inspect AI eval end to end on ``serve-fixtures``: the task of docs/examples/inspect_replay.py
(the file the docs show), its tools served from a suite over MCP stdio, driven by Inspect's
scripted mock model. A recorded failure reaches the model as a tool error, a call past the
recording is a miss, and the miss count is the sample's score, read from the ``--log`` summary.

inspect-ai is not a dependency of the package: ``nox -s inspect`` installs it (pinned) and sets
TOOLCALL_SPEC_REQUIRE_INSPECT, under which its absence fails this module rather than skipping it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.repo import EXAMPLES, REPO

if os.environ.get("TOOLCALL_SPEC_REQUIRE_INSPECT"):
    import inspect_ai  # noqa: F401  (nox -s inspect: missing is a failure, not a skip)
pytest.importorskip("inspect_ai", reason="inspect-ai is not installed (nox -s inspect)")
pytest.importorskip("mcp", reason="the mcp extra is not installed")

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

RULES = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-rules")
MISS = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-miss")
TOOLS_LIST = pytest.mark.requirement("toolcall-spec.requirement.mcp.serve-fixtures-tools-list")

EXAMPLE = REPO / "docs" / "examples" / "inspect_replay.py"
SUITE = EXAMPLES / "suites" / "rfc0245-fail-then-succeed.json"
"""One task: billing:lookup {"id": "c-1"} fails (isError: true), then succeeds."""
TOOL = "billing:lookup"
MODEL = "mockllm/model"
USAGE = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
"""Given to every scripted output: without usage, the mock model counts tokens with tiktoken,
which downloads its encoding at run time."""


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("inspect_replay", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scripted(*outputs: ModelOutput) -> list[ModelOutput]:
    for output in outputs:
        output.usage = USAGE
    return list(outputs)


def toolcall_spec() -> str:
    """The command of this interpreter's environment (the package under test)."""
    return str(Path(sys.executable).parent / "toolcall-spec")


@RULES
@MISS
@TOOLS_LIST
def test_an_inspect_eval_sees_the_recorded_failure_and_scores_the_misses(tmp_path: Path) -> None:
    """About 15 s: Inspect's eval machinery, and a serve-fixtures process started and stopped."""
    lookup = {"id": "c-1"}
    model = get_model(
        MODEL,
        custom_outputs=scripted(
            ModelOutput.for_tool_call(MODEL, TOOL, lookup),  # the recorded failure
            ModelOutput.for_tool_call(MODEL, TOOL, lookup),  # the recorded success
            ModelOutput.for_tool_call(MODEL, TOOL, lookup),  # past the recording: a miss
            ModelOutput.from_content(MODEL, "The balance of c-1 is 42."),
        ),
    )
    replay = example().replay_recording(
        suite=str(SUITE), command=toolcall_spec(), log_dir=str(tmp_path / "fixtures")
    )
    [log] = inspect_eval(replay, model=model, log_dir=str(tmp_path / "logs"), display="none")

    assert log.status == "success", log.error
    assert log.samples is not None
    [sample] = log.samples
    assert sample.id == "lookup-recovers"
    answers = [message for message in sample.messages if isinstance(message, ChatMessageTool)]
    assert [message.function for message in answers] == [TOOL] * 3
    failure, success, miss = answers
    # isError: true reached the model as a tool error carrying the recorded content.
    assert failure.error is not None
    assert json.loads(failure.error.message) == {"error": "upstream_down"}
    assert success.error is None
    assert json.loads(success.text) == {"id": "c-1", "balance": 42}
    assert miss.error is not None
    assert miss.error.message.startswith("fixture miss: no unconsumed fixture entry")

    # The score: the misses of the serve-fixtures summary, and the summary itself.
    assert sample.scores is not None
    score = sample.scores["fixture_misses"]
    assert score.value == 1
    summary: dict[str, Any] = score.metadata or {}
    assert summary["fixtureMissCount"] == 1
    assert summary["callCount"] == 3
    assert summary["servedEntries"] == [0, 1]
    assert log.results is not None
    [scores] = log.results.scores
    assert scores.metrics["total"].value == 1
