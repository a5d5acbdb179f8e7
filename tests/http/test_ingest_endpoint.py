"""``POST /v1/events`` on a real uvicorn server on loopback, writing into a real DuckDB file:
the answer is the CLI's, the key names the project, the limit holds while reading (gzip too),
and nothing is acknowledged before it is stored."""

from __future__ import annotations

import gzip
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.middleware import Middleware
from support.store import fresh_database_url, tool_call

from toolcall_spec.analytics.ingest import MAX_BODY_BYTES, ingest_body
from toolcall_spec.analytics.store import EventStore, StoreError, open_store
from toolcall_spec.analytics.store.layout import Columns, Row
from toolcall_spec.http.hot_routes import HotRoutes
from toolcall_spec.http.ingest_app import (
    EVENTS_PATH,
    HEALTH_PATH,
    IngestSettings,
    create_ingest_app,
)
from toolcall_spec.http.otlp_route import TRACES_PATH
from toolcall_spec.http.server import BackgroundServer

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

KEY_A = "key-of-project-a-0123456789"
KEY_B = "key-of-project-b-0123456789"
KEYS = {KEY_A: "project-a", KEY_B: "project-b"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    with open_store(str(tmp_path / "events.duckdb")) as opened:
        yield opened


@pytest.fixture
def server(store: EventStore) -> Iterator[BackgroundServer]:
    with BackgroundServer(create_ingest_app(IngestSettings(store, KEYS))) as running:
        yield running


@pytest.fixture(params=["duckdb", "clickhouse"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    """A DuckDB file, or a database of its own on a real ClickHouse server."""
    if request.param == "duckdb":
        url = str(tmp_path / "events.duckdb")
    else:
        url = fresh_database_url(request.getfixturevalue("clickhouse_base_url"))
    with open_store(url) as opened:
        yield opened


def post(
    server: BackgroundServer, body: bytes, key: str | None = KEY_A, **headers: str
) -> httpx.Response:
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    return httpx.post(server.url + EVENTS_PATH, content=body, headers=headers, timeout=30)


def batch(events: Sequence[Any]) -> bytes:
    return orjson.dumps({"events": list(events)})


def without_request_id(answer: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(answer.pop("requestId"), str)
    return answer


@pytest.mark.parametrize(
    "events",
    [
        [tool_call(1), tool_call(2)],
        [tool_call(1), {"event_type": "tool_call"}, tool_call(3)],
        [{"event_type": "tool_call"}],
    ],
    ids=["200", "207", "400"],
)
def test_the_answer_is_the_cli_answer(
    server: BackgroundServer, store: EventStore, events: list[Any]
) -> None:
    body = batch(events)
    response = post(server, body)
    expected = ingest_body(body)
    assert response.status_code == expected["status"]
    assert without_request_id(response.json()) == expected
    assert store.count("project-a") == expected["accepted"]


def stored_events(store: EventStore, project: str) -> dict[str, tuple[Any, dict[str, Any]]]:
    """event_id -> (the error_message column, the event kept whole), as the store holds them."""
    rows = store.query(
        "SELECT event_id, error_message, event_json FROM {events} WHERE project_id = %(project)s",
        {"project": project},
    )
    return {row[0]: (row[1], orjson.loads(row[2])) for row in rows}


def test_events_are_stored_as_accepted_not_as_sent(any_store: EventStore) -> None:
    """Ingest repairs what an older SDK gets wrong (with a warning); the store keeps the repaired
    event, in its columns and in the event kept whole, on both engines."""
    address = "jane.doe@example.com"
    long_message = f"{address} could not be reached: " + "retrying the upstream call. " * 40
    overlong = tool_call(5, error_message=long_message, sdk_name="yavio", intent_label="book")
    unknown_member = tool_call(1, foo={"bar": 1})
    valid = tool_call(2)
    body = batch([overlong, unknown_member, valid])
    with BackgroundServer(create_ingest_app(IngestSettings(any_store, KEYS))) as running:
        response = post(running, body)
    assert response.status_code == 200
    warned = {warning["index"] for warning in response.json()["warnings"]}
    assert warned == {0, 1}
    stored = stored_events(any_store, "project-a")
    assert set(stored) == {overlong["event_id"], unknown_member["event_id"], valid["event_id"]}
    message_column, kept = stored[overlong["event_id"]]
    assert len(long_message) > 500
    assert message_column == kept["error_message"]
    assert len(message_column) <= 500
    assert address not in message_column
    assert message_column.startswith("[EMAIL_REDACTED] could not be reached")
    assert "sdk_name" not in kept
    assert "intent_label" not in kept
    assert "foo" not in stored[unknown_member["event_id"]][1]
    assert stored[unknown_member["event_id"]][1] == {
        k: v for k, v in unknown_member.items() if k != "foo"
    }
    assert stored[valid["event_id"]][1] == valid


def test_a_body_that_is_not_json_is_the_cli_400(server: BackgroundServer) -> None:
    response = post(server, b"{not json")
    assert response.status_code == 400
    assert without_request_id(response.json()) == ingest_body(b"{not json")


@pytest.mark.requirement("toolcall-spec.requirement.store.project-from-key")
def test_the_project_comes_from_the_key_not_the_body(
    server: BackgroundServer, store: EventStore
) -> None:
    event = tool_call(1, project_id="project-a")
    assert post(server, batch([event]), key=KEY_B).status_code == 200
    assert (store.count("project-b"), store.count("project-a")) == (1, 0)


@pytest.mark.parametrize("key", [None, "wrong-key-0123456789", KEY_A + "x"])
def test_a_missing_or_wrong_key_is_401_and_nothing_is_stored(
    server: BackgroundServer, store: EventStore, key: str | None
) -> None:
    response = post(server, batch([tool_call(1)]), key=key)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert store.count() == 0


@pytest.mark.requirement("toolcall-spec.requirement.store.decompressed-limit")
def test_an_oversized_body_is_413_before_parsing(server: BackgroundServer) -> None:
    body = b"{" + b" " * MAX_BODY_BYTES  # not JSON: parsing it would answer 400
    response = post(server, body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def test_a_gzip_body_is_accepted(server: BackgroundServer, store: EventStore) -> None:
    events = [tool_call(index) for index in range(20)]
    response = post(server, gzip.compress(batch(events)), **{"Content-Encoding": "gzip"})
    assert response.status_code == 200
    assert store.count("project-a") == 20


@pytest.mark.requirement("toolcall-spec.requirement.store.decompressed-limit")
def test_the_limit_applies_to_the_decompressed_size(server: BackgroundServer) -> None:
    # A valid batch whose JSON is over the limit, though its gzip is tiny.
    padding = " " * (MAX_BODY_BYTES + 10)
    body = b'{"events": [' + orjson.dumps(tool_call(1)) + padding.encode() + b"]}"
    compressed = gzip.compress(body)
    assert len(compressed) < MAX_BODY_BYTES // 100
    response = post(server, compressed, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413


@pytest.mark.requirement("toolcall-spec.requirement.store.decompressed-limit")
def test_a_gzip_bomb_is_refused_without_inflating_it() -> None:
    import anyio

    from toolcall_spec.http.ingest_reading import BodyTooLargeError, read_limited

    bomb = gzip.compress(b"0" * (200 * MAX_BODY_BYTES))
    inflated: list[int] = []

    async def chunks() -> Any:
        for start in range(0, len(bomb), 4096):
            inflated.append(start)
            yield bomb[start : start + 4096]

    async def read() -> bytes:
        return await read_limited(chunks(), MAX_BODY_BYTES, gzipped=True)

    with pytest.raises(BodyTooLargeError):
        anyio.run(read)
    assert len(inflated) * 4096 < len(bomb)  # stopped before the end of the compressed body


@pytest.mark.requirement("toolcall-spec.requirement.store.decompressed-limit")
def test_compressed_bytes_that_inflate_to_nothing_are_capped_too() -> None:
    import anyio

    from toolcall_spec.http.ingest_reading import BodyTooLargeError, read_limited

    empty_stored_block = b"\x00\x00\x00\xff\xff"  # a deflate block of no bytes, not final
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    endless = header + empty_stored_block * (MAX_BODY_BYTES // 5 + 10)

    async def chunks() -> Any:
        for start in range(0, len(endless), 4096):
            yield endless[start : start + 4096]

    async def read() -> bytes:
        return await read_limited(chunks(), MAX_BODY_BYTES, gzipped=True)

    with pytest.raises(BodyTooLargeError):
        anyio.run(read)


@pytest.mark.parametrize(
    ("body", "code"),
    # mtime=0: the gzip header holds no clock, so every pytest-xdist worker collects one id
    [
        (b"not gzip at all", "invalid_encoding"),
        (gzip.compress(b"{}", mtime=0)[:-6], "invalid_encoding"),
    ],
    ids=["not-gzip", "truncated-gzip"],
)
def test_a_broken_gzip_body_is_400(server: BackgroundServer, body: bytes, code: str) -> None:
    response = post(server, body, **{"Content-Encoding": "gzip"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code


def test_an_unknown_encoding_is_415(server: BackgroundServer) -> None:
    response = post(server, batch([tool_call(1)]), **{"Content-Encoding": "br"})
    assert response.status_code == 415


class FailingStore(EventStore):
    engine = "failing"

    def write_columns(self, columns: Columns) -> None:
        raise StoreError("disk full")

    def query(self, sql: str, parameters: dict[str, str]) -> list[Row]:
        return [(0,)]

    def close(self) -> None:
        return None


@pytest.mark.requirement("toolcall-spec.requirement.store.ack-after-durable")
def test_nothing_is_acknowledged_when_the_store_fails() -> None:
    app = create_ingest_app(IngestSettings(FailingStore(), KEYS))
    with BackgroundServer(app) as failing:
        response = post(failing, batch([tool_call(1)]))
    assert response.status_code == 503
    assert "accepted" not in response.json()


def test_an_app_without_keys_is_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="at least one non-empty key"):
        create_ingest_app(IngestSettings(store, {}))


# -- the routes HotRoutes serves answer exactly as starlette's router does ---------------------

ROUTED_REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", EVENTS_PATH, {"content": batch([tool_call(1), tool_call(2)])}),
    ("POST", EVENTS_PATH, {"content": batch([tool_call(3), {"event_type": "tool_call"}])}),
    ("POST", EVENTS_PATH, {"content": b"{"}),
    ("POST", EVENTS_PATH, {"content": batch([tool_call(4)]), "key": None}),
    ("POST", EVENTS_PATH, {"content": batch([tool_call(5)]), "key": "wrong-key-0123456789"}),
    (
        "POST",
        EVENTS_PATH,
        {"content": gzip.compress(batch([tool_call(6)])), "encoding": "gzip"},
    ),
    ("POST", EVENTS_PATH, {"content": b"{}", "encoding": "br"}),
    ("POST", EVENTS_PATH, {"content": b" " * (MAX_BODY_BYTES + 1)}),
    ("POST", EVENTS_PATH + "/", {"content": b"{}"}),
    ("POST", "/v1/nothing", {"content": b"{}"}),
    ("GET", EVENTS_PATH, {}),
    ("PUT", EVENTS_PATH, {"content": b"{}"}),
    ("POST", TRACES_PATH, {"content": b"not a trace", "type": "application/json"}),
    ("POST", TRACES_PATH, {"content": b"{}", "type": "application/json", "key": None}),
    ("GET", HEALTH_PATH, {}),
]
"""Accepted, partly accepted, bad JSON, no key, a wrong key, gzip, an unknown encoding, too
large, a path and methods the router answers, OTLP bodies, and the health route."""


def routed_answers(app: Any) -> list[tuple[int, list[tuple[str, str]], Any]]:
    answers = []
    with BackgroundServer(app) as running:
        for method, path, options in ROUTED_REQUESTS:
            headers = {"Content-Type": options.get("type", "application/json")}
            key = options.get("key", KEY_A)
            if key is not None:
                headers["Authorization"] = f"Bearer {key}"
            if "encoding" in options:
                headers["Content-Encoding"] = options["encoding"]
            response = httpx.request(
                method, running.url + path, content=options.get("content"), headers=headers
            )
            kept = [
                (k, v.replace(running.url, "<server>"))
                for k, v in response.headers.multi_items()
                if k != "date"
            ]
            body = response.json() if response.content.startswith(b"{") else response.content
            if isinstance(body, dict):
                body.pop("requestId", None)
            answers.append((response.status_code, kept, body))
    return answers


def is_hot_routes(middleware: Middleware) -> bool:
    factory: object = middleware.cls  # typed as a middleware factory, which a class is too
    return factory is HotRoutes


def test_the_hot_routes_answer_as_starlettes_router_does(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "hot.duckdb")) as hot_store:
        hot = routed_answers(create_ingest_app(IngestSettings(hot_store, KEYS)))
    with open_store(str(tmp_path / "routed.duckdb")) as routed_store:
        app = create_ingest_app(IngestSettings(routed_store, KEYS))
        assert any(is_hot_routes(m) for m in app.user_middleware)  # two different paths
        app.user_middleware = [m for m in app.user_middleware if not is_hot_routes(m)]
        routed = routed_answers(app)
    statuses = {status for status, _, _ in hot}
    assert {200, 207, 307, 400, 401, 404, 405, 413, 415} <= statuses  # the cases are reached
    for request, mine, theirs in zip(ROUTED_REQUESTS, hot, routed, strict=True):
        assert mine == theirs, request
