"""JSON responses, serialized with orjson, and the one way an error becomes a response."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response

from toolcall_spec.http.errors import ApiError

JSON = "application/json"
PROTOCOL_HEADERS = {"OpenWOP-Version": "2.0"}
"""Sent on every answer: the protocol major this host speaks."""


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        orjson.dumps(body),
        status_code=status,
        media_type=JSON,
        headers={**PROTOCOL_HEADERS, **(headers or {})},
    )


def error_response(error: ApiError) -> Response:
    return json_response(error.envelope(), error.status, error.headers)
