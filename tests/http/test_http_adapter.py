"""HttpAdapter: the conformance host adapter over HTTP, against the real server."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx
import pytest
from support.http_serving import FIXTURE_ERROR, SCRIPTED, serving

from toolcall_spec.conformance.adapter import RunCreated, RunRefusal
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.http.adapter import HostError, HttpAdapter, suite_data_uri
from toolcall_spec.http.app import HostSettings
from toolcall_spec.http.server import BackgroundServer

VOLATILE = ("eventId", "runId", "timestamp")


def comparable(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Events without what differs between two runs of the same suite (ids, clock readings,
    and ``run.started.transport``: ``rest`` over HTTP, absent in process)."""
    out = []
    for event in events:
        kept = {k: v for k, v in event.items() if k not in VOLATILE}
        volatile = ("durationMs", "transport")
        kept["payload"] = {k: v for k, v in event["payload"].items() if k not in volatile}
        out.append(kept)
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[BackgroundServer]:
    with serving() as running:
        yield running


@pytest.fixture
def adapter(server: BackgroundServer) -> Iterator[HttpAdapter]:
    with HttpAdapter(server.url) as http_adapter:
        yield http_adapter


def suites() -> list[dict[str, Any]]:
    fixture = load_fixture(FIXTURE_ERROR)
    live = load_fixture(FIXTURE_ERROR)
    live["tasks"][0]["fixtures"]["onMiss"] = "live"
    live["tasks"][0]["input"]["calls"].append({"tool": "billing:other", "args": {}})
    return [fixture, live]


@pytest.mark.parametrize("index", [0, 1])
def test_over_http_a_run_matches_the_same_run_in_process(adapter: HttpAdapter, index: int) -> None:
    suite = suites()[index]
    host = ReferenceHost()
    local_id = host.create_run(suite, agent_id=SCRIPTED)
    created = adapter.create_eval_run(suite, agent_id=SCRIPTED)
    assert isinstance(created, RunCreated)
    remote_events = adapter.events(created.run_id)
    assert comparable(remote_events) == comparable(host.events(local_id))
    assert {e["runId"] for e in remote_events} == {created.run_id}
    assert adapter.summary(created.run_id) == host.summary(local_id)
    assert adapter.agent_output(created.run_id) == host.agent_output(local_id)


def test_capabilities_are_the_discovery_document(adapter: HttpAdapter) -> None:
    document = adapter.capabilities()
    assert document["fixtures"] == [FIXTURE_ERROR]
    assert document["agents"] == ReferenceHost().capabilities["agents"]


def test_live_invocations_are_read_through_the_seam(adapter: HttpAdapter) -> None:
    before = adapter.live_invocations() or {}
    adapter.create_eval_run(suites()[1], agent_id=SCRIPTED)
    after = adapter.live_invocations()
    assert after is not None
    assert after.get("billing:other", 0) == before.get("billing:other", 0) + 1


def test_a_refusal_comes_back_as_a_run_refusal() -> None:
    with (
        serving(ReferenceHost().without("fixtureErrors")) as negative,
        HttpAdapter(negative.url) as adapter,
    ):
        refusal = adapter.create_eval_run(load_fixture(FIXTURE_ERROR), agent_id=SCRIPTED)
        assert isinstance(refusal, RunRefusal)
        assert refusal.status == 400
        assert refusal.envelope["details"]["field"] == "tasks[0].fixtures.toolResponses[0].isError"


def test_seams_a_host_lacks_are_none() -> None:
    """A host started without its test seams (the default of ``serve``)."""
    settings = HostSettings(expose_test_seams=False)
    with serving(settings=settings) as running, HttpAdapter(running.url) as adapter:
        created = adapter.create_eval_run(load_fixture(FIXTURE_ERROR), agent_id=SCRIPTED)
        assert isinstance(created, RunCreated)
        assert adapter.agent_output(created.run_id) is None
        assert adapter.live_invocations() is None
        assert adapter.summary(created.run_id)["passed"] is True


def test_the_token_is_sent() -> None:
    settings = HostSettings(token="t0ken", expose_test_seams=True)
    with serving(settings=settings) as running:
        with HttpAdapter(running.url, token="t0ken") as adapter:
            created = adapter.create_eval_run(load_fixture(FIXTURE_ERROR), agent_id=SCRIPTED)
            assert isinstance(created, RunCreated)
            assert adapter.events(created.run_id)
        with HttpAdapter(running.url, token="wrong") as adapter:
            # Wrong credentials say nothing about the suite: not a refusal, a host error.
            with pytest.raises(HostError, match="401"):
                adapter.create_eval_run(load_fixture(FIXTURE_ERROR), agent_id=SCRIPTED)
            with pytest.raises(HostError, match="401"):
                adapter.summary("local/x")


def test_an_unreachable_host_is_a_host_error() -> None:
    with HttpAdapter("http://127.0.0.1:9") as adapter, pytest.raises(HostError, match="failed"):
        adapter.capabilities()


def test_answers_outside_the_surface_are_host_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/runs":
            return httpx.Response(201, json={"status": "running"})
        return httpx.Response(200, text="<html>")

    with HttpAdapter("http://host.invalid", transport=httpx.MockTransport(handler)) as adapter:
        with pytest.raises(HostError, match="not JSON"):
            adapter.capabilities()
        with pytest.raises(HostError, match="without a runId"):
            adapter.create_eval_run({"suiteId": "x"}, agent_id=SCRIPTED)


def test_suites_travel_as_base64_data_uris() -> None:
    import base64

    import orjson

    uri = suite_data_uri({"suiteId": "é"})
    assert uri.startswith("data:application/json;base64,")
    assert orjson.loads(base64.b64decode(uri.split(",", 1)[1])) == {"suiteId": "é"}
