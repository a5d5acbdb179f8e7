"""The process-wide OpenTelemetry tracer provider the ``mcp`` SDK traces with, shared by the tests.

OpenTelemetry lets a process set its global tracer provider once; a second ``set_tracer_provider``
is ignored. The SDK's spans (``mcp-python-sdk``) always go to that one provider, so every test
that wants them attaches its own span processor here for its duration (``sdk_spans_to``)
instead of setting a provider of its own. Under pytest-xdist each worker is its own process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import context, trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider


class Dispatch(SpanProcessor):
    """Hands every span to the processors attached at the time."""

    def __init__(self) -> None:
        self.attached: list[SpanProcessor] = []

    def on_start(self, span: Span, parent_context: context.Context | None = None) -> None:
        for processor in list(self.attached):
            processor.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        for processor in list(self.attached):
            processor.on_end(span)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return all(processor.force_flush(timeout_millis) for processor in list(self.attached))


@functools.cache
def global_dispatch() -> Dispatch:
    """The dispatcher behind the global tracer provider, set up on first use."""
    dispatch = Dispatch()
    provider = TracerProvider()
    provider.add_span_processor(dispatch)
    trace.set_tracer_provider(provider)
    return dispatch


@contextmanager
def sdk_spans_to(processor: SpanProcessor) -> Iterator[None]:
    """Every span the global provider ends meanwhile goes to ``processor`` too; the processor
    is flushed and shut down after."""
    dispatch = global_dispatch()
    dispatch.attached.append(processor)
    try:
        yield
    finally:
        dispatch.attached.remove(processor)
        processor.force_flush()
        processor.shutdown()
