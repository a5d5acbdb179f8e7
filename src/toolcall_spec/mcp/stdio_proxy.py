"""The stdio transport of ``toolcall-spec record``: the client launches the proxy as its MCP
server; the proxy launches the real server and passes every line both ways unchanged.

MCP over stdio is one JSON-RPC message per line. Each line is forwarded byte for byte; a parsed
copy goes to the ``Recorder`` first, so a ``tools/call`` answer is on disk before the client
sees it. What the protocol leaves to the proxy:

- requests with the same id still open are answered in the order sent (``.pairing``);
- a line that is not JSON is passed on (the receiver answers or ignores it as it would without
  the proxy) and logged;
- a response to an id the client never sent (or already got an answer for) is passed on and
  logged;
- the server exits (or closes its output) while requests are open: each open request gets a
  JSON-RPC error (``-32000``) naming the exit, each open ``tools/call`` is recorded as a failure,
  and the proxy ends (the client sees its server end, as it would without the proxy);
- the client closes stdin: the server's stdin is closed, its remaining answers are forwarded, and
  it gets ``shutdown_timeout`` seconds to exit before SIGTERM, then SIGKILL (the MCP lifecycle);
- SIGTERM or Ctrl-C: the server is stopped the same way and the suite written a last time.

The two pipes are read with ``os.read`` on raw file descriptors in daemon threads (no buffered
stream lock a blocked thread could hold at interpreter exit); the main thread only waits, so
signals are handled promptly.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any

import orjson

from toolcall_spec.mcp.pairing import RequestPairing, record_safely
from toolcall_spec.mcp.record import Recorder

SESSION = "stdio"
SERVER_GONE = -32000
"""JSON-RPC code (implementation-defined server error range) for requests the server died on."""
READ_SIZE = 65_536
POLL_SECONDS = 0.05

Log = Callable[[str], None]


def read_lines(fd: int) -> Iterator[bytes]:
    """The lines read from ``fd``, each with its newline (the last one may have none). Each byte
    is searched once and copied once, so a line of any size is read in linear time."""
    parts: list[bytes] = []
    while True:
        try:
            chunk = os.read(fd, READ_SIZE)
        except OSError:
            chunk = b""
        if not chunk:
            if parts:
                yield b"".join(parts)
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            parts.append(chunk[start : end + 1])
            yield parts[0] if len(parts) == 1 else b"".join(parts)
            parts = []
            start = end + 1
        if start < len(chunk):
            parts.append(chunk[start:])


def parse_line(line: bytes) -> tuple[bool, Any]:
    """``(True, message)`` for a JSON line, ``(False, None)`` otherwise."""
    try:
        return True, orjson.loads(line)
    except orjson.JSONDecodeError:
        return False, None


class StdioProxy:
    """One client session over stdio, between the proxy's own stdin/stdout and a server."""

    def __init__(
        self,
        command: Sequence[str],
        recorder: Recorder,
        *,
        log: Log,
        client_in: int = 0,
        client_out: int = 1,
        shutdown_timeout: float = 5.0,
    ) -> None:
        self.command = list(command)
        self.recorder = recorder
        self.log = log
        self.client_in, self.client_out = client_in, client_out
        self.shutdown_timeout = shutdown_timeout
        self._write_lock = threading.Lock()
        self._client_closed = threading.Event()
        self._server_closed = threading.Event()
        self._stop_signal: int | None = None
        self._server_gone = False
        self._server: subprocess.Popen[bytes] | None = None
        self.pairing = RequestPairing()
        """The one pipe is the one exchange: equal ids in flight are answered in send order."""

    # --- the session -------------------------------------------------------------------------

    def run(self) -> int:
        """Proxy until the client or the server ends the session; the exit status: 0 when the
        client ended it (or SIGTERM), 1 when the server did, 130 on Ctrl-C."""
        self._server = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        record_safely(self.log, self.recorder.open_session, SESSION)
        previous = self._install_signal_handlers()
        try:
            self._start_pumps()
            return self._wait_for_end()
        finally:
            self._restore_signal_handlers(previous)
            record_safely(
                self.log, self.recorder.close, "the session ended before the server answered"
            )

    def _start_pumps(self) -> None:
        for target, name in ((self._pump_client, "client"), (self._pump_server, "server")):
            threading.Thread(target=target, name=f"record-{name}", daemon=True).start()

    def _wait_for_end(self) -> int:
        while True:
            server_closed = self._server_closed.wait(POLL_SECONDS)
            if self._stop_signal is not None:  # checked after the wait: a signal lands there
                self._stop_server()
                self._server_ended("the proxy was stopped before the server answered")
                return 130 if self._stop_signal == signal.SIGINT else 0
            if server_closed:
                # Who ended the session is decided now, before the client hears of the exit.
                ended_by_client = self._client_closed.is_set()
                status = self._reap_server()
                self._server_ended(f"the MCP server exited (status {status}) before answering")
                return 0 if ended_by_client else 1
            if self._client_closed.is_set():
                # The client is done: the server's remaining answers still pass, then it stops.
                if not self._server_closed.wait(self.shutdown_timeout):
                    self._stop_server()
                    self._server_closed.wait(self.shutdown_timeout)
                self._reap_server()
                self._server_ended("the client closed the session before the server answered")
                return 0

    def _server_ended(self, reason: str) -> None:
        """Answer every open request with a JSON-RPC error; open calls are recorded failures."""
        self._server_gone = True
        self._answer_open_requests(reason)

    def _answer_open_requests(self, reason: str) -> None:
        record_safely(self.log, self.recorder.fail_pending, SESSION, reason)
        for request in self.pairing.open_requests(SESSION):
            request_id = self.pairing.forget(request.token)
            self.log(f"request {request_id!r} answered with a JSON-RPC error: {reason}")
            error = {"code": SERVER_GONE, "message": reason}
            self._to_client(
                orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + b"\n"
            )

    # --- the two directions ----------------------------------------------------------------------

    def _pump_client(self) -> None:
        assert self._server is not None
        assert self._server.stdin is not None
        server_in = self._server.stdin.fileno()
        try:
            for line in read_lines(self.client_in):
                self._observe(line, "client")
                if self._server_gone:  # nothing will answer it: say so now, never hang
                    self._answer_open_requests("the MCP server has exited")
                    continue
                try:
                    _write_all(server_in, line)
                except OSError:
                    self.log("the MCP server no longer reads its input")
        finally:
            self._client_closed.set()
            _close_quietly(self._server.stdin)

    def _pump_server(self) -> None:
        assert self._server is not None
        assert self._server.stdout is not None
        try:
            for line in read_lines(self._server.stdout.fileno()):
                self._observe(line, "server")
                self._to_client(line)
        finally:
            self._server_closed.set()

    def _observe(self, line: bytes, side: str) -> None:
        if not line.strip():
            return
        ok, message = parse_line(line)
        if not ok:
            self.log(f"a line from the {side} is not JSON (passed on): {line[:120]!r}")
            return
        if side == "client":
            sent = self.pairing.sent(SESSION, SESSION, message)
            record_safely(self.log, self.recorder.from_client, SESSION, sent)
            return
        answers, unknown = self.pairing.answered(SESSION, SESSION, message)
        for request_id in unknown:
            self.log(
                f"the server answered id {request_id!r}, which no open request has (passed on)"
            )
        if answers:
            record_safely(self.log, self.recorder.from_server, SESSION, answers)

    def _to_client(self, data: bytes) -> None:
        # A client that is gone is no reason to stop: the recording goes on until the session ends.
        with self._write_lock, contextlib.suppress(OSError):
            _write_all(self.client_out, data)

    # --- the server process ------------------------------------------------------------------

    def _stop_server(self) -> None:
        server = self._server
        if server is None or server.poll() is not None:
            return
        _close_quietly(server.stdin)
        for stop in (server.terminate, server.kill):
            stop()
            try:
                server.wait(self.shutdown_timeout)
                return
            except subprocess.TimeoutExpired:
                continue

    def _reap_server(self) -> int | None:
        server = self._server
        if server is None:
            return None
        try:
            return server.wait(self.shutdown_timeout)
        except subprocess.TimeoutExpired:
            self._stop_server()
            return server.poll()

    # --- signals ----------------------------------------------------------------------------------

    def _install_signal_handlers(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        previous: dict[int, Any] = {}
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, self._on_signal)
        return previous

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self._stop_signal = signum

    @staticmethod
    def _restore_signal_handlers(previous: dict[int, Any]) -> None:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _close_quietly(stream: Any) -> None:
    try:
        if stream is not None:
            stream.close()
    except OSError:
        pass
