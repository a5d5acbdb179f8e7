"""Helpers for the HTTP tests: a real uvicorn server on a free loopback port, and clients."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import httpx
import orjson

from toolcall_spec.host import HostPort, ReferenceHost
from toolcall_spec.http.app import HostSettings, create_app
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.openwop_wire import run_path as wire_run_path

SCRIPTED = "core.conformance.agents.scripted"
FIXTURE_ERROR = "conformance-eval-fixture-error"


@contextmanager
def serving(
    backend: HostPort | None = None, settings: HostSettings | None = None
) -> Iterator[BackgroundServer]:
    """The app on uvicorn in a thread; the default backend is the reference host and the
    default settings seed the conformance fixtures and turn the test seams on."""
    settings = settings or HostSettings(expose_test_seams=True)
    app = create_app(backend or ReferenceHost(), settings)
    with BackgroundServer(app) as server:
        yield server


def client(server: BackgroundServer, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.url, headers=headers, timeout=30)


def data_uri(document: Any) -> str:
    return "data:application/json;base64," + base64.b64encode(orjson.dumps(document)).decode()


def run_path(run_id: str) -> str:
    """The percent-encoded form (still accepted); links use ``projected_path``."""
    return f"/runs/{quote(run_id, safe='')}"


def projected_path(run_id: str, resource: str = "") -> str:
    return wire_run_path(run_id, resource)


def create(http: httpx.Client, ref: str, **extra: Any) -> httpx.Response:
    body = {"mode": "eval", "evalSuiteRef": ref, "agentId": SCRIPTED, **extra}
    return http.post("/runs", json=body)


def wait_terminal(http: httpx.Client, run_id: str) -> dict[str, Any]:
    """Long-poll until the run is terminal; return the last poll answer."""
    for _ in range(100):
        page: dict[str, Any] = http.get(
            f"{run_path(run_id)}/events/poll", params={"afterSequence": 10**6, "timeout": 5}
        ).json()
        if page["isTerminal"]:
            return page
    raise AssertionError(f"run {run_id} never became terminal")


def all_events(http: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    wait_terminal(http, run_id)
    answer = http.get(f"{run_path(run_id)}/events/poll", params={"afterSequence": -1})
    events: list[dict[str, Any]] = answer.json()["events"]
    return events


def run_fixture(http: httpx.Client, ref: str = FIXTURE_ERROR) -> str:
    response = create(http, ref)
    assert response.status_code == 201, response.text
    run_id: str = response.json()["runId"]
    wait_terminal(http, run_id)
    return run_id


class Gate:
    """Holds every run on its worker thread until released (makes ``running`` observable)."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.entered = threading.Semaphore(0)

    def __call__(self, run_id: str) -> None:
        self.entered.release()
        if not self.opened.wait(30):
            raise TimeoutError("the test never released the gate")

    def wait_entered(self, count: int = 1) -> None:
        for _ in range(count):
            assert self.entered.acquire(timeout=10), "no run reached the gate"


@contextmanager
def serve_subprocess(*options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``toolcall-spec serve --port 0`` in a subprocess; yields its URL, stops it after."""
    with serve_process(*options, env=env) as (url, _):
        yield url


@contextmanager
def serve_process(*options: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, int]]:
    """``toolcall-spec serve --port 0`` in a subprocess; yields its URL and process id."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_spec.cli", "serve", "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
    )
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        line = process.stdout.readline()
        assert line.startswith("serving on http://127.0.0.1:"), process.stderr.read()
        yield line.split()[-1], process.pid
    finally:
        process.terminate()
        process.wait(15)
