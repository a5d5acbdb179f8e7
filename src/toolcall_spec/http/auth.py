"""Bearer-token authentication: with a token configured, every path except discovery needs
``Authorization: Bearer <token>``. The comparison runs in constant time, and the check comes before
routing, so an unauthenticated client learns nothing (not even which run ids exist)."""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.responses import error_response
from toolcall_spec.http.server import is_loopback

PUBLIC_PATHS = frozenset({"/.well-known/openwop"})


def startup_refusal(token: str | None, host: str, *, insecure_no_auth: bool = False) -> str | None:
    """Why a server must not start with this token on this address, or ``None``: an empty token
    (flag or environment) is a mistake, never "no auth"; and without a token only loopback is
    served, unless the operator says ``--insecure-no-auth``."""
    if token is not None and not token.strip():
        return (
            "the token must not be empty (--token or TOOLCALL_SPEC_TOKEN); give a token, or "
            "leave both unset to serve loopback without auth"
        )
    if token is None and not is_loopback(host) and not insecure_no_auth:
        return (
            f"refusing to serve {host} without a token: it is not a loopback address, so anyone "
            "who can reach it could run suites; give --token (or TOOLCALL_SPEC_TOKEN), or "
            "--insecure-no-auth to serve it open anyway"
        )
    return None


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def token_matches(presented: str | None, expected: str) -> bool:
    """Constant-time comparison (``hmac.compare_digest``); a missing token never matches."""
    if presented is None:
        return False
    return hmac.compare_digest(presented.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


class BearerAuth:
    """ASGI middleware answering 401 (flat envelope, ``WWW-Authenticate: Bearer``) to any request
    outside ``public_paths`` whose bearer token does not match."""

    def __init__(self, app: ASGIApp, *, token: str, public_paths: Iterable[str] = PUBLIC_PATHS):
        if not token:
            raise ValueError("the bearer token must not be empty")
        self.app = app
        self.token = token
        self.public_paths = frozenset(public_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _app_path(scope) in self.public_paths:
            await self.app(scope, receive, send)
            return
        if token_matches(bearer_token(_header(scope, b"authorization")), self.token):
            await self.app(scope, receive, send)
            return
        error = ApiError(
            401,
            "unauthenticated",
            "this host needs Authorization: Bearer <token>; the token was missing or wrong",
            headers={"WWW-Authenticate": 'Bearer realm="openwop"'},
        )
        await error_response(error)(scope, receive, send)


def _app_path(scope: Scope) -> str:
    """The path below the app's mount point (``root_path``), as routes see it."""
    path: str = scope["path"]
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None
