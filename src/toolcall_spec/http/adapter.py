"""``HttpAdapter``: the conformance ``HostAdapter`` over the OpenWOP v2 HTTP surface (httpx).

A host fetches suites by reference (``evalSuiteRef``): a suite that is exactly a conformance fixture
the host lists in discovery ``fixtures`` is sent as that id (the host's seeded copy), any other
suite as a ``data:application/json;base64`` URI, so no shared storage is needed. A created run is
long-polled until it is terminal.
Paths, headers, the id projection and the seams' vendor keys come from
``toolcall_spec.openwop_wire``, the module the server uses too. Seams that are not part of
OpenWOP (a host started with its test seams on) are read from this package's documented vendor
keys; a host that lacks them yields ``None``, which makes the legs that need them inapplicable.

Needs only ``httpx`` (part of the ``http`` extra), not the server side.
"""

from __future__ import annotations

import base64
import time
from types import TracebackType
from typing import Any

import httpx
import orjson

from toolcall_spec.conformance.adapter import RunCreated, RunRefusal, RunRequest, WireAnswer
from toolcall_spec.host.fixtures import fixture_id_of, lists_fixture, load_fixture
from toolcall_spec.openwop_wire import (
    DISCOVERY_PATH,
    EVAL_SUMMARY,
    LIVE_INVOCATIONS_PATH,
    POLL,
    PROTOCOL_VERSION,
    RUNS_PATH,
    SEAMS_EXTENSION,
    VERSION_HEADER,
    percent_encoded,
    run_path,
)

DEFAULT_EVAL_MODE = "golden"


NOT_A_VERDICT = frozenset({401, 403, 407, 429})
"""Answers to a run create that say nothing about the suite (credentials, a busy host): the leg
cannot run (``blocked``) rather than being refused."""
BUSY_RETRIES = 5


class HostError(RuntimeError):
    """The host could not be reached, or answered in a way the v2 surface does not allow."""


def suite_data_uri(suite: dict[str, Any]) -> str:
    return "data:application/json;base64," + base64.b64encode(orjson.dumps(suite)).decode()


class HttpAdapter:
    """A v2 host at ``base_url`` (e.g. ``http://127.0.0.1:8765``), optionally behind a bearer
    token. ``poll_timeout`` is the long-poll wait per request; ``run_deadline`` bounds how long
    one run may take to become terminal."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        request_timeout: float = 30.0,
        poll_timeout: int = 10,
        run_deadline: float = 300.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.name = base_url.rstrip("/")
        self.poll_timeout = poll_timeout
        self.run_deadline = run_deadline
        headers = {"Accept": "application/json", VERSION_HEADER: PROTOCOL_VERSION}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=self.name,
            headers=headers,
            timeout=httpx.Timeout(request_timeout, read=request_timeout + poll_timeout),
            transport=transport,
        )
        self._capabilities: dict[str, Any] | None = None
        self._percent_ids = False
        """The host found no run under a projected id but did under a percent-encoded one: keep
        reaching it (the projection leg judges that; the other legs need the runs)."""

    def __enter__(self) -> HttpAdapter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # -- the HostAdapter protocol -------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        if self._capabilities is None:
            self._capabilities = self._json_object(self._get(DISCOVERY_PATH), 200)
        return self._capabilities

    def create_eval_run(
        self, suite: dict[str, Any], *, mode: str = DEFAULT_EVAL_MODE, agent_id: str
    ) -> RunCreated | RunRefusal:
        return self.create_run(RunRequest(suite, agent_id, mode))

    def create_run(self, request: RunRequest) -> RunCreated | RunRefusal:
        response = self._post_run(orjson.dumps(create_body(request)))
        if response.status_code in NOT_A_VERDICT:
            message = _envelope(response).get("message", response.reason_phrase)
            raise HostError(f"{self.name}: POST /runs answered {response.status_code}: {message}")
        if 400 <= response.status_code < 500 or response.status_code == 501:
            return RunRefusal.from_envelope(response.status_code, _envelope(response))
        created = self._json_object(response, 201)
        run_id = created.get("runId")
        if not isinstance(run_id, str) or not run_id:
            raise HostError(f"{self.name}: POST /runs answered 201 without a runId")
        self._wait_until_terminal(run_id)
        links = {k: v for k, v in created.items() if k.endswith("Url") and isinstance(v, str)}
        return RunCreated(run_id, links)

    def snapshot(self, run_id: str) -> dict[str, Any]:
        return self._json_object(self._run_get(run_id), 200)

    def raw_get(self, path: str) -> WireAnswer:
        response = self._get(path)
        try:
            body = orjson.loads(response.content) if response.content else None
        except orjson.JSONDecodeError:
            body = response.text
        return WireAnswer(response.status_code, body)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        cursor = -1
        while True:
            page = self._poll(run_id, cursor, timeout=None)
            batch = page["events"]
            events.extend(batch)
            if batch:
                cursor = _sequence(batch[-1], self.name)
            elif page.get("isTerminal") is True:
                return events
            else:
                raise HostError(f"{self.name}: run {run_id} is not terminal yet")

    def summary(self, run_id: str) -> dict[str, Any]:
        return self._json_object(self._run_get(run_id, EVAL_SUMMARY), 200)

    def agent_output(self, run_id: str) -> dict[str, list[dict[str, Any]]] | None:
        extensions = self.snapshot(run_id).get("extensions")
        seams = extensions.get(SEAMS_EXTENSION) if isinstance(extensions, dict) else None
        output = seams.get("agentOutput") if isinstance(seams, dict) else None
        return output if isinstance(output, dict) else None

    def live_invocations(self) -> dict[str, int] | None:
        response = self._get(LIVE_INVOCATIONS_PATH)
        if response.status_code in (404, 405, 501):
            return None
        counts = self._json_object(response, 200).get("liveInvocations")
        if not isinstance(counts, dict):
            raise HostError(f"{self.name}: {LIVE_INVOCATIONS_PATH} has no liveInvocations object")
        return counts

    # -- plumbing --------------------------------------------------------------------------------

    def _suite_ref(self, suite: dict[str, Any]) -> str:
        fixture_id = fixture_id_of(suite)
        if (
            fixture_id is not None
            and lists_fixture(self.capabilities(), fixture_id)
            and load_fixture(fixture_id) == suite
        ):
            return fixture_id
        return suite_data_uri(suite)

    def _post_run(self, body: bytes) -> httpx.Response:
        """``POST /runs``, retried a few times while the host answers 429 (busy)."""
        for _ in range(BUSY_RETRIES):
            response = self._request(
                "POST", RUNS_PATH, content=body, headers={"Content-Type": "application/json"}
            )
            if response.status_code != 429:
                return response
            time.sleep(_retry_after(response))
        return response

    def _wait_until_terminal(self, run_id: str) -> None:
        deadline = time.monotonic() + self.run_deadline
        cursor = -1
        while time.monotonic() < deadline:
            page = self._poll(run_id, cursor, timeout=self.poll_timeout)
            if page["events"]:
                cursor = _sequence(page["events"][-1], self.name)
            if page.get("isTerminal") is True:
                return
        raise HostError(f"{self.name}: run {run_id} was not terminal after {self.run_deadline:g} s")

    def _poll(self, run_id: str, after: int, *, timeout: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {"afterSequence": after}
        if timeout is not None:
            params["timeout"] = timeout
        page = self._json_object(self._run_get(run_id, POLL, params=params), 200)
        if not isinstance(page.get("events"), list):
            raise HostError(f"{self.name}: the poll answer for {run_id} has no events array")
        return page

    def _run_get(self, run_id: str, resource: str = "", **kwargs: Any) -> httpx.Response:
        """``GET`` a run resource by the projected id, as OpenWOP clients send it; a host that
        only knows percent-encoding is reached that way from then on."""
        if not self._percent_ids:
            response = self._get(run_path(run_id, resource), **kwargs)
            if response.status_code != 404:
                return response
        legacy = f"{RUNS_PATH}/{percent_encoded(run_id)}" + (f"/{resource}" if resource else "")
        response = self._get(legacy, **kwargs)
        if response.status_code != 404:
            self._percent_ids = True
        return response

    def _get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self._request("GET", path, **kwargs)

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise HostError(f"{self.name}: {method} {path} failed: {exc}") from None

    def _json_object(self, response: httpx.Response, expected: int) -> dict[str, Any]:
        where = f"{self.name}: {response.request.method} {response.request.url.raw_path.decode()}"
        if response.status_code != expected:
            detail = _envelope(response).get("message", response.reason_phrase)
            raise HostError(f"{where} answered {response.status_code}: {detail}")
        try:
            value = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise HostError(f"{where} answered with a body that is not JSON") from None
        if not isinstance(value, dict):
            raise HostError(f"{where} answered with JSON that is not an object")
        return value


def _retry_after(response: httpx.Response) -> float:
    """The ``Retry-After`` delay in seconds (a number), 1 s otherwise, never more than 5 s."""
    try:
        return min(max(float(response.headers.get("retry-after", "1")), 0.0), 5.0)
    except ValueError:
        return 1.0


def create_body(request: RunRequest) -> dict[str, Any]:
    """The ``POST /runs`` body for ``request``: the suite by ``data:`` URI, and each optional
    member only when the request asks for it (a host without RFC 0251/0252 does not know them;
    ``evalMode`` is this package's member for one mode on such a host)."""
    body: dict[str, Any] = {
        "mode": "eval",
        "evalSuiteRef": suite_data_uri(request.suite),
        "agentId": request.agent_id,
    }
    if request.modes is not None:
        body["evalModes"] = list(request.modes)
    elif request.mode != DEFAULT_EVAL_MODE:
        body["evalMode"] = request.mode
    if request.baseline_run_id is not None:
        body["baselineRunId"] = request.baseline_run_id
    if request.fixture_runs is not None:
        body["fixtureRuns"] = dict(request.fixture_runs)
    body.update(request.options)
    return body


def _sequence(event: Any, host: str) -> int:
    sequence = event.get("sequence") if isinstance(event, dict) else None
    if not isinstance(sequence, int) or isinstance(sequence, bool):
        raise HostError(f"{host}: an event without an integer sequence")
    return sequence


def _envelope(response: httpx.Response) -> dict[str, Any]:
    """The flat error envelope of an error answer; a stand-in when the body is not one."""
    try:
        value = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("error"), str):
        return value
    return {
        "error": f"http_{response.status_code}",
        "message": response.text[:300] or response.reason_phrase,
    }
