"""A live MCP server whose calls carry secrets, run as a script by the secrets tests
(``python THIS_FILE``, stdio): ``sign_in`` takes a password and an API key and answers with a
fresh bearer token (a failure for a wrong password), ``fetch`` takes headers with credentials.
Each answer differs from run to run, as a real token does."""

from __future__ import annotations

import secrets

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

server = MCPServer("secrets")


@server.tool()
def sign_in(user: str, password: str, apiKey: str) -> CallToolResult:  # noqa: N803
    """A session token for ``user``; ``isError`` when the password is wrong."""
    if not password.startswith("correct"):
        text = f"wrong password for {user}"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    token = secrets.token_urlsafe(24)
    text = f"signed in {user} (key {apiKey[:3]}...): use Authorization: Bearer {token}"
    return CallToolResult(content=[TextContent(type="text", text=text)])


@server.tool()
def fetch(url: str, headers: dict[str, str]) -> str:
    """What a GET of ``url`` with ``headers`` would answer (the headers' names only)."""
    return f"fetched {url} with {', '.join(sorted(headers))}"


if __name__ == "__main__":
    server.run()
