"""A hand-written MCP server over streamable HTTP for the pairing tests of ``toolcall-spec record
--upstream`` (no SDK lets a test choose when each answer leaves): ``python raw_http_mcp_server.py
PORT [sessions]``. With ``sessions``, ``initialize`` gets an ``Mcp-Session-Id``; without,
everything is session-less (a stateless server).

- ``initialize`` / ``tools/list``: answered at once;
- ``tools/call`` ``echo`` ``{"tag": T, "delay": S}``: answered after S seconds with the text T
  (``structuredContent`` ``{"tag": T}``), so answers leave in an order the test chooses;
- ``tools/call`` ``big`` ``{"size": N}``: a text of N bytes;
- ``tools/call`` ``die``: the process exits without answering;
- a POST answers with JSON (one object, or a list for a batch) unless one of its calls says
  ``"sse": true``: then an event stream, one event per answer, in the order they are ready.
- a POST of notifications and responses only: 202.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "big", "die")]
SESSIONS = "sessions" in sys.argv[2:]


async def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, rid = request.get("method"), request.get("id")
    params = request.get("params") or {}
    if method == "initialize":
        result: Any = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-http", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "die":
            os._exit(9)
        if name == "big":
            result = {"content": [{"type": "text", "text": "x" * int(args["size"])}]}
        else:
            await asyncio.sleep(float(args.get("delay", 0)))
            tag = args.get("tag")
            result = {
                "content": [{"type": "text", "text": json.dumps(tag)}],
                "structuredContent": {"tag": tag},
            }
    else:
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no method"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await respond(send, 405, b"", "text/plain")
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    parsed = json.loads(body)
    items = parsed if isinstance(parsed, list) else [parsed]
    requests = [r for r in items if isinstance(r, dict) and "method" in r and "id" in r]
    if not requests:
        await respond(send, 202, b"", "text/plain")
        return
    headers: list[tuple[bytes, bytes]] = []
    if SESSIONS and any(r["method"] == "initialize" for r in requests):
        headers.append((b"mcp-session-id", uuid.uuid4().hex.encode()))
    if any(((r.get("params") or {}).get("arguments") or {}).get("sse") for r in requests):
        await stream(send, requests, headers)
        return
    answers = await asyncio.gather(*(answer(r) for r in requests))
    out = answers if isinstance(parsed, list) else answers[0]
    await respond(send, 200, json.dumps(out).encode(), "application/json", headers)


async def stream(send: Any, requests: list[dict[str, Any]], headers: list[Any]) -> None:
    start_headers = [(b"content-type", b"text/event-stream"), *headers]
    await send({"type": "http.response.start", "status": 200, "headers": start_headers})
    for ready in asyncio.as_completed([answer(r) for r in requests]):
        event = b"event: message\ndata: " + json.dumps(await ready).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": event, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def respond(
    send: Any,
    status: int,
    body: bytes,
    content_type: str,
    headers: list[Any] = (),  # type: ignore[assignment]
) -> None:
    all_headers = [(b"content-type", content_type.encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": all_headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
