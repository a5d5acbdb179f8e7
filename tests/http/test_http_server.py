"""The reference host over real HTTP: uvicorn on a free loopback port, driven with httpx."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from support.http_serving import (
    FIXTURE_ERROR,
    SCRIPTED,
    Gate,
    all_events,
    client,
    create,
    data_uri,
    run_fixture,
    run_path,
    serving,
    wait_terminal,
)

from toolcall_spec.host import InvalidHostInputError, ReferenceHost, RunRecord, RunRequest
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.http.app import HostSettings, create_app
from toolcall_spec.http.limits import Limits
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.http.suite_refs import SuiteSources, conformance_fixtures
from toolcall_spec.openwop_wire import SEAMS_EXTENSION, project_id
from toolcall_spec.validation import validate

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with serving() as running:
        yield running


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with client(server) as session:
        yield session


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()
    assert body["error"] == code
    assert body["message"]
    assert set(body) <= {"error", "message", "details"}
    assert validate(body, "error-envelope") == []
    return body


# -- discovery ---------------------------------------------------------------------------------


def test_discovery_is_the_v2_document_with_an_etag(http: httpx.Client) -> None:
    for headers in ({}, {"OpenWOP-Version": "2.0"}):
        response = http.get("/.well-known/openwop", headers=headers)
        assert response.status_code == 200
        document = response.json()
        assert document["protocolVersions"] == ["2.0"]
        assert document["fixtures"] == [FIXTURE_ERROR]
        assert document["agents"]["evalSuite"]["fixtureErrors"] is True
        assert validate(document, "capabilities") == []
        assert response.headers["etag"].startswith('"')
    etag = response.headers["etag"]
    again = http.get("/.well-known/openwop", headers={"If-None-Match": etag})
    assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", etag)
    weak = http.get("/.well-known/openwop", headers={"If-None-Match": f'"other", W/{etag}'})
    assert weak.status_code == 304
    stale = http.get("/.well-known/openwop", headers={"If-None-Match": '"stale"'})
    assert stale.status_code == 200


def test_another_protocol_major_is_refused(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    v1 = {"OpenWOP-Version": "1.0"}
    body = {"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED}
    for response in (
        http.get("/.well-known/openwop", headers=v1),
        http.post("/runs", json=body, headers=v1),
        http.get(run_path(run_id), headers=v1),
    ):
        envelope = assert_envelope(response, 400, "validation_error")
        assert envelope["details"]["field"] == "OpenWOP-Version"
    assert http.get(run_path(run_id), headers={"OpenWOP-Version": "2.1"}).status_code == 200


# -- RFC 0245 over HTTP --------------------------------------------------------------------------


@pytest.mark.requirement("openwop.requirement.0245.fixture-error-replayed")
@pytest.mark.parametrize("by", ["fixture id", "data uri"])
def test_a_served_error_entry_is_recorded_as_a_tool_error(http: httpx.Client, by: str) -> None:
    ref = FIXTURE_ERROR if by == "fixture id" else data_uri(load_fixture(FIXTURE_ERROR))
    created = create(http, ref)
    assert created.status_code == 201, created.text
    body = created.json()
    assert set(body) == {"runId", "status", "eventsUrl", "statusUrl"}
    assert body["runId"].startswith("local/")
    assert body["status"] in ("running", "completed")
    assert created.headers["location"] == body["statusUrl"]

    events = all_events(http, body["runId"])
    returned = [e["payload"] for e in events if e["type"] == "agent.tool-returned"]
    assert len(returned) == 2
    assert returned[0]["error"]["code"]
    assert returned[0]["error"]["message"]
    assert "outcome" not in returned[0]
    assert returned[0]["status"] == "error"
    assert "upstream_down" not in orjson.dumps(returned[0]).decode()
    assert "error" not in returned[1]
    assert returned[1]["status"] == "ok"

    summary = http.get(f"{run_path(body['runId'])}/eval-summary")
    assert summary.status_code == 200
    assert summary.json()["fixtureMissCount"] == 0
    assert summary.json()["passed"] is True

    snapshot = http.get(body["statusUrl"]).json()
    assert snapshot["status"] == "completed"
    seen = snapshot["extensions"][SEAMS_EXTENSION]["agentOutput"]["fail-then-succeed"]
    assert [call["isError"] for call in seen] == [True, False]


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
@pytest.mark.requirement("toolcall-spec.requirement.capabilities.refusal-envelope")
def test_a_host_without_fixture_errors_refuses_the_fixture_at_create() -> None:
    with serving(ReferenceHost().without("fixtureErrors")) as negative, client(negative) as http:
        discovery = http.get("/.well-known/openwop").json()
        assert "fixtureErrors" not in discovery["agents"]["evalSuite"]
        for ref in (FIXTURE_ERROR, data_uri(load_fixture(FIXTURE_ERROR))):
            body = assert_envelope(create(http, ref), 400, "validation_error")
            field = "tasks[0].fixtures.toolResponses[0].isError"
            assert body["details"]["field"] == field
            assert field in body["message"]


def test_the_hosts_own_refusals_pass_through(http: httpx.Client) -> None:
    body = assert_envelope(
        http.post(
            "/runs", json={"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": "someone.else"}
        ),
        400,
        "validation_error",
    )
    assert body["details"]["field"] == "agentId"
    body = assert_envelope(create(http, FIXTURE_ERROR, evalMode="rubric"), 400, "validation_error")
    assert body["details"]["field"] == "mode"
    invalid_suite = data_uri({"suiteId": "nope"})
    assert_envelope(create(http, invalid_suite), 400, "validation_error")


# -- events: polling and SSE -------------------------------------------------------------------


@pytest.mark.requirement("toolcall-spec.requirement.events.log-order")
def test_polling_returns_events_after_the_cursor(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    poll = f"{run_path(run_id)}/events/poll"
    everything = http.get(poll).json()
    events = everything["events"]
    assert [e["sequence"] for e in events] == list(range(len(events)))
    assert everything["lastSequence"] == len(events) - 1
    assert (everything["runId"], everything["status"], everything["isTerminal"]) == (
        run_id,
        "completed",
        True,
    )
    assert [e["type"] for e in events[:2]] == ["run.started", "eval.started"]
    assert [e["type"] for e in events[-2:]] == ["eval.completed", "run.completed"]
    assert all(e["runId"] == run_id for e in events)

    tail = http.get(poll, params={"afterSequence": 3}).json()
    assert tail["events"] == events[4:]
    empty = http.get(poll, params={"afterSequence": len(events) - 1, "timeout": 1}).json()
    assert (empty["events"], empty["lastSequence"], empty["isTerminal"]) == ([], -1, True)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"afterSequence": "x"}, "afterSequence"),
        ({"afterSequence": "-2"}, "afterSequence"),
        ({"timeout": "0"}, "timeout"),
        ({"timeout": "61"}, "timeout"),
        ({"timeout": "nan"}, "timeout"),
        ({"timeout": "soon"}, "timeout"),
    ],
)
def test_bad_poll_parameters_are_400(
    http: httpx.Client, params: dict[str, str], field: str
) -> None:
    run_id = run_fixture(http)
    body = assert_envelope(
        http.get(f"{run_path(run_id)}/events/poll", params=params), 400, "validation_error"
    )
    assert body["details"]["field"] == field


def parse_sse(text: str) -> list[dict[str, str]]:
    frames = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":") or ":" not in line:
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        if "data" in fields:
            frames.append(fields)
    return frames


def test_the_event_stream_sends_every_event_then_ends(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    expected = all_events(http, run_id)
    response = http.get(f"{run_path(run_id)}/events")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    frames = parse_sse(response.text)
    assert [orjson.loads(f["data"]) for f in frames] == expected
    assert [f["id"] for f in frames] == [str(e["sequence"]) for e in expected]
    assert [f["event"] for f in frames] == [e["type"] for e in expected]

    resumed = http.get(f"{run_path(run_id)}/events", headers={"Last-Event-ID": "2"})
    assert [orjson.loads(f["data"]) for f in parse_sse(resumed.text)] == expected[3:]
    bad = http.get(f"{run_path(run_id)}/events", headers={"Last-Event-ID": "two"})
    assert assert_envelope(bad, 400, "validation_error")["details"]["field"] == "Last-Event-ID"


def test_a_stream_opened_while_running_delivers_the_events_once_they_exist() -> None:
    gate = Gate()
    settings = HostSettings(gate=gate)
    with serving(settings=settings) as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        gate.wait_entered()
        received: list[str] = []

        def read_stream() -> None:
            with (
                client(running) as other,
                other.stream("GET", f"{run_path(run_id)}/events") as stream,
            ):
                received.append(stream.read().decode())

        reader = threading.Thread(target=read_stream)
        reader.start()
        reader.join(0.5)
        assert reader.is_alive(), "the stream ended while the run was still running"
        gate.opened.set()
        reader.join(10)
        assert not reader.is_alive()
        frames = parse_sse(received[0])
        assert [orjson.loads(f["data"]) for f in frames] == all_events(http, run_id)


# -- 409 while running, concurrency ------------------------------------------------------------


def test_the_summary_is_409_while_running_then_200() -> None:
    gate = Gate()
    settings = HostSettings(gate=gate)
    with serving(settings=settings) as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        gate.wait_entered()
        body = assert_envelope(
            http.get(f"{run_path(run_id)}/eval-summary"), 409, "run_state_conflict"
        )
        assert body["details"]["status"] == "running"
        snapshot = http.get(run_path(run_id)).json()
        assert snapshot["status"] == "running"
        poll = http.get(f"{run_path(run_id)}/events/poll", params={"timeout": 1}).json()
        assert (poll["events"], poll["isTerminal"], poll["status"]) == ([], False, "running")
        gate.opened.set()
        wait_terminal(http, run_id)
        assert http.get(f"{run_path(run_id)}/eval-summary").status_code == 200


def test_a_long_poll_returns_as_soon_as_the_run_finishes() -> None:
    gate = Gate()
    settings = HostSettings(gate=gate)
    with serving(settings=settings) as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        gate.wait_entered()
        threading.Timer(0.3, gate.opened.set).start()
        page = http.get(f"{run_path(run_id)}/events/poll", params={"timeout": 30}).json()
        assert page["isTerminal"] is True
        assert len(page["events"]) == 9
        assert page["events"][-1]["type"] == "run.completed"


def test_two_concurrent_runs_keep_their_own_events() -> None:
    gate = Gate()
    settings = HostSettings(gate=gate)
    other_suite = load_fixture(FIXTURE_ERROR)
    other_suite["suiteId"] = "core.conformance.evals.other"
    other_suite["tasks"][0]["taskId"] = "other-task"
    with serving(settings=settings) as running, client(running) as http:
        first = create(http, FIXTURE_ERROR).json()["runId"]
        second = create(http, data_uri(other_suite)).json()["runId"]
        gate.wait_entered(2)
        assert first != second
        gate.opened.set()
        for run_id, suite_id, task_id in (
            (first, "core.conformance.evals.fixture-error", "fail-then-succeed"),
            (second, "core.conformance.evals.other", "other-task"),
        ):
            events = all_events(http, run_id)
            assert {e["runId"] for e in events} == {run_id}
            assert events[1]["payload"]["suiteId"] == suite_id
            assert {e["payload"]["taskId"] for e in events if e["type"] == "eval.scored"} == {
                task_id
            }
            assert len({e["eventId"] for e in events}) == len(events)


def test_past_the_active_run_limit_creates_are_429_and_the_server_keeps_serving() -> None:
    gate = Gate()
    settings = HostSettings(gate=gate, limits=Limits(max_active_runs=2, worker_threads=2))
    with serving(settings=settings) as running, client(running) as http:
        held = [create(http, FIXTURE_ERROR).json()["runId"] for _ in range(2)]
        response = create(http, FIXTURE_ERROR)
        assert_envelope(response, 429, "rate_limited")
        assert response.headers["retry-after"]
        assert http.get("/.well-known/openwop").status_code == 200
        gate.opened.set()
        for run_id in held:
            wait_terminal(http, run_id)
        assert create(http, FIXTURE_ERROR).status_code == 201


def test_the_oldest_finished_runs_are_evicted_past_the_kept_limit() -> None:
    settings = HostSettings(limits=Limits(max_runs_kept=3))
    with serving(settings=settings) as running, client(running) as http:
        runs = [run_fixture(http) for _ in range(5)]
        assert [http.get(run_path(r)).status_code for r in runs] == [404, 404, 200, 200, 200]


# -- run ids in paths ----------------------------------------------------------------------------


def test_the_run_id_works_percent_encoded_and_plain(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    tenant, opaque = run_id.split("/")
    for path in (
        f"/runs/{tenant}%2F{opaque}",
        f"/runs/{tenant}%2f{opaque}",
        f"/runs/{tenant}/{opaque}",
    ):
        assert http.get(path).json()["runId"] == run_id, path
        assert http.get(f"{path}/eval-summary").status_code == 200, path
        assert http.get(f"{path}/events/poll").json()["runId"] == run_id, path


def test_unknown_runs_and_resources_are_404(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    for path in (
        "/runs/local%2Fnope",
        "/runs/nope",
        f"{run_path(run_id)}/nothing",
        f"{run_path(run_id)}/events/poll/more",
        "/nowhere",
        "/runs/",
    ):
        assert_envelope(http.get(path), 404, "not_found")


def test_wrong_methods_are_405(http: httpx.Client) -> None:
    run_id = run_fixture(http)
    for method, path in (
        ("DELETE", run_path(run_id)),
        ("GET", "/runs"),
        ("POST", "/.well-known/openwop"),
        ("PUT", run_path(run_id)),
    ):
        response = http.request(method, path)
        assert_envelope(response, 405, "toolcall-spec.method_not_allowed")
        assert response.headers["allow"]


# -- bad and oversized requests ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED, "suite": {}},
            "suite",
        ),
        ({"evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED}, "mode"),
        ({"mode": "workflow", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED}, "mode"),
        ({"mode": "eval", "agentId": SCRIPTED}, "evalSuiteRef"),
        ({"mode": "eval", "evalSuiteRef": FIXTURE_ERROR}, "agentId"),
        ({"mode": "eval", "evalSuiteRef": 7, "agentId": SCRIPTED}, "evalSuiteRef"),
        ({"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": ""}, "agentId"),
        (
            {"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED, "evalMode": 1},
            "evalMode",
        ),
        ([1, 2], "(root)"),
    ],
)
def test_bad_create_bodies_are_400_naming_the_field(
    http: httpx.Client, body: Any, field: str
) -> None:
    envelope = assert_envelope(http.post("/runs", json=body), 400, "validation_error")
    assert envelope["details"]["field"] == field
    assert field in envelope["message"]


def test_a_body_that_is_not_json_is_400(http: httpx.Client) -> None:
    response = http.post(
        "/runs", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert_envelope(response, 400, "validation_error")


def test_a_body_of_another_media_type_is_415(http: httpx.Client) -> None:
    for headers in ({"Content-Type": "text/plain"}, {}):
        response = http.post("/runs", content=b"{}", headers=headers)
        assert_envelope(response, 415, "unsupported_media_type")


def test_oversized_bodies_and_suites_are_413_and_the_server_keeps_serving() -> None:
    limits = Limits(max_body_bytes=4096, max_suite_bytes=1024)
    settings = HostSettings(limits=limits)
    with serving(settings=settings) as running, client(running) as http:
        huge = {"mode": "eval", "evalSuiteRef": "x" * 10_000, "agentId": SCRIPTED}
        assert_envelope(http.post("/runs", json=huge), 413, "payload_too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while streaming
            yield b'{"mode": "eval", "evalSuiteRef": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}'

        streamed = http.post(
            "/runs", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert_envelope(streamed, 413, "payload_too_large")
        big_suite = load_fixture(FIXTURE_ERROR)
        big_suite["tasks"][0]["input"]["pad"] = "y" * 1500
        assert_envelope(create(http, data_uri(big_suite)), 413, "payload_too_large")
        assert create(http, FIXTURE_ERROR).status_code == 201


def test_file_references_are_refused_by_default(http: httpx.Client, tmp_path: Path) -> None:
    (tmp_path / "suite.json").write_bytes(orjson.dumps(load_fixture(FIXTURE_ERROR)))
    body = assert_envelope(create(http, (tmp_path / "suite.json").as_uri()), 403, "forbidden")
    assert body["details"]["field"] == "evalSuiteRef"
    network = assert_envelope(
        create(http, "https://example.com/suite.json"), 400, "validation_error"
    )
    assert network["details"]["field"] == "evalSuiteRef"


def test_an_allowed_directory_serves_its_files_and_nothing_outside(tmp_path: Path) -> None:
    allowed = tmp_path / "suites"
    allowed.mkdir()
    (allowed / "suite.json").write_bytes(orjson.dumps(load_fixture(FIXTURE_ERROR)))
    (tmp_path / "secret.json").write_bytes(orjson.dumps(load_fixture(FIXTURE_ERROR)))
    settings = HostSettings(sources=SuiteSources(conformance_fixtures(), allowed_dir=allowed))
    with serving(settings=settings) as running, client(running) as http:
        assert create(http, (allowed / "suite.json").as_uri()).status_code == 201
        for ref in (
            f"file://{allowed}/../secret.json",
            f"file://{allowed}/%2E%2E/secret.json",
            (tmp_path / "secret.json").as_uri(),
        ):
            assert_envelope(create(http, ref), 403, "forbidden")


# -- auth ----------------------------------------------------------------------------------------


def test_with_a_token_everything_but_discovery_needs_it() -> None:
    settings = HostSettings(token=TOKEN)
    with serving(settings=settings) as running:
        with client(running) as anonymous:
            assert anonymous.get("/.well-known/openwop").status_code == 200
            body = {"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED}
            for response in (
                anonymous.post("/runs", json=body),
                anonymous.get("/runs/local%2Fx"),
                anonymous.get("/x-toolcall-spec/live-invocations"),
                anonymous.get("/nowhere"),
            ):
                assert_envelope(response, 401, "unauthenticated")
                assert response.headers["www-authenticate"].startswith("Bearer")
        for wrong in ("Bearer wrong", f"Basic {TOKEN}", "Bearer", f"Bearer {TOKEN}x"):
            with httpx.Client(base_url=running.url, headers={"Authorization": wrong}) as bad:
                assert_envelope(bad.get("/runs/local%2Fx"), 401, "unauthenticated")
        with client(running, TOKEN) as http:
            run_id = run_fixture(http)
            assert http.get(run_path(run_id)).status_code == 200
            lower = {"Authorization": f"bearer {TOKEN}"}
            assert http.get(run_path(run_id), headers=lower).status_code == 200


# -- seams ---------------------------------------------------------------------------------------


def test_live_invocations_count_live_calls() -> None:
    suite = load_fixture(FIXTURE_ERROR)
    task = suite["tasks"][0]
    task["fixtures"] = {"toolResponses": [], "onMiss": "live"}
    task["expected"]["match"]["value"] = [{"tool": "billing:lookup", "isError": False}] * 2
    with serving() as running, client(running) as http:
        assert http.get("/x-toolcall-spec/live-invocations").json() == {"liveInvocations": {}}
        created = create(http, data_uri(suite))
        assert created.status_code == 201, created.text
        wait_terminal(http, created.json()["runId"])
        counts = http.get("/x-toolcall-spec/live-invocations").json()
        assert counts == {"liveInvocations": {"billing:lookup": 2}}


def test_a_failing_backend_marks_the_run_failed_and_keeps_serving() -> None:
    class Broken(ReferenceHost):
        def execute(self, run_id: str, request: RunRequest) -> RunRecord:
            raise RuntimeError("disk on fire")

    with serving(Broken()) as running, client(running) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        page = wait_terminal(http, run_id)
        assert (page["status"], page["isTerminal"]) == ("failed", True)
        snapshot = http.get(run_path(run_id)).json()
        assert snapshot["error"]["code"] == "internal_error"
        assert_envelope(http.get(f"{run_path(run_id)}/eval-summary"), 409, "run_state_conflict")
        assert http.get("/.well-known/openwop").status_code == 200


def test_the_status_url_is_a_usable_path(http: httpx.Client) -> None:
    body = create(http, FIXTURE_ERROR).json()
    wait_terminal(http, body["runId"])
    assert body["statusUrl"] == f"/runs/{project_id(body['runId'])}"
    assert http.get(body["eventsUrl"]).status_code == 200


@pytest.mark.parametrize(
    "settings",
    [HostSettings(new_opaque_id=lambda: "short"), HostSettings(tenant="two words")],
    ids=["opaque-id", "tenant"],
)
def test_the_app_refuses_settings_that_would_write_invalid_run_ids(settings: HostSettings) -> None:
    with pytest.raises(InvalidHostInputError):
        create_app(ReferenceHost(), settings)
