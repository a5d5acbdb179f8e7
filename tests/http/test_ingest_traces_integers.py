"""Every integer-valued field of an OTLP/JSON trace export, times every malformed form of an
integer, against the real endpoint (uvicorn on loopback, a real DuckDB file): a 400 naming the
JSON path of the bad value, never a 500, nothing stored; every well-formed value is taken.

The fields are not listed here: they come from opentelemetry-proto's own descriptors (every
int, fixed and enum field reachable from ``ExportTraceServiceRequest``), so a field the
endpoint's table misses fails here. The real ``google.protobuf.json_format`` judges the same
documents: it refuses every form refused here, except the ones Python's ``int()`` lets through
(listed, with why), and takes every form taken here.
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")
pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed")

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from toolcall_spec.analytics.store import EventStore, open_store
from toolcall_spec.http.ingest_app import IngestSettings, create_ingest_app
from toolcall_spec.http.otlp_route import TRACES_PATH
from toolcall_spec.http.server import BackgroundServer
from toolcall_spec.json_paths import format_path

KEY = "key-of-project-a-0123456789"
NOT_A_TRACE = pytest.mark.requirement("toolcall-spec.requirement.otlp.not-a-trace")

_INTEGER_TYPES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_ENUM: (-(2**31), 2**31 - 1),
}

Step = tuple[str, bool, str]
"""A field on the way: (JSON name, repeated, the message it holds or '' for the integer)."""


def integer_fields(
    descriptor: Descriptor, seen: tuple[str, ...] = ()
) -> Iterator[tuple[list[Step], FieldDescriptor]]:
    """Every integer or enum field under ``descriptor``, by the steps that lead to it; a message
    that contains itself (AnyValue in ArrayValue) is entered twice, to reach its nested fields."""
    for field in descriptor.fields:
        repeated = field.is_repeated
        if field.type in _INTEGER_TYPES:
            yield [(field.json_name, repeated, "")], field
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            inner = field.message_type
            if seen.count(inner.full_name) >= 2:
                continue
            for steps, found in integer_fields(inner, (*seen, inner.full_name)):
                yield [(field.json_name, repeated, inner.full_name), *steps], found


def worth_a_test(steps: list[Step]) -> bool:
    """Values nested in arrays and lists of values are tried under the span's attributes only:
    the same messages under a resource, a scope, an event or a link add time, not cases."""
    names = [name for name, _, _ in steps]
    nested = "arrayValue" in names or "kvlistValue" in names
    return not nested or names[:4] == ["resourceSpans", "scopeSpans", "spans", "attributes"]


FIELDS = [
    item for item in integer_fields(ExportTraceServiceRequest.DESCRIPTOR) if worth_a_test(item[0])
]


def field_id(item: tuple[list[Step], FieldDescriptor]) -> str:
    return ".".join(name for name, _, _ in item[0])


def good_span() -> dict[str, Any]:
    return {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "tools/call add",
        "kind": 2,
        "startTimeUnixNano": "1796040000000000000",
        "endTimeUnixNano": "1796040000250000000",
        "attributes": [
            {"key": "mcp.method.name", "value": {"stringValue": "tools/call"}},
            {"key": "gen_ai.tool.name", "value": {"stringValue": "add"}},
        ],
    }


def export_with(steps: list[Step], value: Any) -> tuple[dict[str, Any], str]:
    """A good export of one tools/call span with ``value`` at the field ``steps`` lead to (a new
    item in each list on the way, past the span chain), and the path of that value."""
    export: dict[str, Any] = {"resourceSpans": [{"scopeSpans": [{"spans": [good_span()]}]}]}
    at: Any = export
    path: list[str | int] = []
    for name, repeated, message in steps[:-1]:
        if repeated:
            items = at.setdefault(name, [])
            if name not in ("resourceSpans", "scopeSpans", "spans"):
                items.append({"key": f"k{len(items)}"} if message.endswith("KeyValue") else {})
            index = 0 if name in ("resourceSpans", "scopeSpans", "spans") else len(items) - 1
            path += [name, index]
            at = items[index]
        else:
            at = at.setdefault(name, {})
            path.append(name)
    name, repeated, _ = steps[-1]
    at[name] = [value] if repeated else value
    path += [name, 0] if repeated else [name]
    return export, format_path(path)


def malformed(field: FieldDescriptor) -> list[Any]:
    low, high = _INTEGER_TYPES[field.type]
    forms: list[Any] = [
        "12x", "1.5", "1e-3", " 12", "12 ", "\t12", "+12", "012", "0x10", "1_000",
        "\u0661\u0662", "\u00b2", "", "NaN", "Infinity", "-", "1e", True, 1.5, 1e30, 2.0**60,
        [], {}, str(high + 1), str(low - 1), str(2**64), "9" * 500,
    ]  # fmt: skip
    if field.type == FieldDescriptor.TYPE_ENUM:
        forms += ["SPAN_KIND_NOPE", "2", "status_code_ok"]
    if low == 0:
        forms += ["-1", -1]
    return forms


def well_formed(field: FieldDescriptor) -> list[Any]:
    low, high = _INTEGER_TYPES[field.type]
    forms: list[Any] = [0, 1, 1.0, -0.0, high, low]
    if field.type == FieldDescriptor.TYPE_ENUM:
        return [*forms, *field.enum_type.values_by_name]
    return [*forms, "0", "1", "-0", "1e3", "1.0", "1.0E2", str(high), str(low)]


JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def python_int_lax(value: Any, enum: bool) -> bool:
    """What json_format takes through Python's ``int()`` and ProtoJSON does not: a string that
    is no JSON number token (Go's protojson refuses a sign, a leading zero, '_', another
    script's digits, whitespace; an enum is its name or a JSON number), or a double past 2**53,
    which has lost digits (a 64-bit value travels as a decimal string). json_format reads an
    enum's number with a bare ``int()``: it takes ``true`` and cuts ``1.5`` to 1."""
    if isinstance(value, float) and not enum:
        return abs(value) >= 2**53 and value < 2**64
    if not enum and (not isinstance(value, str) or JSON_NUMBER.fullmatch(value)):
        return False
    try:
        int(value)
    except (ValueError, TypeError):
        return False
    return True


def proto_verdict(export: dict[str, Any]) -> bool:
    """Whether json_format parses the export (its ids base64, as ProtoJSON writes bytes)."""
    document = copy.deepcopy(export)
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    for name in ("traceId", "spanId"):
        span[name] = base64.b64encode(bytes.fromhex(span[name])).decode()
    try:
        json_format.Parse(orjson.dumps(document), ExportTraceServiceRequest())
    except json_format.ParseError:
        return False
    return True


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, EventStore]]:
    store = open_store(str(Path(tmp_path_factory.mktemp("ints")) / "events.duckdb"))
    app = create_ingest_app(IngestSettings(store, {KEY: "project-a"}))
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    with (
        store,
        BackgroundServer(app) as running,
        httpx.Client(base_url=running.url, headers=headers, timeout=30) as client,
    ):
        yield client, store


def post(client: httpx.Client, export: dict[str, Any]) -> httpx.Response:
    return client.post(TRACES_PATH, content=orjson.dumps(export))


def test_the_descriptors_give_every_kind_of_integer_field() -> None:
    names = {field_id(item) for item in FIELDS}
    assert "resourceSpans.scopeSpans.spans.startTimeUnixNano" in names
    assert "resourceSpans.scopeSpans.spans.events.timeUnixNano" in names
    assert "resourceSpans.scopeSpans.spans.status.code" in names
    assert "resourceSpans.resource.droppedAttributesCount" in names
    assert "resourceSpans.scopeSpans.spans.attributes.value.arrayValue.values.intValue" in names
    assert len(FIELDS) >= 25


@pytest.mark.requirement("toolcall-spec.requirement.otlp.malformed-integer")
@NOT_A_TRACE
@pytest.mark.parametrize("item", FIELDS, ids=field_id)
def test_a_malformed_integer_is_400_with_its_path(
    server: tuple[httpx.Client, EventStore], item: tuple[list[Step], FieldDescriptor]
) -> None:
    running, store = server
    steps, field = item
    before = store.count()
    for value in malformed(field):
        export, path = export_with(steps, value)
        response = post(running, export)
        assert response.status_code == 400, (path, value, response.text)
        message = response.json()["message"]
        assert f"{path}: " in message, (value, message)
        assert "Traceback" not in response.text
        if not python_int_lax(value, field.type == FieldDescriptor.TYPE_ENUM):
            assert not proto_verdict(export), f"json_format takes {value!r} at {path}"
    assert store.count() == before


@NOT_A_TRACE
@pytest.mark.parametrize("item", FIELDS, ids=field_id)
def test_a_well_formed_integer_is_taken(
    server: tuple[httpx.Client, EventStore], item: tuple[list[Step], FieldDescriptor]
) -> None:
    running, _ = server
    steps, field = item
    for value in well_formed(field):
        export, path = export_with(steps, value)
        response = post(running, export)
        assert response.status_code == 200, (path, value, response.text)
        assert proto_verdict(export), f"json_format refuses {value!r} at {path}"
