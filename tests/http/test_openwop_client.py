"""The official OpenWOP Python client (``openwop-client`` 2.7.0, from PyPI) against
``toolcall-spec serve`` started in a subprocess on a free loopback port: the real other side of
the wire, not our own transcription of it."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from openwop_client import (
    CreateRunRequest,
    EvalSummary,
    OpenwopClient,
    RunSnapshot,
    WopError,
)
from openwop_client import project_id as client_project_id
from openwop_client import unproject_id as client_unproject_id
from support.http_serving import FIXTURE_ERROR, SCRIPTED, serve_subprocess

from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.openwop_wire import (
    EVAL_COMPLETED,
    RUN_COMPLETED,
    RUN_STARTED,
    project_id,
    unproject_id,
)

TOKEN = "s3cret-key"
SUMMARY_ADDITIONS = {"fixtureMissCount"}
"""Members our eval summary carries beyond upstream's (RFC 0244 §D): the client's EvalSummary has
no seat for them, so they are the only ones its parse may drop."""


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    with serve_subprocess() as url:
        yield url


def eval_run(ref: str = FIXTURE_ERROR, **members: Any) -> CreateRunRequest:
    return CreateRunRequest(mode="eval", evalSuiteRef=ref, agentId=SCRIPTED, **members)


def finished(client: OpenwopClient, run_id: str) -> list[Any]:
    """Every event through the client's long poll, until the host says the run is terminal."""
    events: list[Any] = []
    cursor = -1
    for _ in range(60):
        page = client.runs_poll_events(run_id, after_sequence=cursor, timeout_seconds=5)
        events += page.events
        cursor = page.lastSequence if page.events else cursor
        if page.isTerminal:
            return events
    raise AssertionError(f"run {run_id} never became terminal")


def without_nones(value: Any) -> Any:
    """A client dataclass as the JSON it was parsed from: ``None`` members were absent."""
    if isinstance(value, dict):
        return {k: without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nones(v) for v in value]
    return value


@pytest.mark.requirement("toolcall-spec.requirement.wire.run-bracket")
def test_the_official_client_runs_an_eval_end_to_end(served: str) -> None:
    client = OpenwopClient(served, api_key="any-key")
    capabilities = client.discovery_capabilities()
    assert capabilities.preferredVersion == "2.0"
    assert {"agents", "toolHooks"} <= set(capabilities.families)
    assert "evalSuite" in capabilities.families["agents"].facets

    tags, metadata = ["nightly", "ci"], {"build": 42, "nested": {"ok": True}}
    created = client.runs_create(eval_run(tags=tags, metadata=metadata))
    assert created.statusUrl == f"/runs/{client_project_id(created.runId)}"
    assert created.eventsUrl == f"/runs/{client_project_id(created.runId)}/events"
    events = finished(client, created.runId)
    types = [event.type for event in events]
    assert types[0] == RUN_STARTED
    assert types[-2:] == [EVAL_COMPLETED, RUN_COMPLETED]
    assert types.count(EVAL_COMPLETED) == 1
    assert [event.sequence for event in events] == list(range(len(events)))

    snapshot: RunSnapshot = client.runs_get(created.runId)
    assert (snapshot.runId, snapshot.status) == (created.runId, "completed")
    assert snapshot.workflowId == load_fixture(FIXTURE_ERROR)["suiteId"]
    assert snapshot.eventLogSchemaVersion >= 2
    assert (snapshot.owner.tenant, snapshot.owner.subject.kind) == ("local", "anonymous")
    assert (snapshot.tags, snapshot.metadata) == (tags, metadata)
    started = events[0].payload
    assert started["owner"] == without_nones(dataclasses.asdict(snapshot.owner))
    assert (started["tags"], started["metadata"], started["transport"]) == (tags, metadata, "rest")

    streamed = list(client.runs_events(created.runId, timeout_seconds=10, reconnect=False))
    assert [event.eventId for event in streamed] == [event.eventId for event in events]
    assert streamed[-1].type == RUN_COMPLETED


def test_the_summary_parses_into_the_clients_type_with_nothing_else_dropped(served: str) -> None:
    client = OpenwopClient(served, api_key="any-key")
    created = client.runs_create(eval_run())
    finished(client, created.runId)
    summary = client.runs_eval_summary(created.runId)
    assert isinstance(summary, EvalSummary)
    raw = httpx.get(f"{served}/runs/{client_project_id(created.runId)}/eval-summary").json()
    parsed = without_nones(dataclasses.asdict(summary))
    expected = {k: v for k, v in raw.items() if k not in SUMMARY_ADDITIONS}
    expected["tasks"] = [
        {k: v for k, v in task.items() if k not in SUMMARY_ADDITIONS} for task in raw["tasks"]
    ]
    assert parsed == expected
    # and the additions are there, on the wire, for a reader that knows them
    assert raw["fixtureMissCount"] == 0
    assert [task["fixtureMissCount"] for task in raw["tasks"]] == [0]


def test_the_client_behind_a_bearer_token() -> None:
    with serve_subprocess("--token", TOKEN) as url:
        client = OpenwopClient(url, api_key=TOKEN)
        assert client.discovery_capabilities().protocolVersions == ["2.0"]
        created = client.runs_create(eval_run())
        finished(client, created.runId)
        snapshot = client.runs_get(created.runId)
        assert snapshot.owner.subject.lane == "api-key"
        assert TOKEN not in orjson.dumps(dataclasses.asdict(snapshot)).decode()
        assert client.runs_eval_summary(created.runId) is not None
        wrong = OpenwopClient(url, api_key="not-the-key")
        assert wrong.discovery_capabilities().preferredVersion == "2.0"  # discovery is public
        with pytest.raises(WopError) as refused:
            wrong.runs_get(created.runId)
        assert refused.value.status == 401


@pytest.mark.requirement("openwop.requirement.0245.unadvertised-refused")
def test_a_refused_run_reaches_the_client_as_its_error_naming_the_field() -> None:
    with serve_subprocess("--without-fixture-errors", "--without-recorded-fixtures") as url:
        client = OpenwopClient(url, api_key="any-key")
        with pytest.raises(WopError) as refused:
            client.runs_create(eval_run())
        envelope = refused.value.envelope
        assert refused.value.status == 400
        assert envelope is not None
        assert envelope.error == "validation_error"
        assert envelope.details == {"field": "tasks[0].fixtures.toolResponses[0].isError"}
        with pytest.raises(WopError) as gated:
            client.runs_create(eval_run(fixtureRuns={"fail-then-succeed": "local/" + "0" * 32}))
        assert gated.value.status == 400
        assert gated.value.envelope is not None
        assert gated.value.envelope.details == {"field": "fixtureRuns"}


def suite_ref(suite: dict[str, Any]) -> str:
    return "data:application/json;base64," + base64.b64encode(orjson.dumps(suite)).decode()


@pytest.mark.requirement("toolcall-spec.requirement.wire.run-id-projection")
def test_every_run_path_takes_the_projected_and_the_percent_encoded_id(served: str) -> None:
    client = OpenwopClient(served, api_key="any-key")
    run_id = client.runs_create(eval_run()).runId
    finished(client, run_id)
    projected = client_project_id(run_id)
    assert "~2F" in projected
    for form in (projected, projected.replace("~2F", "~2f"), run_id.replace("/", "%2F")):
        for resource in ("", "/events/poll", "/eval-summary"):
            answer = httpx.get(f"{served}/runs/{form}{resource}")
            assert answer.status_code == 200, (form, resource, answer.text)


# -- the projection, held against the client's own functions -----------------------------------

bound_ids = st.tuples(st.text(min_size=1), st.text(min_size=1)).map("/".join)


@pytest.mark.requirement("toolcall-spec.requirement.wire.run-id-projection")
@given(bound_ids)
def test_our_projection_is_the_clients(bound: str) -> None:
    assert project_id(bound) == client_project_id(bound)
    assert unproject_id(client_project_id(bound)) == bound
    assert client_unproject_id(project_id(bound)) == bound
    assert project_id(project_id(bound)) == project_id(bound)  # never escaped twice


@given(st.text(alphabet=st.sampled_from("aZ09._-~%/2Ffé")))
def test_our_unprojection_reads_any_segment_as_the_client_does(wire: str) -> None:
    try:
        expected = client_unproject_id(wire)
    except UnicodeDecodeError:  # escapes that are not UTF-8: no run can have that id
        assert "\ufffd" in unproject_id(wire)
    else:
        assert unproject_id(wire) == expected
