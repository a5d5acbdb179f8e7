"""``serve-ingest`` operations with real processes and ``kill -9``: a restart with another
``--workers`` count loads what the earlier layout left in its logs; the supervisor replaces a
killed worker and ends non-zero when it cannot go on; ``GET /v1/health`` gives details only to a
key holder, never an absolute path, and tells the truth about a loader that was killed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from support.store import store_url_of, write_keys_file

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

from support.store import Service, tool_call

from toolcall_spec.analytics.store import open_store
from toolcall_spec.analytics.store.log_health import file_stats, is_log
from toolcall_spec.cli.serve_ingest_cmd import WORKER_HANDLE
from toolcall_spec.http.ingest_app import EVENTS_PATH, HEALTH_PATH

KEY = "key-of-project-a-0123456789"
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


@pytest.fixture(params=["duckdb", "clickhouse"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return store_url_of(request.param, request, tmp_path)


@pytest.fixture
def keys_file(tmp_path: Path) -> Path:
    return write_keys_file(tmp_path, "project-a", KEY)


def descendants(pid: int) -> Iterator[tuple[int, str]]:
    """(pid, command line) of every process under ``pid``, started by any of its threads."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):
            for child in map(int, (task / "children").read_text().split()):
                with contextlib.suppress(FileNotFoundError):
                    command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
                    yield child, command.decode()
                yield from descendants(child)


def workers_of(service: Service) -> list[int]:
    return [pid for pid, _ in descendants(service.process.pid) if WORKER_HANDLE in environ(pid)]


def environ(pid: int) -> str:
    """The environment the process started with (the supervisor marks its workers there)."""
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return ""


def loader_of(service: Service) -> int:
    [loader] = [
        pid for pid, command in descendants(service.process.pid) if "store.loader" in command
    ]
    return loader


def post_batches(url: str, batches: int, first: int = 0) -> set[str]:
    """``batches`` batches of 10 fresh events, each on a new connection (spread over the
    workers); the ids acknowledged."""
    acknowledged: set[str] = set()
    for batch in range(batches):
        events = [tool_call(first + batch * 10 + i) for i in range(10)]
        body = orjson.dumps({"events": events})
        with httpx.Client(timeout=10) as client:
            if client.post(url + EVENTS_PATH, content=body, headers=HEADERS).status_code == 200:
                acknowledged.update(event["event_id"] for event in events)
    return acknowledged


def stored_ids(url: str) -> list[str]:
    with open_store(url) as store:
        return [str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})]


def crash(service: Service) -> None:
    """``kill -9`` of the whole service: the supervisor first (else it replaces the workers),
    then every process it had (the loader dies with its parent)."""
    below = [pid for pid, _ in descendants(service.process.pid)]
    service.kill()
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def workers_option(count: int) -> tuple[str, ...]:
    return ("--workers", str(count)) if count > 1 else ()


@pytest.mark.requirement("toolcall-spec.requirement.store.layout-change")
@pytest.mark.requirement("toolcall-spec.requirement.store.log-replayed")
@pytest.mark.parametrize(("before", "after"), [(3, 1), (1, 2)], ids=["3-to-1", "1-to-2"])
def test_a_restart_with_another_worker_count_loads_every_earlier_log(
    store_url: str, keys_file: Path, tmp_path: Path, before: int, after: int
) -> None:
    """A backlog in every log of the first layout (its loader stopped, then everything killed
    with SIGKILL), a restart with another count: every acknowledged event stored once."""
    log = tmp_path / "log"
    service = Service(store_url, keys_file, log, workers_option(before))
    os.kill(loader_of(service), signal.SIGSTOP)  # the engine falls behind: a backlog builds up
    acknowledged = post_batches(service.url, 30)
    crash(service)
    left = [p for p in [log, *log.iterdir()] if p.is_dir() and is_log(p)]
    behind = {p.name for p in left if file_stats(p)["backlog_bytes"]}
    assert behind - {"worker-1", "worker-2"} - ({log.name} if after == 1 else set()), behind
    again = Service(store_url, keys_file, log, workers_option(after))
    acknowledged |= post_batches(again.url, 5, first=10_000)
    again.wait_loaded(workers=after)
    again.stop()
    ids = stored_ids(store_url)
    assert len(ids) == len(set(ids))  # once
    assert acknowledged <= set(ids)  # every acknowledged event


@pytest.mark.requirement("toolcall-spec.requirement.store.workers-supervised")
def test_a_killed_worker_is_replaced_and_every_worker_killed_ends_non_zero(
    keys_file: Path, tmp_path: Path
) -> None:
    service = Service(str(tmp_path / "events.duckdb"), keys_file, tmp_path / "log",
                      ("--workers", "2"))  # fmt: skip
    first = workers_of(service)
    assert len(first) == 2
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while len(now := workers_of(service)) < 2 or first[0] in now:
        assert time.monotonic() < deadline, now
        time.sleep(0.05)
    assert len(post_batches(service.url, 10)) == 100  # both serve, the new one too
    assert service.process.poll() is None
    for pid in now:
        os.kill(pid, signal.SIGKILL)
    assert service.process.wait(30) == 1  # a supervisor's restart-on-failure starts it again
    errors = service.process.stderr.read().decode() if service.process.stderr else ""
    assert "worker 1 killed by SIGKILL; starting it again" in errors
    assert "every worker ended (killed by SIGKILL)" in errors


@pytest.mark.requirement("toolcall-spec.requirement.store.workers-supervised")
def test_a_stopped_service_ends_0_and_a_killed_worker_is_no_stop(
    keys_file: Path, tmp_path: Path
) -> None:
    service = Service(str(tmp_path / "events.duckdb"), keys_file, tmp_path / "log",
                      ("--workers", "2"))  # fmt: skip
    os.kill(workers_of(service)[1], signal.SIGTERM)  # not from the supervisor: replaced
    deadline = time.monotonic() + 30
    while len(workers_of(service)) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    assert service.process.poll() is None, service.process.communicate()[1]
    service.process.terminate()
    status = service.process.wait(60)
    assert status == 0, (status, service.process.communicate()[1])


def health(url: str, key: str | None) -> httpx.Response:
    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    return httpx.get(url + HEALTH_PATH, headers=headers, timeout=10)


@pytest.mark.requirement("toolcall-spec.requirement.store.health-keyed")
@pytest.mark.parametrize("workers", [1, 2])
def test_health_details_need_a_key_and_never_name_an_absolute_path(
    keys_file: Path, tmp_path: Path, workers: int
) -> None:
    service = Service(str(tmp_path / "events.duckdb"), keys_file, tmp_path / "log",
                      workers_option(workers))  # fmt: skip
    try:
        post_batches(service.url, 3)
        for key in (None, "wrong-key-0123456789"):
            answer = health(service.url, key)
            assert (answer.status_code, answer.json()) == (200, {"status": "ok"})
        detailed = health(service.url, KEY)
        assert detailed.status_code == 200
        assert str(tmp_path) not in detailed.text
        assert "/" not in json.dumps(detailed.json()["log"])  # names, not paths
        assert detailed.json()["status"] == "ok"
        names = [
            detailed.json()["log"]["name"],
            *(o["name"] for o in detailed.json()["other_logs"]),
        ]
        assert sorted(names) == (["."] if workers == 1 else ["worker-1", "worker-2"])
    finally:
        service.stop()


@pytest.mark.requirement("toolcall-spec.requirement.store.health-keyed")
def test_health_tells_a_killed_loader_with_its_reason(keys_file: Path, tmp_path: Path) -> None:
    service = Service(str(tmp_path / "events.duckdb"), keys_file, tmp_path / "log")
    try:
        loader = loader_of(service)
        os.kill(loader, signal.SIGKILL)
        deadline = time.monotonic() + 30
        seen = set()
        while "started again" not in " ".join(problems := details(service)["problems"]):
            seen.update(problems)
            assert time.monotonic() < deadline, problems
            time.sleep(0.02)
        assert problems[0].startswith(".: the loader ended with -9 and was started again")
        assert seen <= {".: the loader is not running (restarting; it ended with -9)"}
        assert health(service.url, None).json() == {"status": "degraded"}
    finally:
        service.stop()


def details(service: Service) -> dict[str, Any]:
    """The health answer a key holder gets."""
    answer: dict[str, Any] = health(service.url, KEY).json()
    return answer
