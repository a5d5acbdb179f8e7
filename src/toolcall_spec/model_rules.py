"""Schema rules the model generator drops silently, carried by hand.

Each class here is the base of one generated model (``base-class-map`` in pyproject.toml). Each
rule runs before field validation on the raw mapping, so it sees exactly the members the document
carries, as the JSON Schema does. tests/test_models_strict.py proves every rule in both the JSON
Schema validator and the models.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, model_validator

HATCH = re.compile(r"^(openwop-|x-|vendor\.)")
"""Vendor extension keys allowed on closed OpenWOP objects."""


def _members(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {}


class ToolResponseRules(BaseModel):
    """``dependentRequired: {argsMatch: [args]}`` on a fixture entry."""

    @model_validator(mode="before")
    @classmethod
    def _args_match_needs_args(cls, data: Any) -> Any:
        members = _members(data)
        if "argsMatch" in members and "args" not in members:
            raise ValueError("argsMatch is only allowed together with args")
        return data


class AgentToolReturnedRules(BaseModel):
    """The ``status`` conditionals of ``agent.tool-returned`` the generator drops."""

    @model_validator(mode="before")
    @classmethod
    def _status_agrees_with_members(cls, data: Any) -> Any:
        members = _members(data)
        status = members.get("status")
        if status == "ok" and "error" in members:
            raise ValueError("status ok cannot carry error")
        if status in ("forbidden", "rate_limited") and "durationMs" in members:
            raise ValueError(f"status {status} carries no durationMs")
        return data


class ToolCallEventRules(BaseModel):
    """``error_category`` and ``error_message`` only on ``status: error`` (the ``else``)."""

    @model_validator(mode="before")
    @classmethod
    def _error_fields_only_on_error(cls, data: Any) -> Any:
        members = _members(data)
        if members.get("status") != "error":
            present = [name for name in ("error_category", "error_message") if name in members]
            if present:
                raise ValueError(f"{', '.join(present)} only allowed when status is error")
        return data


class CapabilityRecordRules(BaseModel):
    """A ``stable`` capability record has no ``until``."""

    @model_validator(mode="before")
    @classmethod
    def _stable_has_no_until(cls, data: Any) -> Any:
        members = _members(data)
        if members.get("status") == "stable" and "until" in members:
            raise ValueError("a stable capability record has no until")
        return data


class DiscoveryDocumentRules(BaseModel):
    """Every unknown top-level key of a discovery document is a capability family record."""

    @model_validator(mode="before")
    @classmethod
    def _unknown_keys_are_records(cls, data: Any) -> Any:
        from toolcall_spec.models.capabilities.discovery_schema import (  # noqa: PLC0415 - cycle
            CapabilityRecord,
        )

        known = set(cls.model_fields)
        for key, value in _members(data).items():
            if key not in known and not HATCH.match(key):
                CapabilityRecord.model_validate(value)
        return data


class RunEventRules(BaseModel):
    """The payload of a known event type is checked against that type's payload model."""

    @model_validator(mode="before")
    @classmethod
    def _payload_matches_type(cls, data: Any) -> Any:
        from toolcall_spec.models.events import run_event_payloads_schema as payloads  # noqa: PLC0415

        members = _members(data)
        models: dict[object, type[BaseModel]] = {
            "agent.tool-called": payloads.AgentToolCalled,
            "agent.tool-returned": payloads.AgentToolReturned,
            "eval.started": payloads.EvalStarted,
            "eval.scored": payloads.EvalScored,
            "eval.completed": payloads.EvalCompleted,
        }
        model = models.get(members.get("type"))
        if model is not None and isinstance(members.get("payload"), dict):
            model.model_validate(members["payload"])
        return data
