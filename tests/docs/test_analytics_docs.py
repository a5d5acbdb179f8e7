"""The analytics guide's examples run as written and print what the page says they print."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from support.repo import REPO

from toolcall_spec.analytics import classify_exception, classify_result

PAGE = REPO / "docs" / "analytics.md"


def block(kind: str, name: str) -> str:
    """The fenced block that follows ``<!-- kind: name -->`` on the page."""
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {kind}: {name} -->\n```\w+\n(.*?)```", text, re.DOTALL)
    assert match is not None, f"no {kind} block named {name} in {PAGE.name}"
    return match.group(1)


def assert_example_prints_its_output(name: str) -> None:
    """The page's example block ``name``, run as a program, prints its output block."""
    finished = subprocess.run(
        [sys.executable, "-c", block("example", name)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
    )
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == block("example-output", name)


@pytest.mark.requirement("toolcall-spec.requirement.analytics.one-event-per-call")
def test_the_wrapped_server_example_prints_what_the_page_shows() -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    assert_example_prints_its_output("wrap-a-server")


@pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")
def test_the_wrapped_fastmcp_server_example_prints_what_the_page_shows() -> None:
    pytest.importorskip("fastmcp", reason="the fastmcp extra is not installed")
    assert_example_prints_its_output("wrap-a-fastmcp-server")


def test_the_classify_snippet_comments_are_true() -> None:
    types = pytest.importorskip("mcp.types", reason="the mcp extra is not installed")
    text = PAGE.read_text(encoding="utf-8")
    shown = re.findall(r"^# (\{.*\})$", text, re.MULTILINE)
    sdk_result = types.CallToolResult(
        content=[types.TextContent(type="text", text="no")], is_error=True
    )
    actual = [
        classify_result({"content": [{"type": "text", "text": " boom "}], "isError": True}),
        classify_result({"content": [], "isError": "true"}),
        classify_exception(RuntimeError("no customer max@example.com")),
        classify_result(sdk_result),
    ]
    assert shown == [repr(classification.fields()) for classification in actual]
