"""Serving the app on uvicorn: in the foreground (``toolcall-spec serve``) or on a background
thread (tests, and ``conformance`` runs against a local server). The listening socket is bound
before uvicorn starts, so port 0 works and the real URL is known up front."""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import importlib.util
import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import uvicorn

from toolcall_spec.http.connections import ConnectionLimits, GuardedH11Protocol, HttpImplementation
from toolcall_spec.http.disconnects import ClientGone
from toolcall_spec.processes import StopSignals

GRACEFUL_SHUTDOWN_SECONDS = 5
"""Open event streams are closed after this long at shutdown, instead of holding it forever."""


def guarded_protocol(
    limits: ConnectionLimits, implementation: HttpImplementation = "httptools"
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP/1.1 protocol, httptools (C parser) or h11 (pure Python), with ``limits``
    (pass it as ``uvicorn.Config(http=...)``)."""
    base: type[asyncio.Protocol] = GuardedH11Protocol
    if implementation == "httptools":
        from toolcall_spec.http.connections_httptools import (  # noqa: PLC0415
            GuardedHttpToolsProtocol,
        )

        base = GuardedHttpToolsProtocol
    return type(f"{base.__name__}Limited", (base,), {"limits": limits})


def default_implementation() -> HttpImplementation:
    """httptools when installed (the ``http`` extra brings it), else h11."""
    return "httptools" if importlib.util.find_spec("httptools") else "h11"


def bind(host: str, port: int, *, shared: bool = False) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port). ``shared``: the address
    is reserved for worker processes, each listening on a socket of its own (``listener_of``)
    where the system spreads connections over several listeners (Linux: ``SO_REUSEPORT``); this
    socket then only holds the address and does not listen, or no one would accept what the
    system handed it. Elsewhere it listens, and the workers share it."""
    family = socket.AF_INET6 if _is_ipv6(host) else socket.AF_INET
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
    # and without it every response waits ~40 ms on Nagle's algorithm and delayed ACKs.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    spread = shared and SPREADS_CONNECTIONS
    try:
        if spread:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        if not spread:
            sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


BACKLOG = 2048
SPREADS_CONNECTIONS = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")
"""Several sockets listening on one address with ``SO_REUSEPORT`` share its connections out
among them (Linux). Worker processes sharing one listening socket do not: libuv accepts every
pending connection at once, so the first worker to wake takes a burst of them (measured: the
busier of two workers held 7.1 of 8 new connections on average, 20 bursts)."""


def listener_of(sock: socket.socket) -> socket.socket:
    """A worker's own listening socket on the address of a ``shared`` socket from ``bind``
    (the same socket where the system cannot spread connections over several)."""
    if not SPREADS_CONNECTIONS or sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 0:
        return sock
    own = socket.socket(sock.family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        own.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        own.bind(sock.getsockname()[:2])
        own.listen(BACKLOG)
    except OSError:
        own.close()
        raise
    return own


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if _is_ipv6(host) else f"http://{host}:{port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_ipv6(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).version == 6
    except ValueError:
        return False


KEEP_ALIVE_SECONDS = 5
"""An idle keep-alive connection is closed after this long (uvicorn's own timer)."""


def make_server(
    app: Any,
    *,
    log_level: str = "warning",
    connections: ConnectionLimits | None = None,
    implementation: HttpImplementation | None = None,
) -> uvicorn.Server:
    """uvicorn with this package's protocol: read deadlines for request heads and bodies and a cap
    on open connections (see ``toolcall_spec.http.connections``), on httptools when installed.
    The event loop is uvloop when installed (uvicorn's ``auto``). A client that leaves before its
    request is complete ends that request quietly (``toolcall_spec.http.disconnects``)."""
    protocol = guarded_protocol(
        connections or ConnectionLimits(), implementation or default_implementation()
    )
    config = uvicorn.Config(
        ClientGone(app),
        log_level=log_level,
        lifespan="on",
        http=protocol,
        proxy_headers=False,  # no proxy is trusted: the client address is the peer's
        access_log=log_level in ("info", "debug", "trace"),  # a line per request costs
        ws="none",  # no WebSocket routes: do not load a WebSocket stack
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        server_header=False,
    )
    return uvicorn.Server(config)


MMAP_THRESHOLD_BYTES = 256 * 1024
"""Allocations this large get their own mapping, returned to the system when freed."""


def keep_large_blocks_apart() -> None:
    """Fix glibc's ``M_MMAP_THRESHOLD`` (``mallopt``). By default it rises to the size of the
    largest block freed, up to 32 MiB, so a packed run's log evicted from the store leaves a hole
    in the heap instead of going back to the system, and the process grows past its memory
    budget. Elsewhere than glibc, nothing to do."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):
        pass


M_MMAP_THRESHOLD = -3
"""``mallopt`` parameter number, from glibc's malloc.h."""


def serve_forever(
    app: Any,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    connections: ConnectionLimits | None = None,
    ready: Callable[[], None] = lambda: None,
) -> int:
    """Run until SIGTERM or SIGINT (uvicorn stops gracefully on them in the main thread); the
    exit status by the CLI contract: 0 after SIGTERM, 130 after Ctrl-C. ``ready`` runs once a
    signal can no longer kill the process (announce the address there, not before)."""
    keep_large_blocks_apart()
    server = make_server(app, log_level=log_level, connections=connections)

    def stop() -> None:
        server.should_exit = True

    with StopSignals(stop) as stops:
        ready()
        server.run(sockets=[sock])
    return stops.exit_status()


class BackgroundServer:
    """``with BackgroundServer(app) as server: httpx.get(server.url + ...)``: uvicorn on a free
    loopback port in a daemon thread, stopped (gracefully) on exit."""

    def __init__(
        self,
        app: Any,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        start_timeout: float = 10.0,
        connections: ConnectionLimits | None = None,
        implementation: HttpImplementation | None = None,
    ) -> None:
        self.sock = bind(host, port)
        self.url = url_of(self.sock)
        self.server = make_server(app, connections=connections, implementation=implementation)
        self.start_timeout = start_timeout
        self.thread = threading.Thread(
            target=self.server.run,
            kwargs={"sockets": [self.sock]},
            name="toolcall-spec-http",
            daemon=True,
        )

    def __enter__(self) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the HTTP server did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(GRACEFUL_SHUTDOWN_SECONDS + 5)
        self.sock.close()
