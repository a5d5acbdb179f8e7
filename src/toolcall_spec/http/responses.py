"""JSON responses, serialized with orjson, and the one way an error becomes a response."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from toolcall_spec.http.errors import ApiError
from toolcall_spec.openwop_wire import PROTOCOL_HEADERS

__all__ = ["JSON", "PROTOCOL_HEADERS", "error_response", "json_response"]

JSON = "application/json"


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(body),
        status_code=status,
        media_type=JSON,
        headers={**PROTOCOL_HEADERS, **(headers or {})},
    )


def error_response(error: ApiError) -> Response:
    return json_response(error.envelope(), error.status, error.headers)
