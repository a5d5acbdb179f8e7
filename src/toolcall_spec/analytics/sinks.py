"""Where events go. A sink is any callable that takes one event; three are provided:
``MemorySink`` (a list, for tests and notebooks), ``JsonlFileSink`` (append one line per
event and flush, so a crash loses nothing written) and ``callback_sink`` (adapt a function,
e.g. one that queues events for an HTTP batch).

``deliver`` is how the package hands an event to a sink: a sink that raises is logged, never
allowed to break the tool call it observes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

import orjson

Event = Mapping[str, Any]
Sink = Callable[[Event], None]
"""Anything that accepts one event."""

logger = logging.getLogger("toolcall_spec.analytics")


def deliver(sink: Sink, event: Event) -> bool:
    """Give ``event`` to ``sink``; ``False`` (and a log record) when the sink raised."""
    try:
        sink(event)
    except Exception:
        logger.exception("analytics sink %r failed; the event is lost", sink)
        return False
    return True


class MemorySink:
    """Keeps every event in ``events``, in arrival order."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event: Event) -> None:
        self.events.append(dict(event))


class JsonlFileSink:
    """Appends each event as one JSON line to a file and flushes it. Thread-safe. Use it as a
    context manager, or call ``close``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._handle: BinaryIO = self.path.open("ab")
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        line = orjson.dumps(event) + b"\n"
        with self._lock:
            self._handle.write(line)
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            self._handle.close()

    def __enter__(self) -> JsonlFileSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def callback_sink(function: Callable[[dict[str, Any]], object]) -> Sink:
    """A sink that calls ``function`` with a copy of each event (its return value is ignored)."""

    def sink(event: Event) -> None:
        function(dict(event))

    return sink
