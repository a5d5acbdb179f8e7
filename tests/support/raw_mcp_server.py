"""A hand-written MCP server over stdio that misbehaves on request, for the malformed-traffic
tests of ``toolcall-spec record`` (no SDK would send these): ``python raw_mcp_server.py``.

- ``initialize`` / ``tools/list``: answered normally (protocol 2025-06-18);
- ``tools/call`` ``echo``: answered with its arguments as text; with ``"delay": S`` in them, S
  seconds later from a thread of its own, so answers leave in an order the test chooses;
- ``tools/call`` ``big`` ``{"size": N}``: a text of N bytes;
- ``tools/call`` ``ghost``: first a response to id ``"no-such-id"``, then a line that is not JSON,
  then the real answer;
- ``tools/call`` ``die``: the process exits without answering;
- ``tools/call`` ``deep``: a result whose ``structuredContent`` is nested ``depth`` levels deep
  (any JSON parser reads 300; orjson writes no more than 255);
- a line that is not JSON: answered with a JSON-RPC parse error (id null), as the spec says.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

WRITING = threading.Lock()


def send(message: object) -> None:
    with WRITING:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def answer(request: dict[str, Any]) -> None:
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        }
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "tools/list":
        names = ("echo", "ghost", "die", "deep", "big")
        tools = [{"name": n, "inputSchema": {"type": "object"}} for n in names]
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    elif method == "tools/call":
        name = request["params"]["name"]
        if name == "die":
            os._exit(7)
        if name == "deep":
            nested: Any = "bottom"
            for _ in range(request["params"]["arguments"]["depth"]):
                nested = [nested]
            result = {"content": [], "structuredContent": {"nested": nested}}
            send({"jsonrpc": "2.0", "id": rid, "result": result})
            return
        if name == "ghost":
            send({"jsonrpc": "2.0", "id": "no-such-id", "result": {"content": []}})
            sys.stdout.write("this line is not JSON\n")
            sys.stdout.flush()
        arguments = request["params"].get("arguments")
        text = "x" * int(arguments["size"]) if name == "big" else json.dumps(arguments)
        content = [{"type": "text", "text": text}]
        result = {"jsonrpc": "2.0", "id": rid, "result": {"content": content}}
        delay = float((arguments or {}).get("delay", 0)) if isinstance(arguments, dict) else 0
        if delay:
            threading.Timer(delay, send, (result,)).start()
        else:
            send(result)
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            send(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            )
            continue
        answer(request)


if __name__ == "__main__":
    main()
