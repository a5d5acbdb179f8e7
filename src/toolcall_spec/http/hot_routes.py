"""The requests every client makes, handed straight to their endpoints: starlette's exception
middleware, router and endpoint wrapper cost about as much per request as a small run's check
(the host: ``POST /runs`` and ``GET /runs/{runId}/...``, the long poll) or a third of what the
ingest endpoint's answer costs besides checking the batch (``POST /v1/events``, ``/v1/traces``).
Everything else, and any request these rules are not sure of, goes through starlette as before.

It sits inside the app's other middleware (the host's bearer-token check) and starlette's
server-error middleware, so authentication and the 500 envelope are unchanged; an ``ApiError``
gets the same envelope the app's exception handler writes. Routing is the router's own: an exact
route is a method and a path; a prefixed route (``/runs/{rest:path}``) matches every path under
its prefix except one with a line break in it, which starlette's pattern does not match. A
mounted app (``root_path``) goes through the router."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.responses import error_response

Endpoint = Callable[[Request], Awaitable[Response]]
Routes = Mapping[tuple[str, str], Endpoint]
"""(method, path or prefix) -> endpoint."""


class HotRoutes:
    """ASGI middleware: the endpoints of ``exact`` routes (method and path) and of ``prefixed``
    routes (method and a path prefix) called without the router."""

    def __init__(self, app: ASGIApp, *, exact: Routes, prefixed: Routes | None = None) -> None:
        self.app = app
        self.exact = dict(exact)
        self.prefixed = dict(prefixed or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self._endpoint(scope)
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        try:
            response = await endpoint(Request(scope, receive))
        except ApiError as error:
            response = error_response(error)
        await response(scope, receive, send)

    def _endpoint(self, scope: Scope) -> Endpoint | None:
        if scope["type"] != "http" or scope.get("root_path"):
            return None
        method, path = scope["method"], scope["path"]
        endpoint = self.exact.get((method, path))
        if endpoint is not None or "\n" in path:
            return endpoint
        for (wanted, prefix), found in self.prefixed.items():
            if method == wanted and path.startswith(prefix):
                return found
        return None
