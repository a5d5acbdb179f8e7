"""Helpers for the store tests: a real ClickHouse server on loopback, DuckDB files, and events.

Also used by ``benchmarks/bench_store.py``, hence no pytest import at module level.

ClickHouse: ``TOOLCALL_CLICKHOUSE_URL`` names a running server (``.ci/run`` starts Debian's
``clickhouse-server`` and sets it); otherwise the tests start ``clickhouse-server`` themselves on a
free loopback port with a throwaway data directory. When no server can start, the ClickHouse tests
are skipped with the reason, except under ``CI=true``, where that is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

CLICKHOUSE_URL_ENV = "TOOLCALL_CLICKHOUSE_URL"
CLICKHOUSE_SERVER = "/usr/sbin/clickhouse-server"
CLICKHOUSE_CONFIG = "/etc/clickhouse-server/config.xml"
START_SECONDS = 60.0


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``; fail instead under ``CI=true`` or when a server was named, where it
    must be there."""
    import pytest  # only the tests skip; the benchmarks use this module without pytest

    if os.environ.get("CI", "").lower() == "true" or os.environ.get(CLICKHOUSE_URL_ENV):
        pytest.fail(f"ClickHouse is required here (CI=true or {CLICKHOUSE_URL_ENV}): {reason}")
    pytest.skip(f"ClickHouse tests skipped: {reason}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_clickhouse(port: int, process: subprocess.Popen[bytes] | None) -> str | None:
    """``None`` once the server answers a query on ``port``, else why it did not."""
    from clickhouse_driver import Client
    from clickhouse_driver.errors import Error

    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return f"clickhouse-server exited with {process.returncode}"
        try:
            # A plain TCP probe first: the driver logs every refused connection with its
            # traceback, which would fill a benchmark's output while the server starts.
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            Client(host="127.0.0.1", port=port, connect_timeout=1).execute("SELECT 1")
        except (Error, OSError, EOFError):
            time.sleep(0.2)
        else:
            return None
    return f"clickhouse-server did not answer on 127.0.0.1:{port} within {START_SECONDS:.0f} s"


def start_clickhouse(
    workdir: Path, port: int | None = None, config: str = CLICKHOUSE_CONFIG
) -> tuple[subprocess.Popen[bytes], int]:
    """Debian's ``clickhouse-server`` on ``port`` (default: a free loopback port), its data under
    ``workdir``; ``config``: its main configuration file (``config.d/`` beside it is read too)."""
    port = port or free_port()
    overrides = {
        "users_config": str(Path(CLICKHOUSE_CONFIG).with_name("users.xml")),
        "path": f"{workdir}/data/",
        "tmp_path": f"{workdir}/tmp/",
        "user_files_path": f"{workdir}/user_files/",
        "format_schema_path": f"{workdir}/format_schemas/",
        "logger.log": f"{workdir}/server.log",
        "logger.errorlog": f"{workdir}/server.err.log",
        "tcp_port": str(port),
        "http_port": str(free_port()),
        "interserver_http_port": str(free_port()),
        "listen_host": "127.0.0.1",
    }
    command = [CLICKHOUSE_SERVER, f"--config-file={config}", "--"]
    command += [f"--{key}={value}" for key, value in overrides.items()]
    process = subprocess.Popen(
        command, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return process, port


def clickhouse_server_url() -> Iterator[str]:
    """The base URL (``clickhouse://127.0.0.1:PORT``) of a running server, for a session."""
    try:
        import clickhouse_driver  # noqa: F401
    except ImportError:
        unavailable("clickhouse-driver is not installed (the store extra)")
    given = os.environ.get(CLICKHOUSE_URL_ENV)
    if given:
        port = int(given.rstrip("/").rsplit(":", 1)[1])
        problem = wait_for_clickhouse(port, None)
        if problem is not None:
            unavailable(problem)
        yield given.rstrip("/")
        return
    if not (Path(CLICKHOUSE_SERVER).exists() and Path(CLICKHOUSE_CONFIG).exists()):
        unavailable(f"{CLICKHOUSE_SERVER} is not installed (apt-get install clickhouse-server)")
    workdir = Path(tempfile.mkdtemp(prefix="toolcall-clickhouse-"))
    process, port = start_clickhouse(workdir)
    try:
        problem = wait_for_clickhouse(port, process)
        if problem is not None:
            unavailable(problem)
        yield f"clickhouse://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(workdir, ignore_errors=True)


CLUSTER = "toolcall_test"
"""The cluster ``start_clickhouse_cluster`` configures on each of its servers."""


class ClickHouseCluster:
    """Two (``shards``) ``clickhouse-server`` processes on loopback, each a shard of the cluster
    ``CLUSTER`` of every one's ``remote_servers``: a copy of the packaged configuration with a
    ``config.d/cluster.xml`` beside it (the server reads ``config.d/`` next to its main file),
    each server's data under ``workdir``. ``urls``: their base URLs."""

    def __init__(self, workdir: Path, shards: int = 2) -> None:
        self.workdir = workdir
        self.ports = [free_port() for _ in range(shards)]
        replica = "<shard><replica><host>127.0.0.1</host><port>{}</port></replica></shard>"
        shards_xml = "".join(replica.format(port) for port in self.ports)
        remote_servers = f"<{CLUSTER}>{shards_xml}</{CLUSTER}>"
        for number in range(shards):
            node = self._node(number)
            (node / "config.d").mkdir(parents=True)
            shutil.copy(CLICKHOUSE_CONFIG, node / "config.xml")
            (node / "config.d" / "cluster.xml").write_text(
                f"<yandex><remote_servers>{remote_servers}</remote_servers></yandex>"
            )
        self.processes = [self._start(number) for number in range(shards)]
        self.urls = [f"clickhouse://127.0.0.1:{port}" for port in self.ports]

    def _node(self, number: int) -> Path:
        return self.workdir / f"shard-{number + 1}"

    def _start(self, number: int) -> subprocess.Popen[bytes]:
        node = self._node(number)
        process, _ = start_clickhouse(node, self.ports[number], str(node / "config.xml"))
        return process

    def wait(self) -> str | None:
        """``None`` once every server answers, else why one did not."""
        for process, port in zip(self.processes, self.ports, strict=True):
            problem = wait_for_clickhouse(port, process)
            if problem is not None:
                return problem
        return None

    def kill(self, number: int) -> None:
        """SIGKILL the server of shard ``number`` (0-based)."""
        self.processes[number].kill()
        self.processes[number].wait(30)

    def restart(self, number: int) -> None:
        """Start the server of shard ``number`` again, on its port and data."""
        self.processes[number] = self._start(number)
        problem = wait_for_clickhouse(self.ports[number], self.processes[number])
        assert problem is None, problem

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def clickhouse_cluster() -> Iterator[ClickHouseCluster]:
    """A two-shard ``ClickHouseCluster`` started for the caller, stopped after; skipped (failed
    under ``CI=true``) where no server can start."""
    try:
        import clickhouse_driver  # noqa: F401
    except ImportError:
        unavailable("clickhouse-driver is not installed (the store extra)")
    if not (Path(CLICKHOUSE_SERVER).exists() and Path(CLICKHOUSE_CONFIG).exists()):
        unavailable(f"{CLICKHOUSE_SERVER} is not installed (apt-get install clickhouse-server)")
    workdir = Path(tempfile.mkdtemp(prefix="toolcall-cluster-"))
    cluster = ClickHouseCluster(workdir)
    try:
        problem = cluster.wait()
        if problem is not None:
            unavailable(problem)
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


class Service:
    """``toolcall-spec serve-ingest`` in a process of its own, on a free loopback port, its
    write-ahead log in ``log_dir`` (default: ``ingest-log`` beside the keys file); ``options``
    are more command-line options (``--no-log``: no log at all). ``env``: its environment
    (default: this one's); ``stderr``: a file its error output is appended to (default: a pipe,
    for a short test: a long one that logs much would fill it)."""

    def __init__(
        self,
        store_url: str,
        keys_file: Path,
        log_dir: Path | None = None,
        options: tuple[str, ...] = (),
        *,
        env: dict[str, str] | None = None,
        stderr: Path | None = None,
    ) -> None:
        command = [sys.executable, "-m", "toolcall_spec.cli", "serve-ingest"]
        command += ["--store", store_url, "--keys-file", str(keys_file), "--port", "0"]
        if "--no-log" not in options:
            command += ["--log-dir", str(log_dir or keys_file.parent / "ingest-log")]
        command += options
        with stderr.open("ab") if stderr else contextlib.nullcontext() as errors_file:
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=errors_file or subprocess.PIPE, env=env
            )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode()
        if not line.startswith("serving on "):
            self.process.kill()
            _, errors = self.process.communicate(timeout=30)
            said = errors.decode() if errors else _tail(stderr)
            raise AssertionError(f"serve-ingest did not start: {line!r} {said}")
        self.url = line.removeprefix("serving on ").strip()
        self.key = next(iter(json.loads(keys_file.read_text()).values()))

    def health(self) -> dict[str, Any]:
        """The health answer with the details (a key holder's)."""
        import httpx

        headers = {"Authorization": f"Bearer {self.key}"}
        answer: dict[str, Any] = httpx.get(
            self.url + "/v1/health", headers=headers, timeout=10
        ).json()
        return answer

    def wait_loaded(self, timeout: float = 60.0, workers: int = 1) -> dict[str, Any]:
        """The health answer once the log's backlog is loaded into the store; with several
        worker processes, once the last answer of each (told apart by its log directory) says
        so."""
        deadline = time.monotonic() + timeout
        latest: dict[str, dict[str, Any]] = {}
        while True:
            health = self.health()
            latest[health.get("log", {}).get("name", "")] = health
            if len(latest) >= workers and all(map(_loaded, latest.values())):
                return health
            if time.monotonic() > deadline:
                raise AssertionError(f"the log was not loaded within {timeout:.0f} s: {latest}")
            time.sleep(0.05)

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def _tail(path: Path | None, size: int = 2000) -> str:
    """The last ``size`` bytes of a process's error output file (for a failure's message)."""
    if path is None or not path.exists():
        return ""
    return path.read_bytes()[-size:].decode(errors="replace")


def _loaded(health: dict[str, Any]) -> bool:
    """This worker's log and every other log under the root are loaded."""
    logs = [health.get("log", {}), *health.get("other_logs", [])]
    return not any(log.get("backlog_bytes") or log.get("backlog_events") for log in logs)


def write_keys_file(directory: Path, project: str, key: str) -> Path:
    """A ``--keys-file`` in ``directory`` giving ``project`` the bearer key ``key``."""
    path = directory / "keys.json"
    path.write_text(json.dumps({project: key}))
    return path


def store_url_of(engine: str, request: Any, tmp_path: Path) -> str:
    """A fresh store of ``engine`` (``duckdb``: a file in ``tmp_path``; ``clickhouse``: a new
    database on the session's server, from the ``clickhouse_base_url`` fixture)."""
    if engine == "duckdb":
        return str(tmp_path / "events.duckdb")
    return fresh_database_url(request.getfixturevalue("clickhouse_base_url"))


def start_service_on(store: str, keys_file: Path, port: int, log_dir: Path) -> Service:
    """``serve-ingest`` on ``port``, tried again while a killed process's port is not free yet."""
    for _ in range(50):
        try:
            return Service(store, keys_file, log_dir, ("--port", str(port)))
        except AssertionError:
            time.sleep(0.2)
    raise AssertionError(f"serve-ingest did not start again on port {port}")


def fresh_database_url(base: str) -> str:
    """A database of its own for one test (created by the store on open), on a server
    (``clickhouse://host:port``) or on chDB (``chdb://PATH``)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    return f"{base}?database={name}" if base.startswith("chdb://") else f"{base}/{name}"


def tool_call(index: int, **overrides: Any) -> dict[str, Any]:
    """A schema-valid ``tool_call`` event; ``index`` spreads it over tools, days and outcomes:
    every 5th is an error (alternately ``tool_error`` and ``timeout``), every 7th non-error one
    has ``isError: true`` in its captured output (the blind spot)."""
    event: dict[str, Any] = {
        "event_id": str(uuid.uuid4()),
        "event_type": "tool_call",
        "trace_id": f"trace-{index}",
        "session_id": "session-1",
        "timestamp": f"2026-11-{1 + index % 3:02d}T23:59:59.500+00:00",
        "source": "server",
        "event_name": f"tool_{index % 4}",
        "latency_ms": float(index % 50),
        "status": "success",
        "is_retry": 0,
    }
    if index % 5 == 0:
        event["status"] = "error"
        event["error_category"] = "tool_error" if index % 2 else "timeout"
        event["error_message"] = "it failed"
    elif index % 7 == 0:
        event["output_content"] = {"content": [], "isError": True}
    elif index % 11 == 0:
        event["output_content"] = {"content": [], "isError": "true"}  # a string: not an error
    event.update(overrides)
    return event
