"""What a host is given from outside (an id source, a clock, a tenant), checked where it enters:
an input that would make the host write documents its own schemas refuse (a run id outside
OpenWOP's grammar, a timestamp that is no timestamp) is refused when the host is built, with a
message naming the input, instead of surfacing later as schema-invalid events."""

from __future__ import annotations

from datetime import datetime

from toolcall_spec.clock import Clock, IdSource
from toolcall_spec.openwop_wire import RUN_ID_PATTERN, TENANT_PATTERN


class InvalidHostInputError(ValueError):
    """An id source, clock or tenant given to the host would make it write documents its own
    schemas refuse (a run id outside OpenWOP's grammar, a timestamp that is not one)."""


RUN_ID_GRAMMAR = "<tenant>/<opaque>: each of A-Z a-z 0-9 . _ ~ -, the opaque part 16 to 128 long"


def checked_tenant(tenant: str) -> str:
    """``tenant``, if it can be the tenant part of a run id (a tenant id without ``anon:``)."""
    if not isinstance(tenant, str) or TENANT_PATTERN.match(tenant) is None or ":" in tenant:
        raise InvalidHostInputError(
            f"tenant: {tenant!r} is not a tenant id of a run id ({RUN_ID_GRAMMAR})"
        )
    return tenant


def checked_id_source(ids: IdSource, tenant: str) -> IdSource:
    """``ids``, with every id checked to make a run id of OpenWOP's grammar
    (``openwop_wire.RUN_ID_PATTERN``). The first id is drawn at once, so a source that cannot
    make one is refused when the host is built; it is handed out first later, so none is lost.
    A source this made for the same tenant is returned as it is."""
    if getattr(ids, _CHECKED_FOR, None) == tenant:
        return ids
    pending = [_checked_run_id(ids(), tenant)]

    def checked() -> str:
        return pending.pop() if pending else _checked_run_id(ids(), tenant)

    setattr(checked, _CHECKED_FOR, tenant)
    return checked


_CHECKED_FOR = "_toolcall_spec_checked_for"
"""Set on the id sources and clocks made here (a host copied with ``with_capabilities`` reuses
them instead of checking, and drawing from, them again)."""


def _checked_run_id(opaque: object, tenant: str) -> str:
    if not isinstance(opaque, str) or RUN_ID_PATTERN.match(f"{tenant}/{opaque}") is None:
        raise InvalidHostInputError(
            f"ids: the id source returned {opaque!r}, which makes no run id of OpenWOP's "
            f"grammar ({RUN_ID_GRAMMAR})"
        )
    return opaque


def checked_clock(clock: Clock) -> Clock:
    """``clock``, read once now and at every later reading checked to return a ``datetime``: a
    clock that returns anything else (``time.time``'s float) is refused when the host is built,
    not halfway through a run. A clock this made is returned as it is."""
    if getattr(clock, _CHECKED_FOR, None) == "clock":
        return clock
    _checked_reading(clock())

    def checked() -> datetime:
        return _checked_reading(clock())

    setattr(checked, _CHECKED_FOR, "clock")
    return checked


def _checked_reading(reading: object) -> datetime:
    if not isinstance(reading, datetime):
        raise InvalidHostInputError(
            f"clock: the clock returned {type(reading).__name__} {reading!r}, not a datetime"
        )
    return reading
