"""Every conformance leg, in report order: server-free first, then RFC 0245, fixture serving,
run create, the event log, and the wire. Each leg is named by exactly one requirement id."""

from __future__ import annotations

from toolcall_spec.conformance import (
    legs_events,
    legs_refusal,
    legs_replay,
    legs_rfc0245,
    legs_schema,
    legs_wire,
)
from toolcall_spec.conformance.leg import Leg

LEGS: tuple[Leg, ...] = (
    *legs_schema.LEGS,
    *legs_rfc0245.LEGS,
    *legs_replay.LEGS,
    *legs_refusal.LEGS,
    *legs_events.LEGS,
    *legs_wire.LEGS,
)


def leg_by_id(requirement_id: str) -> Leg:
    """The leg named by ``requirement_id``; ``KeyError`` when no leg witnesses it."""
    for leg in LEGS:
        if leg.requirement_id == requirement_id:
            return leg
    raise KeyError(f"no conformance leg for {requirement_id!r}")
