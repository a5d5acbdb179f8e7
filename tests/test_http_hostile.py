"""The HTTP host under hostile conditions: no silent auth gap, slow clients, a crash mid-storm."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from cli_support import run_cli
from http_support import run_fixture

from toolcall_spec.http.app import HostSettings, create_app
from toolcall_spec.http.auth import startup_refusal
from toolcall_spec.http.connections import ConnectionLimits
from toolcall_spec.http.reference import ReferenceBackend
from toolcall_spec.http.server import BackgroundServer

AUTH = pytest.mark.requirement("toolcall-spec.requirement.http.no-silent-auth-gap")

NOT_LOOPBACK = "192.0.2.10"
"""TEST-NET-1 (RFC 5737): never a local address, so a server that did start could not bind it."""


@AUTH
@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["--token", ""], {}),
        (["--token", "  "], {}),
        ([], {"TOOLCALL_SPEC_TOKEN": ""}),
        ([], {"TOOLCALL_SPEC_TOKEN": " \t"}),
    ],
)
def test_an_empty_token_is_refused_at_start(options: list[str], env: dict[str, str]) -> None:
    done = run_cli("serve", "--port", "0", *options, env={**os.environ, **env}, timeout=60)
    assert done.returncode == 2
    assert "token must not be empty" in done.stderr
    assert "serving on" not in done.stdout


@AUTH
def test_an_open_server_off_loopback_is_refused_unless_insecure_is_said() -> None:
    done = run_cli("serve", "--host", NOT_LOOPBACK, "--port", "0", timeout=60)
    assert done.returncode == 2
    assert f"refusing to serve {NOT_LOOPBACK} without a token" in done.stderr
    assert "--insecure-no-auth" in done.stderr
    assert startup_refusal(None, NOT_LOOPBACK, insecure_no_auth=True) is None
    assert startup_refusal("secret", NOT_LOOPBACK) is None
    assert startup_refusal(None, "127.0.0.1") is None
    assert startup_refusal(None, "::1") is None
    assert startup_refusal(None, "0.0.0.0") is not None


@AUTH
def test_insecure_no_auth_gets_past_the_check_to_the_bind() -> None:
    done = run_cli(
        "serve", "--host", NOT_LOOPBACK, "--port", "0", "--insecure-no-auth", timeout=60
    )
    assert done.returncode == 2
    assert f"cannot listen on {NOT_LOOPBACK}:0" in done.stderr


# --- slow clients -------------------------------------------------------------------------------

SLOW = pytest.mark.requirement("toolcall-spec.requirement.http.slow-clients")
HEAD_TIMEOUT = 2.0
SLACK = 3.0
"""Extra seconds allowed for closing on a loaded machine; the limit itself is HEAD_TIMEOUT."""
PARTIAL_HEAD = b"GET /.well-known/openwop HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@contextmanager
def guarded_server(**limits: Any) -> Iterator[BackgroundServer]:
    connections = ConnectionLimits(
        **{"head_timeout": HEAD_TIMEOUT, "body_timeout": HEAD_TIMEOUT, **limits}
    )
    app = create_app(ReferenceBackend(), HostSettings())
    with BackgroundServer(app, connections=connections) as server:
        yield server


def open_sockets(url: str, count: int, first: bytes) -> list[socket.socket]:
    host, port = url.removeprefix("http://").split(":")
    sockets = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)), timeout=5)
        sock.sendall(first)
        sock.setblocking(False)
        sockets.append(sock)
    return sockets


def answer_if_closed(sock: socket.socket, received: bytearray) -> bool:
    """Read what the server sent; ``True`` once it closed the connection."""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except BlockingIOError:
        return False
    except ConnectionError:
        return True
    return True


@SLOW
def test_300_slow_heads_are_closed_in_time_while_others_are_served() -> None:
    with guarded_server() as server, httpx.Client(base_url=server.url, timeout=10) as http:
        sockets = open_sockets(server.url, 300, PARTIAL_HEAD)
        started = time.monotonic()
        received = [bytearray() for _ in sockets]
        closed_after: dict[int, float] = {}
        served_while_all_open = 0
        while len(closed_after) < len(sockets) and time.monotonic() - started < HEAD_TIMEOUT + 10:
            for index, sock in enumerate(sockets):
                if index in closed_after:
                    continue
                if answer_if_closed(sock, received[index]):
                    closed_after[index] = time.monotonic() - started
                else:
                    with contextlib.suppress(OSError):
                        sock.send(b"X-Trickle: 1\r\n")  # a byte now and then extends nothing
            answer = http.get("/.well-known/openwop")
            assert answer.status_code == 200
            served_while_all_open += not closed_after
            time.sleep(0.2)
        for sock in sockets:
            sock.close()
        assert served_while_all_open >= 3
        assert len(closed_after) == len(sockets), "slow connections were left open"
        assert max(closed_after.values()) < HEAD_TIMEOUT + SLACK
        assert min(closed_after.values()) >= HEAD_TIMEOUT - 0.5
        assert all(r.startswith(b"HTTP/1.1 408 ") for r in received if r)
        assert run_fixture(http)  # runs still work afterwards


@SLOW
def test_a_slow_body_is_closed_in_time() -> None:
    head = (
        b"POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\n\r\n{\"mode\": "
    )
    with guarded_server() as server:
        (sock,) = open_sockets(server.url, 1, head)
        started = time.monotonic()
        received = bytearray()
        while not answer_if_closed(sock, received):
            assert time.monotonic() - started < HEAD_TIMEOUT + SLACK, "a slow body held on"
            with contextlib.suppress(OSError):
                sock.send(b" ")
            time.sleep(0.1)
        sock.close()
        assert time.monotonic() - started >= HEAD_TIMEOUT - 0.5
        assert received.startswith(b"HTTP/1.1 408 ")


@SLOW
def test_connections_past_the_cap_get_503_and_the_cap_frees_up() -> None:
    with guarded_server(max_connections=20) as server:
        held = open_sockets(server.url, 20, PARTIAL_HEAD)
        time.sleep(0.2)
        answer = httpx.get(f"{server.url}/.well-known/openwop", timeout=5)
        assert answer.status_code == 503
        assert answer.headers["retry-after"] == "1"
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 5
        while httpx.get(f"{server.url}/.well-known/openwop", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "the cap did not free up"
            time.sleep(0.1)
