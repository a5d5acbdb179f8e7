"""One command line: every subcommand states its exit codes and takes ``--quiet``; every one that
reads documents takes ``--jsonl`` (stdin too); the inputs that used to print a traceback or
misbehave get one line and the documented exit code."""

from __future__ import annotations

import array
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.cli import CLI, run_cli
from support.repo import EXAMPLES

from toolcall_spec.cli import COMMANDS, build_parser
from toolcall_spec.cli.selection import SelectionError, compile_selection
from toolcall_spec.conformance.registry import LEGS

LEG_IDS = [leg.requirement_id for leg in LEGS]

DOCUMENT_READERS = ("validate", "classify", "ingest", "metrics", "promote", "replay")
EVENT_LINE = (EXAMPLES / "analytics/tool-calls.jsonl").read_text("utf-8").splitlines()[0]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_states_its_exit_codes_and_takes_quiet(command: str) -> None:
    run = run_cli(command, "--help")
    assert run.returncode == 0
    assert "exit status:" in run.stdout
    for code in ("0  ", "1  ", "2  "):
        assert f"\n  {code}" in run.stdout
    assert "--quiet" in run.stdout


def test_the_program_help_states_the_exit_codes_shared_by_all() -> None:
    run = run_cli("--help")
    assert run.returncode == 0
    assert "exit status: 0 success, 1 the input is invalid" in run.stdout


@pytest.mark.parametrize("command", DOCUMENT_READERS)
def test_every_document_reader_takes_jsonl(command: str) -> None:
    assert "--jsonl" in run_cli(command, "--help").stdout


def test_the_summaries_of_the_top_level_help_are_the_subcommands_own() -> None:
    parser, _ = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    helps = {c.dest: c.help for c in subparsers._choices_actions}  # type: ignore[attr-defined]
    assert helps == {name: summary for name, (_, summary) in COMMANDS.items()}


@pytest.mark.parametrize(
    ("argv", "heavy"),
    [
        (["--help"], ("jsonschema_rs", "pydantic", "orjson", "toolcall_spec.cli.validate_cmd")),
        (["validate", "--help"], ("jsonschema_rs", "pydantic", "toolcall_spec.cli.ingest_cmd")),
    ],
)
def test_help_does_not_load_the_validators(argv: list[str], heavy: tuple[str, ...]) -> None:
    probe = (
        "import sys\nfrom toolcall_spec.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_validate_reads_jsonl_from_stdin() -> None:
    lines = (EXAMPLES / "analytics/tool-calls.jsonl").read_text("utf-8")
    run = run_cli("validate", "--jsonl", "--kind", "tool-call-event", "-", stdin=lines)
    assert run.returncode == 1
    assert run.stdout.startswith("-:")


def test_classify_reads_jsonl_one_answer_a_line() -> None:
    lines = '{"content": [], "isError": true}\n{"thrown": "boom"}\n{"content": []}\n'
    run = run_cli("classify", "--jsonl", stdin=lines)
    assert run.returncode == 0, run.stderr
    assert [json.loads(line)["status"] for line in run.stdout.splitlines()] == [
        "error",
        "error",
        "success",
    ]


def test_replay_reads_one_suite_a_line_and_answers_one_line_each() -> None:
    suites = [
        json.loads((EXAMPLES / f"suites/{name}.json").read_text("utf-8"))
        for name in ("rfc0245-fail-then-succeed", "rfc0245-string-iserror")
    ]
    lines = "".join(json.dumps(suite) + "\n" for suite in suites) + "{broken\n"
    run = run_cli("replay", "--jsonl", "-", stdin=lines)
    assert run.returncode == 2  # the worst: line 3 does not parse
    assert run.stderr.startswith("toolcall-spec: -:3: ")
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert answers[0]["summary"]["passed"] is True
    assert answers[1]["details"]["field"] == "tasks[0].fixtures.toolResponses[0].isError"


def test_quiet_prints_nothing_and_keeps_the_exit_status() -> None:
    run = run_cli("validate", "--quiet", EXAMPLES / "suites/rfc0245-string-iserror.json")
    assert (run.returncode, run.stdout) == (1, "")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("serve", "--port", "99999"), "out of range 0..65535"),
        (("conformance", "--host", "http://[::1"), "not a valid URL"),
        (("schema", "--bundle", "nope"), "invalid choice"),
    ],
)
def test_bad_options_are_usage_errors(args: tuple[str, ...], words: str) -> None:
    run = run_cli(*args)
    assert run.returncode == 2
    assert words in run.stderr


def test_a_non_utf8_file_name_is_reported_as_json(tmp_path: Path) -> None:
    name = os.fsdecode(b"suite-\xff.json")
    (tmp_path / name).write_bytes((EXAMPLES / "suites/rfc0245-fail-then-succeed.json").read_bytes())
    run = subprocess.run(
        [*CLI, "validate", "--format", "json", name],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert b"Traceback" not in run.stderr
    assert run.returncode == 0
    assert json.loads(run.stdout)["files"][0]["file"] == name


def test_a_non_utf8_file_name_is_printed_as_its_own_bytes(tmp_path: Path) -> None:
    name = os.fsdecode(b"suite-\xff.json")
    (tmp_path / name).write_bytes((EXAMPLES / "suites/rfc0245-string-iserror.json").read_bytes())
    run = subprocess.run(
        [*CLI, "validate", name],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},  # strict, unlike the C locale
    )
    assert b"Traceback" not in run.stderr
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith(b"suite-\xff.json: tasks[0]")


def test_metrics_on_a_directory_is_one_line(tmp_path: Path) -> None:
    run = run_cli("metrics", tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "directory" in run.stderr.lower()


@pytest.mark.parametrize("content", [b"", b"\n\n", bytes(range(256))])
def test_promote_on_an_empty_or_binary_file_is_an_input_error(
    tmp_path: Path, content: bytes
) -> None:
    log = tmp_path / "run.log"
    log.write_bytes(content)
    run = run_cli("promote", log)
    assert run.returncode == 2
    assert run.stdout == ""


def test_ingest_into_a_closed_pipe_is_not_an_error(tmp_path: Path) -> None:
    big = tmp_path / "big.jsonl"
    big.write_text("not json\n" * 200_000, encoding="utf-8")
    command = " ".join([*CLI, "ingest", str(big)]) + " | head -1"
    run = subprocess.run(
        ["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, check=False
    )
    assert run.stdout == "{\n"
    assert "Traceback" not in run.stderr
    assert run.returncode == 0, run.stderr


def test_the_ingest_answer_puts_status_first() -> None:
    run = run_cli("ingest", EXAMPLES / "analytics/tool-calls.jsonl")
    assert next(iter(json.loads(run.stdout))) == "status"
    batch = run_cli("ingest", EXAMPLES / "analytics/batch-unknown-category.json")
    assert next(iter(json.loads(batch.stdout))) == "status"


def test_ctrl_c_during_ingest_leaves_no_half_written_answer(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            [*CLI, "ingest", "--jsonl", "-"],
            stdin=subprocess.PIPE,
            stdout=sink,
            stderr=subprocess.PIPE,
        )
        assert process.stdin is not None
        process.stdin.write(("not json\n" * 1000 + EVENT_LINE + "\n").encode())
        process.stdin.flush()
        _wait_until_read(process.stdin.fileno())  # stdin stays open, so it waits for more
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert b"Traceback" not in stderr
    assert out.read_bytes() == b""


def _wait_until_read(pipe: int, timeout: float = 60.0) -> None:
    """Until the reader of ``pipe`` (our write end) has taken every byte from it: then it runs
    the command, past its start-up, whatever the machine's load (a fixed sleep was not enough
    on a busy machine, and a Ctrl-C during start-up is Python's, not the command's)."""
    deadline = time.monotonic() + timeout
    unread = array.array("i", [1])
    while unread[0] > 0:
        assert time.monotonic() < deadline, "the command did not read its input"
        time.sleep(0.05)
        fcntl.ioctl(pipe, termios.FIONREAD, unread)
    time.sleep(0.2)


# -- conformance -k ---------------------------------------------------------------------------

WORDS = st.sampled_from(["0245", "replay", "refused", "events", "suite", "x"])


@st.composite
def selections(draw: st.DrawFn, depth: int = 0) -> tuple[str, str]:
    """An -k expression and the same expression as Python over ``name`` (the oracle). Compound
    operands are parenthesized, so the two read alike whatever the precedence rules."""
    if depth >= 3 or draw(st.booleans()):
        word = draw(WORDS)
        return word, f"({word!r} in name)"
    form = draw(st.sampled_from(["not", "and", "or"]))
    left, left_py = draw(selections(depth + 1))
    if form == "not":
        return f"not ({left})", f"(not {left_py})"
    right, right_py = draw(selections(depth + 1))
    return f"({left}) {form} ({right})", f"({left_py} {form} {right_py})"


def test_and_binds_tighter_than_or_and_not_tighter_than_and() -> None:
    assert compile_selection("x or 0245 and refused")("0245.refused")
    assert not compile_selection("x or 0245 and refused")("0245")
    assert compile_selection("not x and 0245")("0245")
    assert not compile_selection("not 0245 and 0245")("0245")


@given(selections(), st.sampled_from(LEG_IDS))
def test_k_selects_as_the_same_boolean_expression_in_python(
    selection: tuple[str, str], name: str
) -> None:
    expression, as_python = selection
    assert compile_selection(expression)(name) is eval(as_python, {"name": name.lower()})


@pytest.mark.parametrize("expression", ["", "and", "(0245", "0245 or", "0245 )", "not"])
def test_a_malformed_k_is_a_usage_error(expression: str) -> None:
    with pytest.raises(SelectionError):
        compile_selection(expression)


def test_conformance_k_runs_only_the_selected_legs() -> None:
    run = run_cli("conformance", "--format", "json", "-k", "0245 and not unadvertised")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    ran = [leg["id"] for leg in report["legs"]]
    assert ran == [leg for leg in LEG_IDS if "0245" in leg and "unadvertised" not in leg]
    assert run_cli("conformance", "-k", "no-such-leg").returncode == 2


# -- messages ---------------------------------------------------------------------------------


def test_an_enum_error_lists_every_allowed_value() -> None:
    schema = json.loads(run_cli("schema", "tool-call-event").stdout)
    allowed = schema["properties"]["error_category"]["enum"]
    assert len(allowed) > 5  # more than the validator's own message would list
    event = {"event_type": "tool_call", "status": "error", "error_category": "nope"}
    run = run_cli("validate", "--kind", "tool-call-event", "-", stdin=json.dumps(event))
    (line,) = [line for line in run.stdout.splitlines() if "error_category:" in line]
    assert line.endswith(", ".join(json.dumps(value) for value in allowed))


def test_args_match_without_args_names_args_match() -> None:
    run = run_cli("validate", EXAMPLES / "suites/args-match-without-args.json")
    assert run.returncode == 1
    assert '"args" is required because "argsMatch" is present' in run.stdout


JSONL_READERS = ("validate", "classify", "ingest", "metrics", "replay")
"""The commands that read one document, or JSONL with ``--jsonl``."""


def _jsonl_input(command: str) -> str:
    """Two documents one a line, of the kind ``command`` reads."""
    if command == "replay":
        suite = json.loads((EXAMPLES / "suites/rfc0245-fail-then-succeed.json").read_text("utf-8"))
        return f"{json.dumps(suite)}\n\n{json.dumps(suite)}\n"
    if command == "classify":
        return '{"content": [], "isError": true}\n\n{"content": []}\n'
    return f"{EVENT_LINE}\n\n{EVENT_LINE}\n"


@pytest.mark.parametrize("command", JSONL_READERS)
def test_jsonl_on_stdin_is_read_as_jsonl_without_the_flag(command: str) -> None:
    """Issue 21: `cat events.jsonl | toolcall-spec validate -` used to answer "invalid JSON:
    unexpected content after document" with no hint; its shape (a whole document on its first
    line, another after it) now says JSONL."""
    given_flag = run_cli(command, "--jsonl", "-", stdin=_jsonl_input(command))
    sniffed = run_cli(command, "-", stdin=_jsonl_input(command))
    assert "unexpected content" not in sniffed.stdout + sniffed.stderr
    assert sniffed.returncode == given_flag.returncode
    assert _without_run_ids(sniffed.stdout) == _without_run_ids(given_flag.stdout)


def _without_run_ids(text: str) -> str:
    """``text`` with what differs between two runs of a replay (ids, times) blanked out."""
    text = re.sub(r"[0-9a-f]{32}", "<id>", text)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<time>", text)


@pytest.mark.parametrize("command", ["validate", "classify", "metrics", "replay"])
def test_a_pretty_printed_document_on_stdin_stays_one_document(command: str) -> None:
    document = json.loads(_jsonl_input(command).splitlines()[0])
    pretty = json.dumps(document, indent=2) + "\n"
    from_stdin = run_cli(command, "-", stdin=pretty)
    flagged = run_cli(command, "--jsonl", "-", stdin=pretty)
    assert from_stdin.returncode in (0, 1), from_stdin.stderr
    assert from_stdin.stdout != flagged.stdout  # read as one document, not line by line


@pytest.mark.parametrize("command", ["validate", "ingest", "metrics"])
def test_several_documents_in_a_json_file_name_the_jsonl_flag(command: str, tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    events.write_text(f"{EVENT_LINE}\n{EVENT_LINE}\n", encoding="utf-8")
    run = run_cli(command, events)
    assert run.returncode != 0
    assert "--jsonl" in run.stdout + run.stderr
