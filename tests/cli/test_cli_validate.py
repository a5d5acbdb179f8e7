"""The CLI contract of ``toolcall-spec validate`` and ``toolcall-spec schema``, run as a user runs
it: in a subprocess. Exit 0 valid, 1 invalid, 2 usage or unreadable input; ``FILE: PATH: message``
per problem, ``FILE:LINE: PATH: message`` for JSONL; bad input gets one clear line on stderr and a
non-zero exit, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import run_cli
from support.repo import EXAMPLES

from toolcall_spec.catalog import KINDS, SCHEMA_FILES, all_schemas, is_kind

STRING_IS_ERROR = EXAMPLES / "suites/rfc0245-string-iserror.json"
FAIL_THEN_SUCCEED = EXAMPLES / "suites/rfc0245-fail-then-succeed.json"
TOOL_CALLS = EXAMPLES / "analytics/tool-calls.jsonl"
WARNED = EXAMPLES / "suites/error-recorded-inside-response.json"


cli = run_cli


# --- validate: verdicts and output --------------------------------------------------------------


def test_a_valid_suite_exits_0() -> None:
    run = cli("validate", FAIL_THEN_SUCCEED)
    assert run.returncode == 0
    assert run.stdout == f"{FAIL_THEN_SUCCEED}: valid (1 document)\n"


def test_an_invalid_suite_exits_1_and_names_the_path() -> None:
    run = cli("validate", STRING_IS_ERROR)
    assert run.returncode == 1
    assert run.stdout.startswith(f"{STRING_IS_ERROR}: tasks[0].fixtures.toolResponses[0].isError: ")
    assert "boolean" in run.stdout


@pytest.mark.requirement("toolcall-spec.requirement.suite.warn-error-inside-response")
def test_a_warning_is_printed_and_the_document_stays_valid() -> None:
    run = cli("validate", WARNED)
    assert run.returncode == 0
    path = "tasks[0].fixtures.toolResponses[0].response.isError"
    assert f"{WARNED}: {path}: warning: " in run.stdout
    assert run.stdout.endswith(f"{WARNED}: valid (1 document)\n")


def test_jsonl_is_validated_line_by_line() -> None:
    run = cli("validate", TOOL_CALLS)
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines, run.stderr
    assert all(line.startswith(f"{TOOL_CALLS}:3: ") for line in lines)
    assert any(line.startswith(f"{TOOL_CALLS}:3: error_category: ") for line in lines)


def test_the_kind_can_be_named() -> None:
    result = EXAMPLES / "mcp/tool-error-result.json"
    assert cli("validate", result).returncode == 0
    assert cli("validate", "--kind", "call-tool-result", result).returncode == 0
    named_wrong = cli("validate", "--kind", "suite", result)
    assert named_wrong.returncode == 1
    assert f"{result}: (root): " in named_wrong.stdout


def test_json_output() -> None:
    run = cli("validate", "--format", "json", FAIL_THEN_SUCCEED, STRING_IS_ERROR, TOOL_CALLS)
    assert run.returncode == 1
    report = json.loads(run.stdout)
    assert report["valid"] is False
    by_file = {entry["file"]: entry for entry in report["files"]}
    assert by_file[str(FAIL_THEN_SUCCEED)] == {
        "file": str(FAIL_THEN_SUCCEED),
        "valid": True,
        "problems": [],
    }
    (problem,) = by_file[str(STRING_IS_ERROR)]["problems"]
    assert problem["path"] == "tasks[0].fixtures.toolResponses[0].isError"
    assert problem["severity"] == "error"
    assert {p["line"] for p in by_file[str(TOOL_CALLS)]["problems"]} == {3}


def test_standard_input() -> None:
    run = cli("validate", "-", stdin=STRING_IS_ERROR.read_bytes())
    assert run.returncode == 1
    assert run.stdout.startswith("-: tasks[0].fixtures.toolResponses[0].isError: ")


def test_several_files_the_worst_verdict_wins(tmp_path: Path) -> None:
    assert cli("validate", FAIL_THEN_SUCCEED, STRING_IS_ERROR).returncode == 1
    run = cli("validate", FAIL_THEN_SUCCEED, tmp_path / "missing.json", STRING_IS_ERROR)
    assert run.returncode == 2
    # The readable files are still reported: one bad file never hides the others.
    assert f"{FAIL_THEN_SUCCEED}: valid" in run.stdout
    assert f"{STRING_IS_ERROR}: tasks[0]" in run.stdout


# --- validate: bad input ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad-inputs")
    (folder / "broken.json").write_text('{"suiteId": ', encoding="utf-8")
    (folder / "empty.json").write_bytes(b"")
    (folder / "blank.json").write_bytes(b" \n\t\n")
    (folder / "binary.json").write_bytes(bytes(range(256)) * 64)
    (folder / "latin1.json").write_bytes('{"content": [], "x": "caf\xe9"}'.encode("latin-1"))
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (folder / "huge-number.json").write_text('{"content": [], "n": 1e400}', encoding="utf-8")
    (folder / "a-directory.json").mkdir()
    with (folder / "50mb.json").open("w", encoding="utf-8") as handle:
        handle.write('{"content": [')
        block = json.dumps({"type": "text", "text": "x" * 1000})
        handle.write(",".join([block] * 50_000))
        handle.write("]}")
    return folder


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("missing.json", "cannot read"),
        ("broken.json", "invalid JSON"),
        ("empty.json", "empty"),
        ("blank.json", "empty"),
        ("binary.json", "binary"),
        ("latin1.json", "UTF-8"),
        ("deep.json", "nested deeper than 1,024 levels"),
        ("huge-number.json", "beyond the range of a double"),
        ("a-directory.json", "directory"),
        ("50mb.json", "over the limit"),
    ],
)
@pytest.mark.parametrize("output", ["text", "json"])
def test_unreadable_input_gets_one_line_and_exit_2(
    bad_inputs: Path, name: str, reason: str, output: str
) -> None:
    path = bad_inputs / name
    run = cli("validate", "--format", output, path)
    assert run.returncode == 2
    if output == "text":
        assert run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith(f"{path}: ")
        assert reason in run.stderr
    else:
        (entry,) = json.loads(run.stdout)["files"]
        assert entry["valid"] is False
        assert reason in entry["unreadable"]


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + FAIL_THEN_SUCCEED.read_bytes())
    assert cli("validate", path).returncode == 0


def test_bad_jsonl_lines_are_problems_of_their_own_lines(tmp_path: Path) -> None:
    good = json.dumps({"content": [], "isError": True})
    path = tmp_path / "events.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                good.encode(),
                b"{broken",
                b"[" * 5000 + b"]" * 5000,
                b"\x00\x01\x02",
                b"\xff\xfe",
                b"",
                good.encode(),
            ]
        )
        + b"\n"
    )
    run = cli("validate", path)
    assert run.returncode == 1
    numbers = [line.split(":")[1] for line in run.stdout.splitlines()]
    assert numbers == ["2", "3", "4", "5"]
    assert all(line.startswith(f"{path}:") for line in run.stdout.splitlines())


def test_a_closed_pipe_is_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text((json.dumps({"content": [], "isError": "true"}) + "\n") * 50_000)
    for output in ("text", "json"):
        process = subprocess.Popen(
            [sys.executable, "-m", "toolcall_spec.cli", "validate", "--format", output, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.readline()
        process.stdout.close()
        stderr = process.stderr.read().decode()
        process.wait(timeout=120)
        assert "Traceback" not in stderr


@pytest.mark.parametrize(
    "args",
    [
        ["validate"],
        ["validate", "--kind", "suites", "x.json"],
        ["validate", "--format", "yaml", "x.json"],
        ["frobnicate"],
        [],
    ],
    ids=["no-file", "unknown-kind", "unknown-format", "unknown-command", "nothing"],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    run = cli(*args)
    assert run.returncode == 2
    assert "error:" in run.stderr


# --- schema -------------------------------------------------------------------------------------


def test_schema_lists_every_packaged_schema() -> None:
    run = cli("schema")
    assert run.returncode == 0
    rows = [line.split() for line in run.stdout.splitlines()]
    assert sorted(row[1] for row in rows) == sorted(all_schemas())
    assert {row[0] for row in rows} == {*KINDS, "-"}
    assert all(row[2] == all_schemas()[row[1]]["$id"] for row in rows)


@pytest.mark.parametrize("name", [*KINDS, "common/formats.schema.json"])
def test_schema_prints_a_schema_by_kind_or_path(name: str) -> None:
    run = cli("schema", name)
    assert run.returncode == 0
    path = SCHEMA_FILES[name] if is_kind(name) else name
    assert json.loads(run.stdout) == all_schemas()[path]


def test_schema_names_what_exists_when_asked_for_what_does_not() -> None:
    run = cli("schema", "suites")
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "no schema named 'suites'" in run.stderr
