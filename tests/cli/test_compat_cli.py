"""``toolcall-spec diff OLD NEW [--format text|json]``, run as a user runs it: in a subprocess.
Exit 0 when nothing is major, 1 when a change is major, 2 for usage and unreadable input; text
prints ``LEVEL KIND PATH: message`` per change and a verdict line."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.repo import REPO

from toolcall_spec.catalog import all_schemas

SCHEMAS = REPO / "schemas"
SUITE = "suites/agent-eval-suite.schema.json"
RFC_0244_SUITE = REPO / "tests/data/compat/rfc0244/agent-eval-suite.schema.json"
RELEASE_0_1 = REPO / "tests/data/compat/0.1"
"""The schemas of the 0.1 release: RFC 0245 as it landed, before the OpenWOP v2 alignment."""


cli = run_cli


def write_tree(root: Path, schemas: dict[str, Any]) -> Path:
    for name, schema in schemas.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return root


@pytest.fixture
def changed_tree(tmp_path: Path) -> Path:
    """A copy of schemas/ with one required member added to the fixture entry."""
    new = copy.deepcopy(all_schemas())
    entry = new[SUITE]["$defs"]["ToolResponse"]
    entry["properties"]["note"] = {"type": "string"}
    entry["required"].append("note")
    return write_tree(tmp_path / "new", new)


def test_the_current_schemas_against_themselves_exit_0_with_no_changes() -> None:
    run = cli("diff", SCHEMAS, SCHEMAS)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "verdict: none (0 major, 0 minor, 0 patch): no release: the schemas are the same"
    ]


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_a_major_change_between_folders_exits_1_and_names_file_and_path(changed_tree: Path) -> None:
    run = cli("diff", SCHEMAS, changed_tree)
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith(
        f"major member-added-required {SUITE}:tasks[].fixtures.toolResponses[].note: "
    )
    assert lines[-1].startswith("verdict: major (1 major, 0 minor, 0 patch): a major release")


@pytest.mark.requirement("toolcall-spec.requirement.compat.additive-changes")
def test_rfc_0245_over_rfc_0244_is_additive_and_exits_0() -> None:
    run = cli("diff", RFC_0244_SUITE, RELEASE_0_1 / SUITE)
    assert run.returncode == 0, run.stderr
    minor = [line for line in run.stdout.splitlines() if line.startswith("minor ")]
    assert minor == [
        "minor member-added-optional tasks[].fixtures.toolResponses[].isError: optional member "
        "isError added; the object rejected it before",
        "minor member-made-optional tasks[].fixtures.toolResponses[].response: member response is "
        "no longer required",
    ]
    assert run.stdout.splitlines()[-1].startswith("verdict: minor (0 major, 2 minor, ")


def test_json_output_has_the_verdict_counts_and_changes(changed_tree: Path) -> None:
    run = cli("diff", "--format", "json", SCHEMAS, changed_tree)
    assert run.returncode == 1
    answer = json.loads(run.stdout)
    assert answer["verdict"] == "major"
    assert answer["counts"] == {"major": 1, "minor": 0, "patch": 0}
    assert answer["changes"] == [
        {
            "level": "major",
            "kind": "member-added-required",
            "path": "tasks[].fixtures.toolResponses[].note",
            "file": SUITE,
            "schemaPath": "$defs.ToolResponse.properties.note",
            "message": "new member note is required: every document without it becomes invalid",
        }
    ]


def test_a_removed_schema_file_is_major(tmp_path: Path) -> None:
    old = write_tree(tmp_path / "old", all_schemas())
    new = tmp_path / "new"
    shutil.copytree(old, new)
    (new / "mcp/call-tool-result.schema.json").unlink()
    run = cli("diff", old, new)
    assert run.returncode == 1
    assert run.stdout.startswith("major schema-removed mcp/call-tool-result.schema.json:(root): ")


def test_only_patch_changes_exit_0(tmp_path: Path) -> None:
    new = copy.deepcopy(all_schemas()[SUITE])
    new["description"] = "Reworded."
    path = write_tree(tmp_path, {"suite.schema.json": new}) / "suite.schema.json"
    run = cli("diff", SCHEMAS / SUITE, path)
    assert run.returncode == 0
    assert run.stdout.splitlines() == [
        "patch annotation-changed (root): description changed",
        "verdict: patch (0 major, 0 minor, 1 patch): a patch release: what validates is unchanged",
    ]


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        (b"{not json", "invalid JSON"),
        (b"[1, 2]", "not a JSON Schema"),
        (b"", "the input is empty"),
    ],
    ids=["broken", "array", "empty"],
)
def test_an_unusable_schema_file_exits_2_with_one_line(
    tmp_path: Path, contents: bytes, message: str
) -> None:
    bad = tmp_path / "bad.schema.json"
    bad.write_bytes(contents)
    run = cli("diff", SCHEMAS / SUITE, bad)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.startswith("toolcall-spec: ")
    assert message in run.stderr
    assert str(bad) in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_a_bad_file_inside_a_folder_is_named(tmp_path: Path) -> None:
    new = write_tree(tmp_path / "new", all_schemas())
    (new / "common/formats.schema.json").write_text("{", encoding="utf-8")
    run = cli("diff", SCHEMAS, new)
    assert run.returncode == 2
    assert "formats.schema.json" in run.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("diff", "no-such-dir", str(SCHEMAS)),
        ("diff", str(SCHEMAS), str(SCHEMAS / SUITE)),
        ("diff", str(SCHEMAS)),
        ("diff", "--format", "yaml", str(SCHEMAS), str(SCHEMAS)),
    ],
    ids=["missing", "folder-and-file", "one-argument", "bad-format"],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    run = cli(*args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.strip()


def test_an_empty_folder_exits_2(tmp_path: Path) -> None:
    run = cli("diff", SCHEMAS, tmp_path)
    assert run.returncode == 2
    assert "no schema files" in run.stderr


@pytest.mark.requirement("toolcall-spec.requirement.suite.on-miss-fail")
def test_diff_from_0_1_reports_on_miss_fail_and_exits_1() -> None:
    run = cli("diff", RELEASE_0_1, SCHEMAS)
    assert run.returncode == 1, run.stderr
    on_miss = [line for line in run.stdout.splitlines() if "tasks[].fixtures.onMiss:" in line]
    changed = f"major default-changed {SUITE}:tasks[].fixtures.onMiss: default changed"
    assert any(line.startswith(f'{changed} ("error" -> "fail")') for line in on_miss)
    assert any(
        line.startswith(f"minor enum-value-added {SUITE}:tasks[].fixtures.onMiss")
        for line in on_miss
    )
