"""Where events go. A sink is any callable that takes one event; three are provided:
``MemorySink`` (a list, for tests and notebooks), ``JsonlFileSink`` (append one line per
event and flush, so a crash loses nothing written) and ``callback_sink`` (adapt a function,
e.g. one that queues events for an HTTP batch); ``IngestPostSink`` posts batches to an ingest
endpoint, retrying what the endpoint could not take.

``deliver`` is how the package hands an event to a sink: a sink that raises is logged, never
allowed to break the tool call it observes.
"""

from __future__ import annotations

import atexit
import logging
import random
import threading
import time
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


RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Answers after which a batch is sent again: the endpoint could not take it now (503 with
``Retry-After`` when its log is full), not that it refused it."""


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for: seconds, or an HTTP date; ``None`` when it
    is absent or unreadable."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if seconds >= 0 else None
    from email.utils import parsedate_to_datetime  # noqa: PLC0415

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(moment.timestamp() - current, 0.0)


class IngestPostSink:
    """Posts events to an ingest endpoint (``POST {url}`` with an ingest batch body and
    ``Authorization: Bearer <key>``) from a background thread, so the caller never waits on the
    network (the same behaviour as the npm package's ``IngestHttpSink``):

    - a call only appends to a buffer of at most ``max_buffered`` events; past that the event is
      dropped and counted in ``dropped`` (the tool call is never blocked, memory stays bounded);
    - what queued up while a batch was in flight goes out as the next batch (at most
      ``MAX_BATCH`` events);
    - a batch the endpoint could not take (a network error, 408, 429, 5xx: 503 with
      ``Retry-After`` when its log is full) is sent again, after ``Retry-After`` or an
      exponential backoff with jitter (``min_backoff`` doubling to ``max_backoff`` seconds), until
      it is answered. A resent batch holds the same ``event_id``s and the store keeps one row per
      id, so a batch sent twice (its answer lost) is stored once;
    - a batch refused for good (400, 401, 413, ...) is logged and counted in ``lost``;
    - ``close`` sends what is left, waiting at most ``timeout`` seconds; what is still unsent then
      is counted in ``lost``. A sink not closed is closed at interpreter exit (``atexit``).

    Counters: ``sent``, ``accepted``, ``rejected`` (the endpoint's per-event verdicts),
    ``retries``, ``dropped``, ``lost``."""

    MAX_BATCH = 1000
    """``analytics.ingest.MAX_BATCH_EVENTS`` (a test holds them equal): not imported, as that
    module loads the validators, and a sink is imported with the analytics package."""

    def __init__(
        self,
        url: str,
        key: str | None = None,
        *,
        timeout: float = 10.0,
        max_buffered: int = 10_000,
        min_backoff: float = 0.1,
        max_backoff: float = 30.0,
    ) -> None:
        self.url = url
        self.key = key
        self.timeout = timeout
        self.max_buffered = max_buffered
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.sent = self.accepted = self.rejected = 0
        self.retries = self.dropped = self.lost = 0
        self._queue: list[dict[str, Any]] = []
        self._wake = threading.Condition()
        self._closing = False
        self._stopped = False
        self._worker = threading.Thread(target=self._run, name="ingest-post", daemon=True)
        self._worker.start()
        atexit.register(self.close)

    def __call__(self, event: Event) -> None:
        with self._wake:
            if self._closing or len(self._queue) >= self.max_buffered:
                self.dropped += 1
                return
            self._queue.append(dict(event))
            self._wake.notify()

    def close(self) -> None:
        atexit.unregister(self.close)
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._worker.join(self.timeout)
        with self._wake:
            self._stopped = True
            self._wake.notify()
            if self._worker.is_alive() or self._queue:
                self.lost += len(self._queue)  # the batch in flight is still at its head
                self._queue.clear()

    def _run(self) -> None:
        backoff = self.min_backoff
        while True:
            with self._wake:
                while not self._queue and not self._closing:
                    self._wake.wait()
                if not self._queue or self._stopped:
                    return
                batch = self._queue[: self.MAX_BATCH]
            wait = self._post(batch)
            with self._wake:
                if wait is None:
                    del self._queue[: len(batch)]
                    backoff = self.min_backoff
                    continue
                self.retries += 1
                pause = wait if wait >= 0 else backoff * random.uniform(0.5, 1.0)
                backoff = min(backoff * 2, self.max_backoff)
                if not self._stopped:
                    self._wake.wait_for(lambda: self._stopped, min(pause, self.max_backoff))

    def _post(self, batch: list[dict[str, Any]]) -> float | None:
        """One POST: ``None`` when the endpoint answered for the batch (accepted, partly
        rejected, or refused for good), else how long to wait before sending it again (``-1``:
        the backoff's turn)."""
        import urllib.error  # noqa: PLC0415  (only when events are posted)
        import urllib.request  # noqa: PLC0415

        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        body = orjson.dumps({"events": batch})
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                status, retry_after, text = answer.status, None, answer.read()
        except urllib.error.HTTPError as exc:
            status, retry_after, text = exc.code, exc.headers.get("Retry-After"), b""
        except (OSError, ValueError) as exc:
            logger.warning(
                "could not post %d events to %s: %s; retrying", len(batch), self.url, exc
            )
            return -1.0
        if status in (200, 207):
            self._count_answer(batch, text)
            return None
        if status in RETRYABLE_STATUSES:
            wait = retry_after_seconds(retry_after)
            return -1.0 if wait is None else wait
        logger.warning("%s refused a batch of %d events: HTTP %d", self.url, len(batch), status)
        self.lost += len(batch)
        return None

    def _count_answer(self, batch: list[dict[str, Any]], text: bytes) -> None:
        try:
            answer = orjson.loads(text)
        except orjson.JSONDecodeError:
            answer = None
        counts = answer if isinstance(answer, dict) else {}
        accepted, rejected = counts.get("accepted"), counts.get("rejected")
        self.sent += len(batch)
        self.accepted += accepted if isinstance(accepted, int) else len(batch)
        self.rejected += rejected if isinstance(rejected, int) else 0
