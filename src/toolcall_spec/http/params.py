"""Reading what a client sends: the create-run body (a closed object), the poll query, and the run
id inside a path. Each problem is a ``400 validation_error`` naming the field."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from toolcall_spec.http.errors import invalid
from toolcall_spec.loading import DocumentError, parse_json
from toolcall_spec.paths import ROOT

DEFAULT_EVAL_MODE = "golden"


@dataclass(frozen=True, slots=True)
class CreateRun:
    """A valid ``POST /runs`` body."""

    eval_suite_ref: str
    agent_id: str
    eval_mode: str = DEFAULT_EVAL_MODE


CREATE_MEMBERS = ("mode", "evalSuiteRef", "agentId", "evalMode")
"""The closed body: ``mode`` (``eval``), ``evalSuiteRef``, ``agentId`` required; ``evalMode``
(the suite mode to run, default ``golden``) optional."""


def parse_create_run(raw: bytes) -> CreateRun:
    try:
        body: Any = parse_json(raw)
    except DocumentError as exc:
        raise invalid(ROOT, f"the body is not a JSON document: {exc}") from None
    if not isinstance(body, dict):
        raise invalid(ROOT, "the body must be a JSON object")
    for name in body:
        if name not in CREATE_MEMBERS:
            raise invalid(name, f"unknown member; a run create takes {', '.join(CREATE_MEMBERS)}")
    mode = _required_string(body, "mode")
    if mode != "eval":
        raise invalid("mode", f'this host runs eval runs only (mode "eval"), not {mode!r}')
    eval_mode = body.get("evalMode", DEFAULT_EVAL_MODE)
    if not isinstance(eval_mode, str) or not eval_mode:
        raise invalid("evalMode", 'must be a non-empty string such as "golden"')
    return CreateRun(
        _required_string(body, "evalSuiteRef"), _required_string(body, "agentId"), eval_mode
    )


def _required_string(body: dict[str, Any], name: str) -> str:
    if name not in body:
        raise invalid(name, "required")
    value = body[name]
    if not isinstance(value, str) or not value:
        raise invalid(name, "must be a non-empty string")
    return value


def after_sequence(raw: str | None) -> int:
    """``afterSequence``: an integer >= -1; absent means from the start (-1)."""
    if raw is None:
        return -1
    try:
        value = int(raw)
    except ValueError:
        raise invalid("afterSequence", f"must be an integer >= -1, not {raw!r}") from None
    if value < -1:
        raise invalid("afterSequence", f"must be an integer >= -1, not {value}")
    return value


def poll_timeout(raw: str | None, low: float, high: float) -> float:
    """``timeout`` in seconds within ``[low, high]``; absent means answer at once (0)."""
    if raw is None:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # also catches NaN
        raise invalid(
            "timeout", f"must be a number of seconds from {low:g} to {high:g}, not {raw!r}"
        )
    return value


def run_path_candidates(raw_path: str, prefix: str = "/runs/") -> list[tuple[str, str]]:
    """The ``(run id, rest)`` readings of the raw, still percent-encoded path of a run resource;
    ``rest`` is ``""``, ``events``, ``events/poll`` or ``eval-summary``.

    A run id ``<tenant>/<opaque>`` is one segment when encoded (``local%2Fab12``): decoding the
    path first, as routers do, would cut it in two. The unencoded two-segment form
    (``/runs/local/ab12``) is the second reading, tried when the first names no run."""
    if not raw_path.startswith(prefix):
        return []
    segments = raw_path[len(prefix) :].split("/")
    first = unquote(segments[0])
    readings = [(first, "/".join(segments[1:]))]
    if "/" not in first and len(segments) > 1:
        readings.append((f"{first}/{unquote(segments[1])}", "/".join(segments[2:])))
    return readings
