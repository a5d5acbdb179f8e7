"""Reading what a client sends: the create-run body (a closed object), the poll query, and the run
id inside a path. Each problem is a ``400 validation_error`` naming the field."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from toolcall_spec.http.errors import invalid
from toolcall_spec.json_paths import ROOT, format_path
from toolcall_spec.loading import DocumentError, parse_json
from toolcall_spec.openwop_wire import run_path_readings

DEFAULT_EVAL_MODE = "golden"

UPSTREAM_MEMBERS = (
    "mode",
    "evalSuiteRef",
    "agentId",
    "evalModes",
    "baselineRunId",
    "fixtureRuns",
    "configurable",
    "tags",
    "metadata",
)
"""The create members this host reads as upstream defines them (runs.md §Create, RFC 0251 §B,
RFC 0252). ``workflowId``, ``inputs``, ``tenantId``, ``scopeId``, ``residency`` and
``callbackUrl`` belong to workflow runs, which this host does not run."""
VENDOR_MEMBERS = ("evalMode",)
"""This package's own member: the one mode of a run on a host without RFC 0251."""
CREATE_MEMBERS = UPSTREAM_MEMBERS + VENDOR_MEMBERS
WORKFLOW_MEMBERS = ("workflowId", "inputs", "tenantId", "scopeId", "residency", "callbackUrl")
RUN_OPTIONS = ("configurable", "tags", "metadata")


@dataclass(frozen=True, slots=True)
class CreateRun:
    """A valid ``POST /runs`` body."""

    eval_suite_ref: str
    agent_id: str
    eval_mode: str = DEFAULT_EVAL_MODE
    eval_modes: tuple[str, ...] | None = None
    baseline_run_id: str | None = None
    fixture_runs: dict[str, str] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """The RunOptions members as sent: ``configurable``, ``tags``, ``metadata``."""


def parse_create_run(raw: bytes) -> CreateRun:
    try:
        body: Any = parse_json(raw)
    except DocumentError as exc:
        raise invalid(ROOT, f"the body is not a JSON document: {exc}") from None
    if not isinstance(body, dict):
        raise invalid(ROOT, "the body must be a JSON object")
    for name in body:
        if name in WORKFLOW_MEMBERS:
            raise invalid(name, 'this host runs eval runs only (mode "eval"), not workflows')
        if name not in CREATE_MEMBERS:
            raise invalid(name, f"unknown member; a run create takes {', '.join(CREATE_MEMBERS)}")
    mode = _required_string(body, "mode")
    if mode != "eval":
        raise invalid("mode", f'this host runs eval runs only (mode "eval"), not {mode!r}')
    eval_mode = body.get("evalMode", DEFAULT_EVAL_MODE)
    if not isinstance(eval_mode, str) or not eval_mode:
        raise invalid("evalMode", 'must be a non-empty string such as "golden"')
    if "evalMode" in body and "evalModes" in body:
        raise invalid("evalMode", "send evalModes or evalMode, not both")
    return CreateRun(
        _required_string(body, "evalSuiteRef"),
        _required_string(body, "agentId"),
        eval_mode,
        _eval_modes(body),
        _optional_string(body, "baselineRunId"),
        _fixture_runs(body),
        _run_options(body),
    )


def _required_string(body: dict[str, Any], name: str) -> str:
    if name not in body:
        raise invalid(name, "required")
    value = body[name]
    if not isinstance(value, str) or not value:
        raise invalid(name, "must be a non-empty string")
    return value


def _optional_string(body: dict[str, Any], name: str) -> str | None:
    return _required_string(body, name) if name in body else None


def _eval_modes(body: dict[str, Any]) -> tuple[str, ...] | None:
    if "evalModes" not in body:
        return None
    modes = body["evalModes"]
    if not isinstance(modes, list) or not all(isinstance(m, str) and m for m in modes):
        raise invalid("evalModes", "must be an array of eval mode names")
    return tuple(modes)


def _fixture_runs(body: dict[str, Any]) -> dict[str, str] | None:
    if "fixtureRuns" not in body:
        return None
    runs = body["fixtureRuns"]
    if not isinstance(runs, dict):
        raise invalid("fixtureRuns", "must be an object {taskId: runId}")
    for task_id, run_id in runs.items():
        if not isinstance(run_id, str) or not run_id:
            raise invalid(format_path(["fixtureRuns", task_id]), "must be a run id (a string)")
    return dict(runs)


def _run_options(body: dict[str, Any]) -> dict[str, Any]:
    """The RunOptions members exactly as sent; the host's run-create checks judge them
    (``toolcall_spec.replay.refusal.check_run_options``), in process and over HTTP alike."""
    return {key: body[key] for key in RUN_OPTIONS if key in body}


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


def run_path_candidates(raw_path: str) -> list[tuple[str, str]]:
    """The ``(run id, rest)`` readings of a run resource's raw path (see
    ``toolcall_spec.openwop_wire.run_path_readings``)."""
    return run_path_readings(raw_path)
