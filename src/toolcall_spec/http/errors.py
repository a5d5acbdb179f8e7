"""Errors as values for the HTTP surface: every failure is answered with the flat OpenWOP envelope
``{error, message, details?}`` and a status code that says what went wrong."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolcall_spec.openwop_wire import VALIDATION_ERROR, error_envelope
from toolcall_spec.typed import ErrorEnvelope


@dataclass(eq=False)
class ApiError(Exception):
    """A request the host answers with an error status. Raised inside handlers, turned into a
    response by the app's exception handler (so a handler never builds error responses itself)."""

    status: int
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"

    def envelope(self) -> ErrorEnvelope:
        return envelope(self.code, self.message, self.details)


envelope = error_envelope
"""The flat error envelope (``toolcall_spec.openwop_wire.error_envelope``)."""


def invalid(field_name: str, message: str, **details: Any) -> ApiError:
    """``400 validation_error`` naming the offending field (``details.field``) and in the
    message, the way run-create refusals name theirs."""
    details = {"field": field_name, **details}
    return ApiError(400, VALIDATION_ERROR, f"{field_name}: {message}", details)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


STATUS_CODES: dict[int, str] = {
    400: VALIDATION_ERROR,
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "toolcall-spec.method_not_allowed",
    409: "run_state_conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    500: "internal_error",
    503: "service_unavailable",
}
"""The code used when only a status is known (e.g. the router's own 404 and 405)."""
