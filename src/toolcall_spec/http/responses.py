"""JSON responses, serialized with orjson, and the one way an error becomes a response."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from starlette.responses import Response

from toolcall_spec.http.errors import ApiError
from toolcall_spec.openwop_wire import PROTOCOL_HEADERS

__all__ = ["JSON", "PROTOCOL_HEADERS", "JsonResponse", "error_response", "json_response"]

JSON = "application/json"


def _raw(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    """Header pairs as starlette writes them: names lower-cased, both latin-1."""
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


PROTOCOL_RAW_HEADERS = _raw(PROTOCOL_HEADERS)
CONTENT_TYPE_JSON = (b"content-type", JSON.encode("latin-1"))


class JsonResponse(Response):
    """A JSON body with the headers starlette's ``Response`` would send (those given, then
    ``content-length`` and ``content-type``), the protocol headers encoded once per process
    instead of once per response."""

    media_type = JSON

    def __init__(self, body: bytes, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = status
        self.background = None
        self.body = body
        self.raw_headers = [*headers, (b"content-length", b"%d" % len(body)), CONTENT_TYPE_JSON]


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    raw = _raw({**PROTOCOL_HEADERS, **headers}) if headers else PROTOCOL_RAW_HEADERS
    return JsonResponse(orjson.dumps(body), status, raw)


def error_response(error: ApiError) -> Response:
    return json_response(error.envelope(), error.status, error.headers)
