"""``mcp`` 1.x is not supported, and ``instrument`` says so: run against a real ``mcp`` 1.x by
``nox -s "mcp_matrix(mcp-1.x-refused)"`` (skipped where ``mcp`` 2.x is installed, as in
``nox -s test``)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.mcp import instrument

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
if not version("mcp").startswith("1."):
    pytest.skip("needs mcp 1.x (nox -s mcp_matrix runs it)", allow_module_level=True)

FRAMEWORK_COVERAGE = pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")


def mcp1_servers() -> list[object]:
    from importlib import import_module

    from mcp.server.lowlevel import Server

    # Only in mcp 1.x (imported by name: the type checker sees the mcp 2.x the project uses).
    fastmcp_1x = import_module("mcp.server.fastmcp")
    return [fastmcp_1x.FastMCP("old"), Server("old")]


@FRAMEWORK_COVERAGE
@pytest.mark.parametrize("index", [0, 1], ids=["mcp-1.x-FastMCP", "mcp-1.x-low-level-Server"])
def test_an_mcp_1x_server_is_refused_with_what_is_accepted(index: int) -> None:
    server = mcp1_servers()[index]
    with pytest.raises(TypeError) as refused:
        instrument(server, MemorySink())
    message = str(refused.value)
    assert "mcp 1.x is not supported" in message
    assert "mcp>=2.3,<3" in message
    assert "fastmcp>=4,<5" in message
