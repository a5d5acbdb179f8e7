"""The HTTP host's hot path: small runs executed in the event loop, the two requests of every run
routed without starlette's router (answers compared with the router's own, on real servers), and
a response's head and body written in one piece."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from support.http_serving import (
    FIXTURE_ERROR,
    SCRIPTED,
    client,
    create,
    data_uri,
    run_path,
    wait_terminal,
)

from toolcall_spec.host import ReferenceHost, RunRecord, RunRequest
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.http.app import HostSettings, create_app
from toolcall_spec.http.connections_httptools import HeadWithBody
from toolcall_spec.http.hot_routes import HotRoutes
from toolcall_spec.http.limits import Limits
from toolcall_spec.http.server import BackgroundServer

TOKEN = "hot-path-token"


class WhereRunsExecute(ReferenceHost):
    """Records the thread each run executed on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: dict[str, str] = {}

    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        self.threads[run_id] = threading.current_thread().name
        return super().execute(run_id, request)


class Broken(ReferenceHost):
    def execute(self, run_id: str, request: RunRequest) -> RunRecord:
        raise RuntimeError("disk on fire")


@contextmanager
def served(backend: ReferenceHost, settings: HostSettings) -> Iterator[httpx.Client]:
    with BackgroundServer(create_app(backend, settings)) as server, client(server) as http:
        yield http


def executed_on(settings: HostSettings, ref: str) -> tuple[str, dict[str, Any]]:
    """Create one run; the name of the thread it executed on and its last poll answer."""
    backend = WhereRunsExecute()
    with served(backend, settings) as http:
        created = create(http, ref)
        assert created.status_code == 201, created.text
        assert created.json()["status"] == "running"  # as answered: it executes afterwards
        run_id = created.json()["runId"]
        page = wait_terminal(http, run_id)
    return backend.threads[run_id], page


def test_a_small_run_of_a_fixture_executes_in_the_event_loop() -> None:
    thread, page = executed_on(HostSettings(), FIXTURE_ERROR)
    assert thread == "toolcall-spec-http"  # BackgroundServer's thread, where the loop runs
    assert (page["status"], page["isTerminal"]) == ("completed", True)


def test_a_small_data_suite_executes_in_the_event_loop() -> None:
    thread, page = executed_on(HostSettings(), data_uri(load_fixture(FIXTURE_ERROR)))
    assert thread == "toolcall-spec-http"
    assert page["status"] == "completed"


@pytest.mark.parametrize("inline_run_events", [0, 9])  # the fixture's run writes 10 events
def test_a_run_over_the_inline_bound_executes_on_a_worker_thread(inline_run_events: int) -> None:
    settings = HostSettings(inline_run_events=inline_run_events)
    thread, page = executed_on(settings, FIXTURE_ERROR)
    assert thread.startswith("toolcall-spec-run")
    assert page["status"] == "completed"


def test_a_backend_failing_on_a_worker_thread_fails_the_run() -> None:
    """The inline path is covered by test_http_server's failing backend (a fixture run)."""
    with served(Broken(), HostSettings(inline_run_events=0)) as http:
        run_id = create(http, FIXTURE_ERROR).json()["runId"]
        page = wait_terminal(http, run_id)
        assert (page["status"], page["isTerminal"]) == ("failed", True)
        assert http.get(run_path(run_id)).json()["error"]["code"] == "internal_error"


# -- the hot routes answer exactly as starlette's router does --------------------------------


def router_only(app: Starlette) -> Starlette:
    """The same app without ``HotRoutes``: every request through starlette's router."""
    app.user_middleware = [m for m in app.user_middleware if not is_hot_routes(m)]
    return app


def is_hot_routes(middleware: Middleware) -> bool:
    factory: object = middleware.cls  # typed as a middleware factory, which a class is too
    return factory is HotRoutes


def same_ids() -> HostSettings:
    """Settings with run ids 0000..., 0001..., so two servers name their runs alike."""
    counter = itertools.count()
    return HostSettings(
        token=TOKEN,
        limits=Limits(max_body_bytes=4096),
        new_opaque_id=lambda: f"{next(counter):032d}",
    )


REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "POST",
        "/runs",
        {"json": {"mode": "eval", "evalSuiteRef": FIXTURE_ERROR, "agentId": SCRIPTED}},
    ),
    ("POST", "/runs", {"content": b"{", "headers": {"Content-Type": "application/json"}}),
    ("POST", "/runs", {"content": b"{}", "headers": {"Content-Type": "text/plain"}}),
    ("POST", "/runs", {"json": {"mode": "eval", "evalSuiteRef": "x" * 5000}}),
    ("POST", "/runs", {"json": {"mode": "eval", "evalSuiteRef": "nope", "agentId": SCRIPTED}}),
    ("POST", "/runs", {"json": {"mode": "eval"}, "headers": {"OpenWOP-Version": "9"}}),
    ("POST", "/runs", {"json": {}, "headers": {"Authorization": "Bearer wrong"}}),
    ("POST", "/runs/", {"json": {}}),
    ("PUT", "/runs", {}),
    ("GET", "/runs", {}),
    ("GET", "/runs/", {}),
    ("GET", "/runs/local~2F00000000000000000000000000000000", {}),
    ("GET", "/runs/local%2F00000000000000000000000000000000/events/poll", {}),
    ("GET", "/runs/local/00000000000000000000000000000000/events/poll?afterSequence=x", {}),
    ("GET", "/runs/local~2F00000000000000000000000000000000/events/poll?timeout=0", {}),
    ("GET", "/runs/local~2F00000000000000000000000000000000/nothing", {}),
    ("GET", "/runs/local~2Fmissing-run-0000000000000/events/poll", {}),
    ("GET", "/runs/other~2F00000000000000000000000000000000", {}),
    ("GET", "/runs/local~2F0000%0A0000/events/poll", {}),
    ("GET", "/runs/local~2F00000000000000000000000000000000", {"headers": {"Authorization": ""}}),
    ("HEAD", "/runs/local~2F00000000000000000000000000000000", {}),
]
"""Creates (good, bad JSON, wrong media type, too large, unknown suite, wrong version, wrong
token), other methods and paths the router answers, run resources found and not found, another
tenant's id, a line break in the path, and no token at all."""

TIMED = ("timestamp", "createdAt", "startedAt", "completedAt", "updatedAt")


def comparable(response: httpx.Response) -> tuple[int, list[tuple[str, str]], Any]:
    """Status, headers but the date, and the body with its clock readings blanked."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in ("date",)]
    if response.headers.get("content-type") != "application/json" or not response.content:
        return response.status_code, headers, response.content
    return response.status_code, headers, _untimed(response.json())


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<time>" if k in TIMED else _untimed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed(item) for item in value]
    return value


def answers(app: Starlette) -> list[tuple[int, list[tuple[str, str]], Any]]:
    with BackgroundServer(app) as server, client(server, TOKEN) as http:
        replies = []
        for method, path, options in REQUESTS:
            replies.append(comparable(http.request(method, path, **options)))
            if method == "POST" and replies[-1][0] == 201:
                wait_terminal(http, replies[-1][2]["runId"])
        return replies


def test_the_hot_routes_answer_as_starlettes_router_does() -> None:
    hot = answers(create_app(ReferenceHost(), same_ids()))
    routed = answers(router_only(create_app(ReferenceHost(), same_ids())))
    statuses = [status for status, _, _ in hot]
    assert {201, 400, 401, 403, 404, 405, 413, 415} <= set(statuses)  # the cases are reached
    for request, mine, theirs in zip(REQUESTS, hot, routed, strict=True):
        assert mine == theirs, request


def test_hot_routes_are_in_the_app() -> None:
    """So the comparison above compares two different paths."""
    assert any(is_hot_routes(m) for m in create_app(ReferenceHost()).user_middleware)


# -- a response's head and body in one write ------------------------------------------------


class Recording(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


def with_writer(scenario: Any) -> list[bytes]:
    async def run() -> list[bytes]:
        transport = Recording()
        writer = HeadWithBody(transport, asyncio.get_running_loop())
        await scenario(writer)
        return transport.writes

    return asyncio.run(run())


def test_a_head_and_its_body_leave_in_one_write() -> None:
    async def scenario(writer: HeadWithBody) -> None:
        writer.write(HEAD)
        writer.write(b"{}")

    assert with_writer(scenario) == [HEAD + b"{}"]


def test_a_head_without_a_body_leaves_at_the_end_of_the_loop_turn() -> None:
    async def scenario(writer: HeadWithBody) -> None:
        writer.write(HEAD)
        await asyncio.sleep(0)
        writer.write(b"later")

    assert with_writer(scenario) == [HEAD, b"later"]


def test_what_is_held_leaves_before_the_close_and_nothing_is_held_twice() -> None:
    async def scenario(writer: HeadWithBody) -> None:
        writer.write(HEAD)
        writer.close()
        writer.flush()

    assert with_writer(scenario) == [HEAD]


def test_body_chunks_are_written_at_once() -> None:
    async def scenario(writer: HeadWithBody) -> None:
        writer.write(HEAD)
        writer.write(b"a")
        writer.write(b"b")

    assert with_writer(scenario) == [HEAD + b"a", b"b"]


def test_a_head_request_and_the_next_on_the_same_connection_are_answered() -> None:
    """uvicorn writes no body for HEAD: the held head leaves when the response is complete."""
    with BackgroundServer(create_app(ReferenceHost())) as server, client(server) as http:
        head = http.head("/.well-known/openwop")
        assert (head.status_code, head.content) == (200, b"")
        assert int(head.headers["content-length"]) > 0
        assert http.get("/.well-known/openwop").json()["protocolVersions"]
