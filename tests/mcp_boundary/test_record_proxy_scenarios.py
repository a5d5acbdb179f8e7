"""Generated scenarios of the recording proxy under faults (issue 29, part 3): several clients at
once on both transports, colliding JSON-RPC ids, answers out of order (a hand-written server
answers each call after a delay the scenario chooses), a server that crashes mid-session, a
client that gives up before its answer, and a recorder that fails (a ``FaultPlan`` of role
``recorder`` in ``TOOLCALL_SPEC_FAULTS``). Each example is real processes: the proxy, the server,
the clients. A state machine over processes would restart them per step; a generated scenario
run once per example covers the same ground in a fraction of the time.

Invariants, per example:

- every answer is forwarded unchanged: a client that gets an answer gets the one its own
  request caused (the echo of its own tag), or a JSON-RPC error (-32000) when the server died;
- the session goes on: every request the client waited for gets an answer or that error,
  and ``record`` exits as its ``--help`` says, whatever the recorder did;
- every answered call is in the suite once, paired with its own request, in the order the
  requests were sent (per session); a call the client gave up on is there once, answered or a
  failure. With a recorder fault injected, what the suite holds is a subsequence of that, each
  entry still paired with its own request.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("httpx", reason="the http extra is not installed")

from support.recording import (
    RAW_SERVER,
    RawClient,
    call_message,
    child_env,
    echoed,
    initialize_message,
    post_jsonrpc,
    raw_http_upstream,
    record_argv,
    recording_proxy,
    stop,
)

from toolcall_spec.filesystem import FAULTS_VARIABLE, FaultPlan
from toolcall_spec.loading import DocumentError
from toolcall_spec.replay.journal import read_suite_source
from toolcall_spec.validation import validate

pytestmark = [pytest.mark.faults]

STAGGER = 0.08
"""Between two sends: the order the proxy receives them is the order the scenario lists."""
GIVE_UP = 0.15
"""How long a client that gives up waits (its call's delay is longer)."""
SERVER_GONE = -32000


@dataclass(frozen=True)
class Send:
    client: int
    request_id: int
    tag: str
    delay: float
    sse: bool
    gives_up: bool


@dataclass(frozen=True)
class Scenario:
    transport: str
    sessions: bool
    clients: int
    sends: tuple[Send, ...]
    crash_before: int | None
    """The server is killed (its ``die`` tool) just before this send."""
    close_early: bool
    """stdio: the client closes stdin right after its last send, before the answers."""
    recorder_fault: FaultPlan | None


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    transport = draw(st.sampled_from(["stdio", "http"]))
    http = transport == "http"
    sessions = http and draw(st.booleans())
    clients = draw(st.integers(1, 3)) if http else 1
    count = draw(st.integers(1, 6))
    sends = []
    for i in range(count):
        delay = draw(st.sampled_from([0.0, 0.05, 0.3]))
        sends.append(
            Send(
                client=draw(st.integers(0, clients - 1)),
                # Over HTTP ids collide on purpose (each POST pairs its own answers); a stdio pipe
                # can pair equal ids only by send order, which test_record_pairing covers.
                request_id=draw(st.sampled_from([1, 2])) if http else 100 + i,
                tag=f"t{i}",
                delay=delay,
                sse=http and draw(st.booleans()),
                gives_up=http and delay > GIVE_UP and draw(st.booleans()),
            )
        )
    crash_before = draw(st.none() | st.integers(0, count))
    fault = None
    if draw(st.booleans()):
        fault = FaultPlan(
            at=draw(st.integers(1, 12)),
            errno=draw(st.sampled_from(["ENOSPC", "EIO", "EDQUOT"])),
            persistent=draw(st.booleans()),
            role="recorder",
        )
    close_early = not http and draw(st.booleans())
    return Scenario(transport, sessions, clients, tuple(sends), crash_before, close_early, fault)


# --- running a scenario ------------------------------------------------------------------------


def environment(scenario: Scenario) -> dict[str, str]:
    env = child_env()
    env.pop(FAULTS_VARIABLE, None)
    if scenario.recorder_fault is not None:
        env[FAULTS_VARIABLE] = scenario.recorder_fault.to_environment()
    return env


def run_stdio(scenario: Scenario, out: Path) -> tuple[list[Any], int, str]:
    """Each send's answer as the client saw it (``None``: none came), the exit status, stderr."""
    client = RawClient(record_argv(out, sys.executable, RAW_SERVER), env=environment(scenario))
    client.handshake()
    sends = scenario.sends
    if scenario.crash_before is not None:  # the session ends with the server: nothing after
        sends = sends[: scenario.crash_before]
    for number, send in enumerate(scenario.sends):
        if number == scenario.crash_before:
            break
        arguments = {"tag": send.tag, "delay": send.delay}
        message = call_message(send.request_id, "echo", **arguments)
        client.send_line(json.dumps(message).encode() + b"\n")
        time.sleep(STAGGER)
    wanted = {s.request_id for s in sends}
    if scenario.crash_before is not None:
        die = client.send("tools/call", {"name": "die", "arguments": {}})
        wanted.add(die or 0)  # its error says the proxy saw the server end
    if scenario.close_early:
        client.stdin.close()
    answers = read_answers(client, wanted)
    status, stderr = client.finish()
    by_id = {a["id"]: a for a in answers}
    return [by_id.get(s.request_id) for s in sends], status, stderr


def read_answers(client: RawClient, wanted: set[int]) -> list[dict[str, Any]]:
    answers: list[dict[str, Any]] = []
    deadline = time.monotonic() + 30
    while wanted - {a.get("id") for a in answers} and time.monotonic() < deadline:
        line = client.read_line(max(deadline - time.monotonic(), 0.1))
        if not line:
            break
        message = json.loads(line)
        if isinstance(message, dict) and "id" in message:
            answers.append(message)
    return answers


def run_http(scenario: Scenario, out: Path, log: Path) -> tuple[list[Any], int, str]:
    seen: list[Any] = [None] * len(scenario.sends)
    with (
        raw_http_upstream(sessions=scenario.sessions) as (url, server),
        recording_proxy(url, out, log, env=environment(scenario)) as (proxy_url, proxy),
    ):
        sessions = open_sessions(proxy_url, scenario)
        threads = []
        for number, send in enumerate(scenario.sends):
            if number == scenario.crash_before:
                kill_server(proxy_url, sessions[0], server)
            thread = threading.Thread(
                target=http_send, args=(proxy_url, send, sessions[send.client], seen, number)
            )
            thread.start()
            threads.append(thread)
            time.sleep(STAGGER)
        if scenario.crash_before == len(scenario.sends):
            kill_server(proxy_url, sessions[0], server)
        for thread in threads:
            thread.join(60)
        stop(proxy)
        status = proxy.returncode
    return seen, status, log.read_text("utf-8")


def open_sessions(url: str, scenario: Scenario) -> list[str | None]:
    # A first request pays the processes' start-up, which could let a later request be read
    # first (the order sent is the order the proxy reads them).
    post_jsonrpc(url, {"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    if not scenario.sessions:
        return [None] * scenario.clients
    sessions = []
    for number in range(scenario.clients):
        _, session = post_jsonrpc(url, initialize_message(0, f"client-{number}"))
        post_jsonrpc(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        sessions.append(session)
    return sessions


def kill_server(url: str, session: str | None, server: Any) -> None:
    with contextlib.suppress(Exception):  # the answer to a dying server's call does not matter
        post_jsonrpc(url, call_message(99, "die"), session, timeout=10)
    server.wait(10)


def http_send(url: str, send: Send, session: str | None, seen: list[Any], number: int) -> None:
    message = call_message(send.request_id, "echo", tag=send.tag, delay=send.delay, sse=send.sse)
    try:
        answers, _ = post_jsonrpc(url, message, session, timeout=GIVE_UP if send.gives_up else 60)
    except Exception as exc:
        import httpx

        if not (send.gives_up and isinstance(exc, httpx.TimeoutException)):
            seen[number] = {"transport failure": repr(exc)}
        return
    seen[number] = answers[0] if len(answers) == 1 else {"answers": answers}


# --- the invariants ----------------------------------------------------------------------------


def outcome(send: Send, answer: Any, may_miss: bool) -> str:
    """What the client saw: ``answered`` (its own echo), ``error`` (-32000), ``none`` (it gave
    up, or closed stdin first: ``may_miss``). Anything else breaks an invariant here."""
    if answer is None:
        assert send.gives_up or may_miss, send
        return "none"
    assert "transport failure" not in answer, answer  # the session went on
    if "error" in answer:
        assert answer["error"]["code"] == SERVER_GONE, answer
        return "error"
    assert echoed(answer["result"]) == send.tag, (send, answer)  # forwarded unchanged
    return "answered"


def task_of(scenario: Scenario, send: Send) -> str:
    if scenario.transport == "stdio":
        return "raw-client"
    return f"client-{send.client}" if scenario.sessions else "stateless"


def check(scenario: Scenario, seen: list[Any], status: int, stderr: str, out: Path) -> None:
    stdio = scenario.transport == "stdio"
    crashed = scenario.crash_before is not None
    sent = list(scenario.sends)
    if stdio and crashed:
        sent = sent[: scenario.crash_before]
    outcomes = [
        outcome(s, a, stdio and scenario.close_early) for s, a in zip(sent, seen, strict=True)
    ]
    # record --help: 0 when the client ended the session, 1 when the server did; 3 when a
    # recording failure left the suite unwritten or short of an answered call
    allowed = {0}
    if stdio and crashed:
        allowed = {0, 1} if scenario.close_early else {1}
    if scenario.recorder_fault is not None:
        allowed |= {3}
    assert status in allowed, stderr
    try:
        suite, _ = read_suite_source(str(out))  # as every command reads a recording
    except DocumentError:  # no suite, no journal line: only a disk that failed keeps nothing
        assert scenario.recorder_fault is not None, stderr
        return
    assert not [p for p in validate(suite, "suite") if p.severity == "error"]
    recorded = {
        task["taskId"]: [e for e in task["fixtures"]["toolResponses"] if e["tool"] == "echo"]
        for task in suite["tasks"]
    }
    for task in {task_of(scenario, s) for s in sent}:
        mine = [
            (s.tag, o) for s, o in zip(sent, outcomes, strict=True) if task_of(scenario, s) == task
        ]
        entries = recorded.get(task, [])
        if scenario.recorder_fault is None:  # each call once, in the order sent
            assert [e["args"]["tag"] for e in entries] == [t for t, _ in mine], (task, stderr)
        else:  # what a failing recorder kept: a subsequence, in order
            tags = iter(t for t, _ in mine)
            assert all(e["args"]["tag"] in tags for e in entries), (task, entries, stderr)
        outcome_of = dict(mine)
        for entry in entries:  # each paired with its own request
            seen_outcome = outcome_of[entry["args"]["tag"]]
            failed = entry.get("isError") is True
            if seen_outcome == "answered":
                assert not failed, entry
            elif seen_outcome == "error":
                assert failed, entry
            if not failed:
                assert echoed(entry["response"]) == entry["args"]["tag"], entry


@pytest.mark.requirement("toolcall-spec.requirement.record.paired-by-exchange")
@settings(max_examples=12)  # about 40 to 70 s on 2 busy cores: the faults session's budget
@given(scenario=scenarios())
def test_the_recording_proxy_keeps_its_promises_through_faults(
    tmp_path_factory: pytest.TempPathFactory, scenario: Scenario
) -> None:
    folder = tmp_path_factory.mktemp("scenario")
    out, log = folder / "recorded.json", folder / "proxy.log"
    if scenario.transport == "stdio":
        seen, status, stderr = run_stdio(scenario, out)
    else:
        seen, status, stderr = run_http(scenario, out, log)
    check(scenario, seen, status, stderr, out)
