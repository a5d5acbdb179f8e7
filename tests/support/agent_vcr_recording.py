"""Records one MCP stdio session with agent-vcr's own recorder (``agent_vcr.MCPRecorder``), the
way it works on this machine: ``python THIS_FILE OUT.vcr SERVER CMD...``; the MCP client launches
this script as its server.

Why not ``agent-vcr record --transport stdio``: that command prints its banner on stdout (the MCP
wire), and its recorder reads the client with ``sys.stdin.buffer.read(4096)``, which blocks until
4096 bytes or EOF arrive, so a client waiting for its ``initialize`` answer deadlocks. The
recorder's ``client_stdin_fd`` path (used by its ``--demo``) reads with ``os.read`` instead; this
script relays its stdin to such a pipe and, when the client closes it, stops the recorder, which
saves the cassette. agent-vcr records only sessions that start with ``initialize``: the client
must use the handshake (``mode="legacy"``), not the 2026-07-28 discovery.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from agent_vcr.recorder import MCPRecorder

ANSWER_GRACE_SECONDS = 0.5
"""After the client closed its side, how long answers still in flight may take to be recorded."""


def relay(source: int, target: int, closed: threading.Event) -> None:
    while chunk := os.read(source, 65_536):
        os.write(target, chunk)
    os.close(target)
    closed.set()


async def main(out: str, command: list[str]) -> None:
    read_end, write_end = os.pipe()
    recorder = MCPRecorder(
        transport="stdio",
        server_command=command[0],
        server_args=command[1:],
        server_env=dict(os.environ),
        client_stdin_fd=read_end,
    )
    closed = threading.Event()
    await recorder.start()
    threading.Thread(target=relay, args=(0, write_end, closed), daemon=True).start()
    while not closed.is_set():
        await asyncio.sleep(0.05)
    await asyncio.sleep(ANSWER_GRACE_SECONDS)
    await recorder.stop(out)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
