"""Time and ids: the one clock, the one timestamp form, and the id sources every document uses.

Every timestamp this package writes (run events, ``tool_call`` events, run records) is RFC 3339
in UTC with milliseconds and ``Z``: ``2026-11-30T12:00:00.250Z``, the form the schemas'
``date-time`` members accept. Clocks and id sources are plain callables so that a run with a
fixed clock and fixed ids reproduces its documents byte for byte.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import datetime, timezone

Clock = Callable[[], datetime]
"""Returns the current time; a naive datetime is read as UTC."""
IdSource = Callable[[], str]
"""Returns a fresh opaque id."""


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(timezone.utc)


def format_timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds and ``Z``, e.g. ``2026-11-30T12:00:00.250Z``. A naive
    datetime is taken to be UTC already."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    # isoformat, not strftime: strftime's %Y does not pad years before 1000 on every platform.
    utc = moment.astimezone(timezone.utc)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def timestamp_now(clock: Clock = utc_now) -> str:
    """The clock's current time as a timestamp (``format_timestamp``)."""
    return format_timestamp(clock())


def parse_timestamp(text: str) -> datetime:
    """An RFC 3339 timestamp (already checked by the schema) as an aware UTC datetime. Two valid
    timestamps ``datetime`` cannot hold are read as the nearest moment it can: a leap second
    (``23:59:60``) as ``23:59:59.999999``, and a moment outside years 1 to 9999 once in UTC
    (``0001-01-01T00:00:00+01:00``) as the first or last moment of that range."""
    text = text.replace("Z", "+00:00").replace("z", "+00:00")
    leap = _LEAP_SECOND.search(text) if ":60" in text else None
    if leap is not None:  # keep the fraction's digits out: the second's last microsecond
        text = text[: leap.start()] + ":59.999999" + text[leap.end() :]
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        edge = datetime.min if moment.year == 1 else datetime.max
        return edge.replace(tzinfo=timezone.utc)


_LEAP_SECOND = re.compile(r":60(\.\d+)?(?=[+-]\d\d:\d\d$|$)")


def elapsed_ms(start: datetime, end: datetime) -> int:
    """Whole milliseconds between two clock readings, never negative."""
    return max(0, int((end - start).total_seconds() * 1000))


def random_id() -> str:
    """A random opaque id: 32 lowercase hex digits (a version 4 UUID without hyphens)."""
    return uuid.uuid4().hex


def new_uuid() -> str:
    """A random (version 4) UUID in its hyphenated form."""
    return str(uuid.uuid4())
