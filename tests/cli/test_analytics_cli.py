"""``toolcall-spec classify``, ``ingest`` and ``metrics``: output and exit codes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from support.repo import EXAMPLES

from toolcall_spec.analytics.ingest import MAX_BODY_BYTES, ingest_jsonl
from toolcall_spec.cli import main
from toolcall_spec.validation import validate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def write(path: Path, value: Any) -> str:
    path.write_bytes(orjson.dumps(value))
    return str(path)


# --- classify -----------------------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.analytics.tool-error-category")
def test_classify_a_tool_error_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "classify", str(EXAMPLES / "mcp" / "tool-error-result.json"))
    assert code == 0
    fields = json.loads(out)
    assert (fields["status"], fields["error_category"]) == ("error", "tool_error")
    assert fields["error_message"]


def test_classify_a_string_flag_is_a_success_with_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "classify", str(EXAMPLES / "mcp" / "string-iserror-result.json"))
    assert (code, json.loads(out)) == (0, {"status": "success"})
    assert "not the boolean true" in err


@pytest.mark.requirement("toolcall-spec.requirement.analytics.thrown-unknown")
def test_classify_a_thrown_message_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed_stdin(monkeypatch, b'{"thrown": "customer max@example.com not found"}')
    code, out, _ = run(capsys, "classify", "-")
    assert code == 0
    assert json.loads(out) == {
        "status": "error",
        "error_category": "unknown",
        "error_message": "customer [EMAIL_REDACTED] not found",
    }


@pytest.mark.requirement("toolcall-spec.requirement.analytics.status-without-capture")
def test_classify_without_output_capture(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = {"content": [{"type": "text", "text": "expired"}], "isError": True}
    code, out, _ = run(
        capsys, "classify", "--no-capture-output", write(tmp_path / "r.json", result)
    )
    assert (code, json.loads(out)) == (0, {"status": "error", "error_category": "tool_error"})


@pytest.mark.parametrize(
    "document", [[1, 2], {"thrown": 5}, {"something": "else"}, "text"], ids=repr
)
def test_classify_refuses_what_is_neither_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: Any
) -> None:
    code, out, err = run(capsys, "classify", write(tmp_path / "d.json", document))
    assert (code, out) == (2, "")
    assert err.startswith("toolcall-spec: ")


@pytest.mark.requirement("toolcall-spec.requirement.analytics.result-representations")
def test_classify_refuses_a_snake_case_dump_without_a_traceback(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dumped = {"content": [{"type": "text", "text": "no"}], "is_error": True}
    code, out, err = run(capsys, "classify", write(tmp_path / "d.json", dumped))
    assert (code, out) == (2, "")
    assert "model_dump(by_alias=True)" in err
    assert "Traceback" not in err


def test_classify_an_unreadable_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{nope")
    assert run(capsys, "classify", str(tmp_path / "missing.json"))[0] == 2
    code, _, err = run(capsys, "classify", str(tmp_path / "bad.json"))
    assert code == 2
    assert "invalid JSON" in err
    assert "Traceback" not in err


# --- ingest -------------------------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.ingest.per-event-answer")
def test_ingest_a_batch_with_one_bad_event(capsys: pytest.CaptureFixture[str]) -> None:
    path = EXAMPLES / "analytics" / "batch-unknown-category.json"
    code, out, _ = run(capsys, "ingest", str(path))
    answer = json.loads(out)
    assert code == 1
    assert (answer["status"], [e["index"] for e in answer["errors"]]) == (207, [1])
    assert validate(answer, "ingest-answer") == []


def test_ingest_an_accepted_batch_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    event = json.loads((EXAMPLES / "analytics" / "tool-error-event.json").read_text())
    code, out, _ = run(capsys, "ingest", write(tmp_path / "b.json", {"events": [event]}))
    assert (code, json.loads(out)["status"]) == (0, 200)


@pytest.mark.requirement("toolcall-spec.requirement.ingest.batch-limits")
def test_ingest_a_body_too_large_is_413(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_BODY_BYTES + 10))
    code, out, _ = run(capsys, "ingest", str(path))
    assert (code, json.loads(out)["status"]) == (1, 413)


def test_ingest_a_broken_body_is_400(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text("{nope")
    code, out, _ = run(capsys, "ingest", str(tmp_path / "b.json"))
    assert (code, json.loads(out)["error"]["code"]) == (1, "invalid_json")


@pytest.mark.requirement("toolcall-spec.requirement.ingest.indices-as-sent")
@pytest.mark.parametrize("rejected_lines", [[], [3], [1, 2, 3]])
def test_ingest_jsonl_streams_the_same_answer_the_library_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, rejected_lines: list[int]
) -> None:
    lines = (EXAMPLES / "analytics" / "tool-calls.jsonl").read_bytes().splitlines()
    good = next(line for line in lines if b"exploded" not in line)
    body = b"\n".join(b"{}" if n in rejected_lines else good for n in (1, 2, 3)) + b"\n"
    path = tmp_path / "events.ndjson"
    path.write_bytes(body)
    code, out, err = run(capsys, "ingest", str(path))
    answer = json.loads(out)  # streamed, yet one JSON document
    assert answer == ingest_jsonl(io.BytesIO(body))
    assert [e["line"] for e in answer["errors"]] == rejected_lines
    assert code == (0 if not rejected_lines else 1)
    assert err == ""  # not a terminal: no progress line
    assert validate(answer, "ingest-answer") == []


def test_ingest_jsonl_from_stdin_and_a_missing_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    feed_stdin(monkeypatch, (EXAMPLES / "analytics" / "tool-calls.jsonl").read_bytes())
    code, out, _ = run(capsys, "ingest", "--jsonl", "-")
    assert (code, json.loads(out)["rejected"]) == (1, 1)
    code, out, err = run(capsys, "ingest", str(tmp_path / "missing.jsonl"))
    assert (code, out) == (2, "")
    assert "cannot read" in err


# --- metrics ------------------------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.analytics.error-rate")
def test_metrics_of_the_example_jsonl(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "analytics" / "tool-calls.jsonl")
    code, out, _ = run(capsys, "metrics", path)
    assert code == 0  # every line counted: the unknown category is counted as unknown
    assert "errors: 2 (error rate 66.7%)" in out
    assert "tool_error: 1" in out
    code, out, _ = run(capsys, "metrics", "--format", "json", path)
    assert json.loads(out)["error_rate"] == 2 / 3


def test_metrics_of_a_clean_batch_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    event = json.loads((EXAMPLES / "analytics" / "tool-error-event.json").read_text())
    legacy = {
        **event,
        "event_id": "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
        "status": "success",
        "output_content": {"content": [], "isError": True},
    }
    for name in ("error_category", "error_message"):
        legacy.pop(name)
    code, out, _ = run(capsys, "metrics", write(tmp_path / "b.json", {"events": [event, legacy]}))
    assert code == 0
    assert "error rate 50.0%" in out
    assert "corrected error rate 100.0%" in out
    assert run(capsys, "metrics", str(tmp_path / "missing.json"))[0] == 2


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ingest_jsonl_shows_progress_only_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["ingest", str(EXAMPLES / "analytics" / "tool-calls.jsonl")])
    assert code == 1
    assert "3 events read (100%): 2 accepted, 1 rejected" in terminal.getvalue()
    assert json.loads(capsys.readouterr().out)["rejected"] == 1
