"""The probe server with one peer's instrumentation, in a process of its own.

``python -m benchmarks.peers.serve PEER FRAMEWORK TRANSPORT RECORDS``

Everything the peer records is written to ``RECORDS`` (JSON lines) the moment it is recorded: a
span when it ends, an event when the peer hands it to its exporter, an envelope when Sentry's
transport would send it. So nothing depends on a clean shutdown, and no peer reaches the network:
spans go to an in-process exporter, Sentry to a transport that keeps envelopes, AgentCat to an
exporter object of ours, logfire is configured with ``send_to_logfire=False``.

The first lines say how the setup went (``setup``: ``ok`` or the error), and with
``TRANSPORT=http`` the loopback port the server listens on (``listening``), which the driver waits
for. A peer whose installation or ``instrument()`` raises is recorded as ``setup`` failed, and the
server then runs without it, so the calls still show what a user would see.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

from benchmarks.peers.probe import build_server

Record = dict[str, Any]


class Records:
    """Appends one JSON line per record to a file and flushes it (thread-safe)."""

    def __init__(self, path: str) -> None:
        # Open for the life of the process: every record is flushed as it is written.
        self._handle = Path(path).open("a", encoding="utf-8")  # noqa: SIM115
        self._lock = threading.Lock()

    def write(self, record: Record) -> None:
        line = json.dumps(record, default=repr, ensure_ascii=False)
        with self._lock:
            self._handle.write(line + "\n")
            self._handle.flush()


# --- OpenTelemetry: spans to the records file ---------------------------------------------------


def span_record(span: Any) -> Record:
    """A finished SDK span as a record: name, kind, attributes, status, events."""
    return {
        "kind": "span",
        "name": span.name,
        "span_kind": span.kind.name,
        "scope": getattr(span.instrumentation_scope, "name", None),
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "description": span.status.description,
        "events": [
            {"name": event.name, "attributes": dict(event.attributes or {})}
            for event in span.events
        ],
    }


def span_exporter(records: Records) -> Any:
    export = import_module("opentelemetry.sdk.trace.export")

    base: Any = export.SpanExporter

    class RecordsExporter(base):  # type: ignore[misc]
        def export(self, spans: Sequence[Any]) -> Any:
            for span in spans:
                records.write(span_record(span))
            return export.SpanExportResult.SUCCESS

    return RecordsExporter()


def tracer_provider(records: Records, *, set_global: bool = True) -> Any:
    """An SDK tracer provider writing every span to the records, set as the global one (as a
    user's ``configure`` step does)."""
    sdk = import_module("opentelemetry.sdk.trace")
    export = import_module("opentelemetry.sdk.trace.export")
    provider = sdk.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(span_exporter(records)))
    if set_global:
        import_module("opentelemetry.trace").set_tracer_provider(provider)
    return provider


# --- the peers: ``before`` runs before the server is built, ``attach`` after -------------------


def _nothing(server: Any, records: Records) -> None:
    return None


def otel_before(records: Records) -> None:
    tracer_provider(records)


def logfire_before(records: Records) -> None:
    logfire = import_module("logfire")
    export = import_module("opentelemetry.sdk.trace.export")
    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name="probe",
        additional_span_processors=[export.SimpleSpanProcessor(span_exporter(records))],
    )
    logfire.instrument_mcp()


def sentry_before(records: Records) -> None:
    sentry_sdk = import_module("sentry_sdk")
    transport_module = import_module("sentry_sdk.transport")
    integration = import_module("sentry_sdk.integrations.mcp").MCPIntegration

    base: Any = transport_module.Transport

    class KeepingTransport(base):  # type: ignore[misc]
        """Keeps each envelope as a record instead of sending it."""

        def capture_envelope(self, envelope: Any) -> None:
            for item in envelope.items:
                payload = item.payload.json if item.payload.json is not None else None
                records.write({"kind": "sentry", "type": item.type, "payload": payload})

    sentry_sdk.init(
        # A DSN is needed for the client to be active; the transport never sends anything.
        dsn="https://public@sentry.invalid/1",
        transport=KeepingTransport,
        traces_sample_rate=1.0,
        integrations=[integration()],
    )


def traceloop_before(records: Records) -> None:
    tracer_provider(records)
    import_module("opentelemetry.instrumentation.mcp").McpInstrumentor().instrument()


def openinference_before(records: Records) -> None:
    provider = tracer_provider(records)
    instrumentor = import_module("openinference.instrumentation.mcp").MCPInstrumentor()
    instrumentor.instrument(tracer_provider=provider)


def opentel_mcp_attach(server: Any, records: Records) -> None:
    import_module("opentel_mcp").instrument_mcp_server(server)


def agentcat_attach(server: Any, records: Records) -> None:
    agentcat = import_module("agentcat")
    queue = import_module("agentcat.modules.event_queue")
    telemetry = import_module("agentcat.modules.telemetry")

    base: Any = telemetry.TelemetryManager

    class KeepingManager(base):  # type: ignore[misc]
        """Stands where AgentCat hands each finished event to its exporters, and keeps it."""

        def __init__(self) -> None:
            super().__init__({})

        def export(self, event: Any) -> None:
            records.write({"kind": "agentcat", "event": event.model_dump(mode="json")})

        def get_exporter_count(self) -> int:
            return 1

    options = agentcat.AgentCatOptions(
        # An exporter lets AgentCat run without a project id (no AgentCat API); the manager it
        # builds is replaced by KeepingManager below, so no OTLP request is ever made.
        exporters={"kept": {"type": "otlp", "endpoint": "http://127.0.0.1:9/v1/traces"}},
        disable_diagnostics=True,
    )
    agentcat.track(server, None, options)
    queue.set_telemetry_manager(KeepingManager())


def toolcall_memory_attach(server: Any, records: Records) -> None:
    from toolcall_spec.analytics.sinks import MemorySink  # noqa: PLC0415
    from toolcall_spec.mcp import instrument  # noqa: PLC0415

    memory = MemorySink()

    def sink(event: Mapping[str, Any]) -> None:
        memory(event)
        records.write({"kind": "toolcall_event", "event": memory.events[-1]})

    instrument(server, sink)


def toolcall_otel_attach(server: Any, records: Records) -> None:
    from toolcall_spec.analytics.otel import OpenTelemetrySink  # noqa: PLC0415
    from toolcall_spec.mcp import instrument  # noqa: PLC0415

    instrument(server, OpenTelemetrySink())


PEERS: dict[str, tuple[Callable[[Records], None] | None, Callable[[Any, Records], None]]] = {
    "bare": (None, _nothing),
    "otel": (otel_before, _nothing),
    "logfire": (logfire_before, _nothing),
    "sentry": (sentry_before, _nothing),
    "traceloop": (traceloop_before, _nothing),
    "openinference": (openinference_before, _nothing),
    "opentel-mcp": (otel_before, opentel_mcp_attach),
    "agentcat": (None, agentcat_attach),
    "toolcall-spec-memory": (None, toolcall_memory_attach),
    "toolcall-spec-otel": (otel_before, toolcall_otel_attach),
}
"""Each peer's setup, in the order a user's program runs it: the global part before the server
is built (a tracer provider, ``logfire.configure``, ``sentry_sdk.init``, an instrumentor), the
part that takes the server after. ``bare`` is the server without any: the ground truth of what
the client receives (tests/mcp_boundary/test_peers_probe.py), not part of the comparison."""


def _describe(exc: BaseException) -> str:
    """The exception and where it was raised, without this machine's paths (the text goes into
    the docs' JSON): ``.../site-packages/mcp/x.py`` is written ``mcp/x.py``."""
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {last[0].filename.rsplit('/', 2)[-1]}:{last[0].lineno})" if last else ""
    return re.sub(r"[^\s'\"]*/site-packages/", "", f"{type(exc).__name__}: {exc}{where}")


class _KeepWarnings(logging.Handler):
    """Keeps what a peer logs at WARNING or above while it sets up (e.g. "not a supported
    server; nothing was instrumented"): the peer's own word on what it did."""

    def __init__(self, records: Records) -> None:
        super().__init__(logging.WARNING)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        message = f"{record.name}: {record.getMessage()}"[:300]
        self.records.write({"kind": "warning", "message": message})


def set_up(peer: str, framework: str, records: Records) -> Any:
    """The probe server with ``peer`` attached; a failing step is recorded, never raised."""
    before, attach = PEERS[peer]
    handler = _KeepWarnings(records)
    logging.getLogger().addHandler(handler)
    try:
        return _set_up(before, attach, framework, records)
    finally:
        logging.getLogger().removeHandler(handler)


def _set_up(
    before: Callable[[Records], None] | None,
    attach: Callable[[Any, Records], None],
    framework: str,
    records: Records,
) -> Any:
    server: Any = None
    setup: Record = {"kind": "setup", "ok": True}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stage = "before"
        try:
            if before is not None:
                before(records)
            stage = "build"
            server = build_server(framework)
            stage = "attach"
            attach(server, records)
        except Exception as exc:
            setup = {"kind": "setup", "ok": False, "stage": stage, "error": _describe(exc)}
    for warning in caught:
        if issubclass(warning.category, (UserWarning, DeprecationWarning)):
            records.write({"kind": "warning", "message": str(warning.message)[:300]})
    records.write(setup)
    # After a failed setup the calls still run, on the server as the failure left it (or a
    # fresh one when it was never built), so the client's side is measured all the same.
    return server if server is not None else build_server(framework)


# --- serving ------------------------------------------------------------------------------------


def loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before uvicorn starts: a client that connects early waits in the backlog.
    sock.listen(128)
    return sock


def http_app(server: Any, framework: str) -> Any:
    if framework == "fastmcp":
        return server.http_app(path="/mcp")
    return server.streamable_http_app(streamable_http_path="/mcp")


def serve_http(server: Any, framework: str, records: Records) -> None:
    import anyio  # noqa: PLC0415
    import uvicorn  # noqa: PLC0415

    sock = loopback_socket()
    config = uvicorn.Config(http_app(server, framework), log_level="warning", lifespan="on")
    records.write({"kind": "listening", "port": sock.getsockname()[1]})
    anyio.run(uvicorn.Server(config).serve, [sock])


def serve_stdio(server: Any, framework: str) -> None:
    import anyio  # noqa: PLC0415

    anyio.run(server.run_stdio_async)


def main(argv: list[str]) -> None:
    peer, framework, transport, path = argv
    # The frameworks log every failed call with a traceback on stderr; the driver keeps stderr
    # in a file, and the records say what happened.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    records = Records(path)
    server = set_up(peer, framework, records)
    if transport == "http":
        serve_http(server, framework, records)
    else:
        serve_stdio(server, framework)


if __name__ == "__main__":
    main(sys.argv[1:])
