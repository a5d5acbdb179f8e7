"""The discovery document as served: canonical bytes, a strong ETag derived from them, version
negotiation on ``OpenWOP-Version`` and conditional requests (``If-None-Match`` -> 304)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from toolcall_spec.http.errors import invalid
from toolcall_spec.openwop_wire import PROTOCOL_VERSION, SUPPORTED_MAJOR, VERSION_HEADER

__all__ = ["VERSION_HEADER", "ServedDocument", "check_version"]


@dataclass(frozen=True, slots=True)
class ServedDocument:
    """A discovery document frozen at startup: what is advertised does not drift while serving."""

    body: bytes
    etag: str

    @classmethod
    def of(cls, document: dict[str, Any]) -> ServedDocument:
        body = orjson.dumps(document)
        return cls(body, f'"{hashlib.sha256(body).hexdigest()[:32]}"')

    def not_modified(self, if_none_match: str | None) -> bool:
        """Whether ``If-None-Match`` names this document (weak comparison, as RFC 9110 asks)."""
        if if_none_match is None:
            return False
        tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
        return "*" in tags or self.etag in tags


def check_version(requested: str | None) -> None:
    """Accept a missing header (the host serves its preferred major, 2) or any ``2.x``; anything
    else is a 400 naming the header, since this host has no other document to serve."""
    if requested is None:
        return
    major = requested.strip().split(".", 1)[0]
    if major != SUPPORTED_MAJOR:
        raise invalid(
            VERSION_HEADER,
            f"this host speaks OpenWOP {PROTOCOL_VERSION} only, not {requested!r}",
            supported=[PROTOCOL_VERSION],
        )
