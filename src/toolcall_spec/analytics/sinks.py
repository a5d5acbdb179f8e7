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


class IngestPostSink:
    """Posts events to an ingest endpoint (``POST {url}`` with an ingest batch body and
    ``Authorization: Bearer <key>``) from a background thread, so the caller never waits on the
    network: what queued up while a batch was in flight goes out as the next batch (at most
    ``MAX_BATCH`` events). ``close`` sends what is left, waiting at most ``timeout`` seconds. A
    batch the endpoint refuses, or that cannot be sent, is logged and counted in ``lost``."""

    MAX_BATCH = 1000
    """``analytics.ingest.MAX_BATCH_EVENTS`` (a test holds them equal): not imported, as that
    module loads the validators, and a sink is imported with the analytics package."""

    def __init__(self, url: str, key: str | None = None, *, timeout: float = 10.0) -> None:
        self.url = url
        self.key = key
        self.timeout = timeout
        self.lost = 0
        self._queue: list[dict[str, Any]] = []
        self._wake = threading.Condition()
        self._closing = False
        self._worker = threading.Thread(target=self._run, name="ingest-post", daemon=True)
        self._worker.start()

    def __call__(self, event: Event) -> None:
        with self._wake:
            self._queue.append(dict(event))
            self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._worker.join(self.timeout)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._closing:
                    self._wake.wait()
                batch = self._queue[: self.MAX_BATCH]
                del self._queue[: self.MAX_BATCH]
                if not batch and self._closing:
                    return
            self._post(batch)

    def _post(self, batch: list[dict[str, Any]]) -> None:
        import urllib.error  # noqa: PLC0415  (only when events are posted)
        import urllib.request  # noqa: PLC0415

        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        body = orjson.dumps({"events": batch})
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                status = answer.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except (OSError, ValueError) as exc:
            logger.warning("could not post %d events to %s: %s", len(batch), self.url, exc)
            self.lost += len(batch)
            return
        if status not in (200, 207):
            logger.warning("%s refused a batch of %d events: HTTP %d", self.url, len(batch), status)
            self.lost += len(batch)
