"""The OpenWOP v2 wire, in one place: paths, headers, the protocol version, run id projection, the
flat error envelope, event type names and this package's vendor keys.

The HTTP server (``toolcall_spec.http.app``), the HTTP conformance adapter
(``toolcall_spec.http.adapter``) and the reference host all read these facts from here, so the
two sides of the wire cannot drift apart. Sources (facts carried over, words our own):
openwop/openwop ``spec/v2/core/runs.md``, ``identity.md`` §5 (the wire form of a tenant-bound id),
``events.md``; openwop/openwop-sdks ``schemas/v2/ids.schema.json``,
``run-snapshot.schema.json``, ``run-event-payloads.schema.json``; the official Python client
``openwop-client`` 2.7.0 (``wire_id.py``: the projection this module must agree with byte for
byte, which tests/kernel/test_openwop_wire.py checks against the client itself).

Stdlib only: ``import toolcall_spec`` stays light.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, cast
from urllib.parse import quote

if TYPE_CHECKING:
    from toolcall_spec.typed import ErrorDetails, ErrorEnvelope

# -- versions and headers ---------------------------------------------------------------------

VERSION_HEADER = "OpenWOP-Version"
PROTOCOL_VERSION = "2.0"
"""The ``OpenWOP-Version`` value this package sends and answers with (``<major>.<minor>``)."""
SUPPORTED_MAJOR = "2"
PROTOCOL_HEADERS: dict[str, str] = {VERSION_HEADER: PROTOCOL_VERSION}
"""Sent on every answer: the protocol version the host speaks (runs.md §Surface)."""
EVENT_LOG_SCHEMA_VERSION = 3
"""RFC 0176 §A.2's era key on a run snapshot: a v2 host writes 3 (``run-snapshot.schema.json``)."""
EVENT_SCHEMA_VERSION = 1
"""The envelope ``schemaVersion`` of every event this package writes."""

# -- paths ------------------------------------------------------------------------------------

DISCOVERY_PATH = "/.well-known/openwop"
RUNS_PATH = "/runs"
EVENTS = "events"
POLL = "events/poll"
EVAL_SUMMARY = "eval-summary"
RUN_RESOURCES = ("", EVENTS, POLL, EVAL_SUMMARY)
"""What may follow ``/runs/{runId}``: the snapshot (nothing), the SSE stream, the long poll and
the eval summary."""

# -- run id projection (identity.md §5) ---------------------------------------------------------

_PASSTHROUGH = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_ESCAPE = re.compile(r"[~%]([0-9A-Fa-f]{2})")
_ESCAPED_SLASH = re.compile(r"[~%]2F", re.IGNORECASE)


def project_id(bound: str) -> str:
    """The one-segment wire form of a tenant-bound id (``acme/r-9f3c`` -> ``acme~2Fr-9f3c``):
    every UTF-8 byte outside ``[A-Za-z0-9._-]`` becomes ``~`` and two uppercase hex digits. An id
    already in wire form (no ``/`` but an escaped one) is decoded first, so it is never escaped
    twice."""
    if "/" not in bound and _ESCAPED_SLASH.search(bound):
        bound = unproject_id(bound)
    return "".join(
        chr(byte) if byte in _PASSTHROUGH else f"~{byte:02X}" for byte in bound.encode("utf-8")
    )


def unproject_id(wire: str) -> str:
    """The bound id behind a path segment, accepting the projected escape (``~2F``) and
    percent-encoding (``%2F``) alike, in either case of hex digit. An id whose escapes do not
    decode as UTF-8 is returned with replacement characters, which names no run."""
    out = bytearray()
    position = 0
    for match in _ESCAPE.finditer(wire):
        out += wire[position : match.start()].encode("utf-8")
        out.append(int(match.group(1), 16))
        position = match.end()
    out += wire[position:].encode("utf-8")
    return out.decode("utf-8", errors="replace")


def run_path(run_id: str, resource: str = "") -> str:
    """``/runs/{projected runId}[/resource]``: the form every link this package emits uses."""
    base = f"{RUNS_PATH}/{project_id(run_id)}"
    return f"{base}/{resource}" if resource else base


def run_links(run_id: str) -> dict[str, str]:
    """The links of a run (relative: they resolve under the origin the request was made to)."""
    return {
        "statusUrl": run_path(run_id),
        "eventsUrl": run_path(run_id, EVENTS),
        "evalSummaryUrl": run_path(run_id, EVAL_SUMMARY),
    }


def run_path_readings(raw_path: str) -> list[tuple[str, str]]:
    """The ``(run id, resource)`` readings of the raw (still escaped) path of a run resource.

    A run id ``<tenant>/<opaque>`` is one segment in wire form (``local~2Fab12`` or
    ``local%2Fab12``); decoding the path first, as routers do, would cut it in two. The
    unescaped two-segment form (``/runs/local/ab12``) is the second reading, tried when the first
    names no run."""
    prefix = f"{RUNS_PATH}/"
    if not raw_path.startswith(prefix):
        return []
    segments = raw_path[len(prefix) :].split("/")
    first = unproject_id(segments[0])
    readings = [(first, "/".join(segments[1:]))]
    if "/" not in first and len(segments) > 1:
        readings.append((f"{first}/{unproject_id(segments[1])}", "/".join(segments[2:])))
    return readings


RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9._~-]{1,128}/[A-Za-z0-9._~-]{16,128}$")
"""``ids.schema.json#/$defs/runId``: ``<tenantId>/<opaque>``, the opaque part 16..128 chars."""
TENANT_PATTERN = re.compile(r"^(anon:)?[A-Za-z0-9._~-]{1,128}$")
"""``ids.schema.json#/$defs/tenantId``."""

# -- errors -----------------------------------------------------------------------------------

VALIDATION_ERROR = "validation_error"
VENDOR_ORG = "toolcall-spec"
VENDOR_ERROR_CODE = re.compile(r"^(?!openwop\.)[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9_]*$")
"""A vendor error code (errors.md): ``<org>.<code>``, never under ``openwop.``."""


def vendor_code(name: str) -> str:
    """This package's vendor error code ``toolcall-spec.<name>``."""
    return f"{VENDOR_ORG}.{name}"


def error_envelope(
    code: str, message: str, details: Mapping[str, Any] | None = None
) -> ErrorEnvelope:
    """The flat error envelope ``{error, message, details?}``; ``details`` only when not empty.
    ``details`` is open (``field`` is the one member the schema names)."""
    body: ErrorEnvelope = {"error": code, "message": message}
    if details:
        body["details"] = cast("ErrorDetails", dict(details))
    return body


def refusal_field(envelope: Any) -> str | None:
    """The member a ``validation_error`` names (``details.field``), if it names one."""
    details = envelope.get("details") if isinstance(envelope, dict) else None
    field = details.get("field") if isinstance(details, dict) else None
    return field if isinstance(field, str) else None


# -- events -----------------------------------------------------------------------------------

RUN_STARTED = "run.started"
RUN_COMPLETED = "run.completed"
RUN_FAILED = "run.failed"
RUN_CANCELLED = "run.cancelled"
TOOL_CALLED = "agent.tool-called"
TOOL_RETURNED = "agent.tool-returned"
EVAL_STARTED = "eval.started"
EVAL_SCORED = "eval.scored"
EVAL_COMPLETED = "eval.completed"
TASK_FAILED = f"{VENDOR_ORG}.eval.task-failed"
"""Vendor event type: why a task failed (``eval.scored`` is closed and has no seat for it)."""
TERMINAL_EVENT_TYPES = frozenset({RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED})
"""The events that end a run's log, and with it a poll or an SSE stream."""
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
RunTransport = Literal["rest", "mcp", "a2a", "ui"]
"""How a run was created (``run.started.transport``, schemas/events/run-event-payloads)."""
TRANSPORT_REST: RunTransport = "rest"
"""``run.started.transport`` of a run created over HTTP."""

# -- vendor keys and seams --------------------------------------------------------------------

SEAMS_EXTENSION = f"{VENDOR_ORG}.test-seams"
"""The run snapshot's ``extensions`` key (``<org>.<name>``) carrying what the scripted agent
received. Served only by a host started with its test seams on (off by default): it quotes
recorded fixture payloads, which the wire never carries otherwise."""
LIVE_INVOCATIONS_PATH = "/x-toolcall-spec/live-invocations"
"""Vendor seam: per live tool, how often it was invoked (test seams only)."""


def percent_encoded(run_id: str) -> str:
    """The legacy wire form of a run id (``%2F``), still accepted on every path."""
    return quote(run_id, safe="")
