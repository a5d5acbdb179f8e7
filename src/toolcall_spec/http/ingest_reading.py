"""What both ingest routes (``POST /v1/events``, ``POST /v1/traces``) do before they parse a
body: find the project of the key presented, and read the body within the limit, gzip included."""

from __future__ import annotations

import hmac
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import Any


class BodyTooLargeError(Exception):
    """The body (decompressed) passed the limit; the read stopped there."""


class BadEncodingError(Exception):
    """The body is not in the encoding its ``Content-Encoding`` names."""


def project_of(keys: Mapping[str, str], presented: str | None) -> str | None:
    """The project whose key was presented. Every key is compared, in constant time, so the
    answer time does not tell how much of a key was right."""
    if presented is None:
        return None
    found: str | None = None
    given = presented.encode("utf-8", "surrogatepass")
    for key, project in keys.items():
        if hmac.compare_digest(given, key.encode("utf-8")):
            found = project
    return found


async def read_limited(chunks: AsyncIterator[bytes], limit: int, gzipped: bool) -> bytes:
    """The body, read until its end or until it passes ``limit`` bytes (decompressed, for gzip; the
    compressed bytes too): then ``BodyTooLargeError``, without reading or inflating further."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS) if gzipped else None
    body = bytearray()
    received = 0
    async for chunk in chunks:
        received += len(chunk)
        if received > limit:  # compressed data can inflate to nothing (empty blocks): cap it too
            raise BodyTooLargeError
        if inflater is None:
            body += chunk
        else:
            body += _inflate(inflater, chunk, limit + 1 - len(body))
        if len(body) > limit:
            raise BodyTooLargeError
    if inflater is not None:
        if not inflater.eof:
            raise BadEncodingError("the gzip body ends early")
        if inflater.unused_data:
            raise BadEncodingError("bytes follow the end of the gzip body")
    return bytes(body)


def _inflate(inflater: Any, chunk: bytes, room: int) -> bytes:
    """At most ``room`` decompressed bytes of ``chunk`` (plus whatever the inflater still holds),
    so a compressed bomb never takes more than the limit in memory."""
    try:
        out: bytes = inflater.decompress(inflater.unconsumed_tail + chunk, room)
    except zlib.error as exc:
        raise BadEncodingError(f"the body is not valid gzip: {exc}") from None
    return out
