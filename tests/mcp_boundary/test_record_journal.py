"""The journal of ``toolcall-spec record`` as users meet it: a real ``record`` process whose
recording fails (a disk full from the start, an I/O error once, a result JSON cannot hold) goes
on forwarding, says so and exits 3 when the suite is incomplete; the commands that read a suite
(``replay``, ``promote``, ``serve-fixtures``) read the journal a killed recorder leaves, ignoring
a torn last line and skipping a line they cannot read without losing the lines after it."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.recording import CLI, RAW_SERVER, RawClient, flags, load_suite, record_argv

from toolcall_spec.filesystem import FAULTS_VARIABLE, FaultPlan, read_count
from toolcall_spec.mcp.record import Recorder
from toolcall_spec.replay.journal import (
    journal_path,
    read_journal,
    read_suite_source,
    suite_bytes,
)

ON_DISK = pytest.mark.requirement("toolcall-spec.requirement.record.written-as-answered")
TRANSPARENT = pytest.mark.requirement("toolcall-spec.requirement.record.transparent")

ECHOES = [{"x": n} for n in range(4)]
KILL_ECHOES = ECHOES[:2]
KILL_OPS = frozenset({"write", "fsync"})


def _session(out: Path, env: dict[str, str], deep: bool) -> tuple[list[Any], int, str]:
    """A raw client's session through ``record``: what it received, the exit status, stderr."""
    argv = record_argv(out, sys.executable, RAW_SERVER)
    client = RawClient(["env", *[f"{k}={v}" for k, v in env.items()], *argv])
    received: list[Any] = []
    try:
        client.handshake()
        for number, args in enumerate(ECHOES):
            received.append(client.call("tools/call", {"name": "echo", "arguments": args}))
            if deep and number == 1:
                deep_call = {"name": "deep", "arguments": {"depth": 300}}
                received.append(client.call("tools/call", deep_call))
    finally:
        status, stderr = client.finish()
    return received, status, stderr


@TRANSPARENT
@ON_DISK
@pytest.mark.parametrize(
    ("fault", "complete"),
    [
        ("disk full from the start", False),
        ("an I/O error once", True),
        ("a result nested too deep", False),
    ],
)
def test_a_recording_failure_never_ends_the_session(
    tmp_path: Path, fault: str, complete: bool
) -> None:
    out = tmp_path / "recorded.json"
    env: dict[str, str] = {}
    if fault == "disk full from the start":
        env[FAULTS_VARIABLE] = FaultPlan(at=1, persistent=True, role="recorder").to_environment()
    elif fault == "an I/O error once":  # the fifth call: an fdatasync of a call's line
        env[FAULTS_VARIABLE] = FaultPlan(at=5, errno="EIO", role="recorder").to_environment()
    deep = fault == "a result nested too deep"
    received, status, stderr = _session(out, env, deep)
    # Every call is answered as the server answered it: the session went on.
    echoed = [r["result"]["content"][0]["text"] for r in received if r["result"]["content"]]
    assert echoed == [json.dumps(args) for args in ECHOES]
    if deep:
        assert len(received[2]["result"]["structuredContent"]["nested"]) == 1
    assert "recording failure (the session goes on)" in stderr
    assert "recording failures during the session" in stderr
    assert "Traceback" not in stderr
    assert status == (0 if complete else 3)
    if fault == "disk full from the start":  # nothing could be written: nothing pretends it was
        assert not out.exists()
        assert "the suite was not written" in stderr
        return
    assert not journal_path(out).exists()
    assert flags(load_suite(out)) == [("echo", False)] * len(ECHOES)  # the deep call left out


@ON_DISK
def test_replay_promote_and_serve_fixtures_read_the_journal_a_killed_recorder_left(
    tmp_path: Path,
) -> None:
    out = tmp_path / "recorded.json"
    _killed_recording(out, answered=3)
    with journal_path(out).open("ab") as journal:
        journal.write(b'{"session": 0, "call": 9, "tool": "echo", "ar')  # torn by the kill
    replayed = run_cli("replay", out)
    assert replayed.returncode == 0, replayed.stderr
    assert "recorded.json.journal, the journal of an unfinished recording" in replayed.stderr
    assert "the last line was cut short" in replayed.stderr
    summary = json.loads(replayed.stdout)["summary"]
    assert summary["fixtureMissCount"] == 0
    promoted = run_cli("promote", journal_path(out))
    assert promoted.returncode == 0, promoted.stderr
    suite = json.loads(promoted.stdout)
    assert [e["args"] for e in suite["tasks"][0]["fixtures"]["toolResponses"]] == ECHOES[:3]
    assert _served(journal_path(out), ECHOES[1]) == json.dumps(ECHOES[1])


def _killed_recording(out: Path, answered: int) -> None:
    """A recorder that answered ``answered`` calls and never closed (as after kill -9)."""
    recorder = Recorder(out, suite_id="recorded.evals.killed")
    recorder.open_session("s")
    for number, args in enumerate(ECHOES[:answered], start=1):
        request = {"name": "echo", "arguments": args}
        recorder.from_client(
            "s", {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": request}
        )
        text = json.dumps(args)
        result = {"content": [{"type": "text", "text": text}]}
        recorder.from_server("s", {"jsonrpc": "2.0", "id": number, "result": result})
    recorder._writer.close()


def _served(suite: Path, args: dict[str, Any]) -> str:
    """What ``serve-fixtures SUITE`` answers a call of ``echo`` with ``args``."""
    client = RawClient([*CLI, "serve-fixtures", str(suite)])
    try:
        client.handshake()
        answer = client.call("tools/call", {"name": "echo", "arguments": args})
    finally:
        client.finish()
    return str(answer["result"]["content"][0]["text"])


def test_a_journal_line_that_cannot_be_read_is_skipped_and_the_lines_after_it_are_kept(
    tmp_path: Path,
) -> None:
    out = tmp_path / "recorded.json"
    _killed_recording(out, answered=1)
    lines = journal_path(out).read_bytes().splitlines(keepends=True)
    good = b'{"session":0,"call":1,"tool":"echo","args":{"x":1},"isError":false,"response":{}}\n'
    bad = [b"not json\n", b'{"session":0,"call":"one"}\n', b"[1]\n"]
    journal_path(out).write_bytes(b"".join([*lines, *bad, good]))
    read = read_journal(journal_path(out).read_bytes())
    assert [e["args"] for e in read.suite["tasks"][0]["fixtures"]["toolResponses"]] == ECHOES[:2]
    assert [note.split(":")[0] for note in read.skipped] == ["line 4", "line 5", "line 6"]
    assert not read.torn


def test_a_journal_is_read_in_the_suites_place_only_while_it_is_newer(tmp_path: Path) -> None:
    out = tmp_path / "recorded.json"
    _killed_recording(out, answered=2)
    recorder = Recorder(out, suite_id="recorded.evals.finished")
    recorder.open_session("s")
    recorder.close()  # a finished recording: its suite written, its journal removed
    assert not journal_path(out).exists()
    assert load_suite(out)["suiteId"] == "recorded.evals.finished"
    _killed_recording(out, answered=2)  # a later recording, killed: its journal is newer
    assert load_suite(out)["suiteId"] == "recorded.evals.killed"
    hour_ago = time.time() - 3600
    os.utime(journal_path(out), (hour_ago, hour_ago))  # a journal older than the suite
    assert load_suite(out)["suiteId"] == "recorded.evals.finished"


def _same_time(*paths: Path) -> None:
    """Stamp ``paths`` with one modification time, as a file system's clock tick does to files
    written within it."""
    stamp = time.time_ns()
    for path in paths:
        os.utime(path, ns=(stamp, stamp))


def test_a_journal_written_in_the_suites_clock_tick_is_read_by_its_contents(
    tmp_path: Path,
) -> None:
    """A tie of modification times (a recording killed within a clock tick of the last one's
    exit: seen on CI) is decided by what the files hold: a journal of other calls is a later
    recording and is read; the journal of the suite itself (its removal failed) is not."""
    out = tmp_path / "recorded.json"
    recorder = Recorder(out, suite_id="recorded.evals.finished")
    recorder.open_session("s")
    recorder.close()
    _killed_recording(out, answered=2)
    _same_time(out, journal_path(out))
    suite, notes = read_suite_source(str(out))
    assert suite["suiteId"] == "recorded.evals.killed"
    assert any("journal of an unfinished recording" in note for note in notes)

    out.write_bytes(suite_bytes(suite))  # the suite written from that journal, which stays
    _same_time(out, journal_path(out))
    assert read_suite_source(str(out)) == (suite, [])


@ON_DISK
@pytest.mark.faults
def test_a_record_process_killed_at_any_of_its_writes_keeps_every_answer_it_released(
    tmp_path: Path, record_property: Any
) -> None:
    """Real ``kill -9`` (``FaultPlan`` in the ``record`` process: SIGKILL at its Nth write or
    fdatasync, before or after a line is written) for every N of a session of two calls: what
    the killed recorder left on disk, read as the commands read it, holds every call whose
    answer the client received, once, in send order. (About 2 s a run: the in-process sweep
    covers every call and fault kind.)"""
    clean = _killed_session(tmp_path / "clean", FaultPlan(at=0, role="recorder", ops=KILL_OPS))
    points = clean.count
    assert clean.answered == len(KILL_ECHOES)
    assert points > 0
    for at in range(1, points + 1):
        run = _killed_session(
            tmp_path / f"kill-{at}", FaultPlan(at=at, errno=None, role="recorder", ops=KILL_OPS)
        )
        kept = _kept_echoes(run.out)
        assert kept == KILL_ECHOES[: len(kept)], f"kill at {at}: {kept}"
        assert len(kept) >= run.answered, f"kill at {at}: answered {run.answered}, kept {kept}"
    record_property("fault_points", f"recorder (a real kill -9 of record): {points} fault points")


class _Killed:
    def __init__(self, out: Path, answered: int, count: int) -> None:
        self.out, self.answered, self.count = out, answered, count


def _killed_session(folder: Path, plan: FaultPlan) -> _Killed:
    """A session of echo calls through ``record`` under ``plan``; how many answers the client
    got before the proxy ended, and how many durable calls the proxy made."""
    folder.mkdir()
    out, counted = folder / "recorded.json", folder / "count"
    plan.count_file = str(counted)
    env = f"{FAULTS_VARIABLE}={plan.to_environment()}"
    client = RawClient(["env", env, *record_argv(out, sys.executable, RAW_SERVER)])
    answered = 0
    try:
        client.handshake()
        for args in KILL_ECHOES:
            client.call("tools/call", {"name": "echo", "arguments": args})
            answered += 1
    except (EOFError, OSError):
        pass  # killed: the client sees its server end
    finally:
        client.finish()
    return _Killed(out, answered, read_count(counted))


def _kept_echoes(out: Path) -> list[dict[str, Any]]:
    if not out.exists() and b"\n" not in _bytes(journal_path(out)):
        return []  # killed before the journal's first line was whole: nothing to read
    suite = load_suite(out)
    return [e["args"] for task in suite["tasks"] for e in task["fixtures"]["toolResponses"]]


def _bytes(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""
