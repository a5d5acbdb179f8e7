"""A client that goes away is not an error of the host.

When a client closes its connection before its request body is complete, or the connection
guard (``toolcall_spec.http.connections``) cuts a body off at its deadline and answers ``408``
itself, the endpoint reading the body gets starlette's ``ClientDisconnect``. Left alone it
reaches uvicorn, which logs "Exception in ASGI application" with a whole traceback: one
impatient token holder can fill a log with hundreds of them a second. ``ClientGone`` wraps the
app outermost and turns that case into at most one log line at INFO level; the client either has
its ``408`` already or is not there to read an answer, so nothing more is sent."""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger("toolcall_spec.http")


class ClientGone:
    """ASGI middleware: ``ClientDisconnect`` from anywhere inside ``app`` ends the request
    quietly with one INFO line naming the request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            logger.info(
                "%s %s: the client went away before its request was complete",
                scope.get("method", "?"),
                scope.get("path", "?"),
            )
