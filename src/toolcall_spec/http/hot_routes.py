"""The two requests every run makes, ``POST /runs`` and ``GET /runs/{runId}/...`` (the long poll),
handed straight to their endpoints: starlette's exception middleware, router and endpoint wrapper
cost about as much per request as a small run's check. Everything else, and any request these
rules are not sure of, goes through starlette as before.

It sits inside the bearer-token check and starlette's server-error middleware, so authentication
and the 500 envelope are unchanged; an ``ApiError`` gets the same envelope the app's exception
handler writes. Routing is the router's own: ``POST /runs`` is exact, and ``/runs/{rest:path}``
matches every GET under ``/runs/`` (the endpoint reads the raw path itself) except a path with a
line break in it, which starlette's pattern does not match, and a mounted app (``root_path``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.responses import error_response
from toolcall_spec.openwop_wire import RUNS_PATH

Endpoint = Callable[[Request], Awaitable[Response]]

RUN_PREFIX = RUNS_PATH + "/"


class HotRoutes:
    """ASGI middleware: ``create_run`` and ``run_resource`` called without the router."""

    def __init__(self, app: ASGIApp, *, create_run: Endpoint, run_resource: Endpoint) -> None:
        self.app = app
        self.create_run = create_run
        self.run_resource = run_resource

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
        if method == "POST" and path == RUNS_PATH:
            return self.create_run
        if method == "GET" and path.startswith(RUN_PREFIX) and "\n" not in path:
            return self.run_resource
        return None
