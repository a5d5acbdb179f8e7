"""The tutorial and the own-agent page work as written: the tutorial's commands, run in a fresh
folder as a user types them, give what the page says; every Python block of the own-agent page
runs, in order, and prints what the page says it prints."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from support.cli import run_cli
from support.repo import REPO

DOCS = REPO / "docs"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", page.read_text("utf-8"), re.MULTILINE | re.DOTALL)


def test_the_own_agent_example_runs_and_prints_what_the_page_says() -> None:
    blocks = python_blocks(DOCS / "own-agent.md")
    assert len(blocks) == 2
    namespace: dict[str, object] = {"__name__": "own_agent_example"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for block in blocks:
            exec(compile(block, "docs/own-agent.md", "exec"), namespace)
    assert printed.getvalue().splitlines() == ["4", "[0, 1]", "[]"]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_tutorial_path_from_template_to_promoted_suite(workdir: Path) -> None:
    made = run_cli("new", "suite", "-o", workdir / "my-suite.json")
    assert made.returncode == 0, made.stderr
    suite_path = workdir / "my-suite.json"
    suite = json.loads(suite_path.read_text("utf-8"))
    entries = suite["tasks"][0]["fixtures"]["toolResponses"]
    assert entries[0]["isError"] is True  # the template starts with a recorded failure

    # Step 2: the classic mistake is refused at its path.
    entries[0]["isError"] = "true"
    broken = workdir / "broken.json"
    broken.write_text(json.dumps(suite), encoding="utf-8")
    refused = run_cli("validate", broken)
    assert refused.returncode == 1
    assert "tasks[0].fixtures.toolResponses[0].isError" in refused.stdout

    # Steps 3 to 5: valid, replayed, and the timeline shows the failure then the success.
    assert run_cli("validate", suite_path).returncode == 0
    timeline = run_cli("replay", "--format", "timeline", suite_path)
    assert timeline.returncode == 0, timeline.stderr
    returned = [line for line in timeline.stdout.splitlines() if "agent.tool-returned" in line]
    assert len(returned) == 2
    assert "ERROR toolcall-spec.tool_failed" in returned[0]
    assert " ok " in returned[1]
    assert timeline.stdout.splitlines()[-1].startswith("summary: passed")

    # "Try it": without the second entry the second call misses and the task fails.
    del entries[1]
    entries[0]["isError"] = True
    short = workdir / "short.json"
    short.write_text(json.dumps(suite), encoding="utf-8")
    missed = run_cli("replay", "--format", "timeline", short).stdout
    assert "toolcall-spec.fixture_miss" in missed
    assert missed.splitlines()[-1].startswith("summary: FAILED")
    assert missed.splitlines()[-1].endswith("1 fixture miss")

    # Step 6: a recorded run promoted into a suite that validates and replays the same way.
    run_json = workdir / "run.json"
    run_json.write_text(run_cli("replay", suite_path).stdout, encoding="utf-8")
    promoted = run_cli("promote", run_json)
    assert promoted.returncode == 0, promoted.stderr
    promoted_path = workdir / "promoted.json"
    promoted_path.write_text(promoted.stdout, encoding="utf-8")
    assert run_cli("validate", promoted_path).returncode == 0
    replayed = run_cli("replay", "--format", "timeline", promoted_path).stdout
    assert "ERROR toolcall-spec.tool_failed" in replayed
    assert replayed.splitlines()[-1].startswith("summary: passed")


def test_new_refuses_to_overwrite_and_leaves_no_temporary_file(workdir: Path) -> None:
    target = workdir / "mine.json"
    target.write_text("keep me", encoding="utf-8")
    run = run_cli("new", "suite", "-o", target)
    assert run.returncode == 2
    assert target.read_text("utf-8") == "keep me"
    assert sorted(p.name for p in workdir.iterdir()) == ["mine.json"]


def test_a_new_file_gets_the_permissions_of_any_new_file(workdir: Path) -> None:
    """The file is written through a private temporary file: it must not stay private (0600)."""
    umask = os.umask(0o027)
    try:
        assert run_cli("new", "suite", "-o", workdir / "shared.json").returncode == 0
    finally:
        os.umask(umask)
    assert (workdir / "shared.json").stat().st_mode & 0o777 == 0o640


def test_the_template_printed_is_the_packaged_example() -> None:
    printed = run_cli("new", "suite").stdout
    assert json.loads(printed) == json.loads((REPO / "examples/templates/suite.json").read_text())
