"""An in-memory MCP transport whose every JSON-RPC message also goes to the ``Recorder`` of
``toolcall-spec record``, the way its stdio proxy hands it each line: client messages before they
are sent, server messages before the client gets them. It lets a Hypothesis property record many
sessions in process; the tests of the real ``record`` command run it as a process."""

from __future__ import annotations

from types import TracebackType
from typing import Any

from mcp.client._memory import InMemoryTransport
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from toolcall_spec.mcp.record import Recorder

SESSION = "stdio"


def wire(item: SessionMessage) -> Any:
    return item.message.model_dump(mode="json", by_alias=True, exclude_none=True)


class _Read:
    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner, self.recorder = inner, recorder

    async def receive(self) -> Any:
        item = await self.inner.receive()
        if isinstance(item, SessionMessage):
            self.recorder.from_server(SESSION, wire(item))
        return item

    def __aiter__(self) -> _Read:
        return self

    async def __anext__(self) -> Any:
        from anyio import ClosedResourceError, EndOfStream

        try:
            return await self.receive()
        except (EndOfStream, ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _Read:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Write:
    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner, self.recorder = inner, recorder

    async def send(self, item: SessionMessage, /) -> None:
        self.recorder.from_client(SESSION, wire(item))
        await self.inner.send(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _Write:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class RecordingTransport:
    """``mcp.Client(RecordingTransport(server, recorder), mode="legacy")``."""

    def __init__(self, server: Server[Any], recorder: Recorder) -> None:
        self.inner = InMemoryTransport(server)
        self.recorder = recorder

    async def __aenter__(self) -> tuple[_Read, _Write]:
        read, write = await self.inner.__aenter__()
        self.recorder.open_session(SESSION)
        return _Read(read, self.recorder), _Write(write, self.recorder)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.inner.__aexit__(exc_type, exc, tb)
        finally:
            self.recorder.close()
