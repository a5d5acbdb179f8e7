"""``mcp`` 1.x and ``fastmcp`` before 4 are not supported, and ``instrument`` says so: run against
a real ``mcp`` 1.x and ``fastmcp`` 3.x by ``nox -s "mcp_matrix(unsupported-refused)"`` (skipped
where the supported versions are installed, as in ``nox -s test``)."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

import pytest

from toolcall_spec.analytics.sinks import MemorySink
from toolcall_spec.mcp import instrument

FRAMEWORK_COVERAGE = pytest.mark.requirement("toolcall-spec.requirement.analytics.every-framework")


def installed(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


MCP_1X = pytest.mark.skipif(
    not installed("mcp").startswith("1."), reason="needs mcp 1.x (nox -s mcp_matrix runs it)"
)
FASTMCP_BEFORE_4 = pytest.mark.skipif(
    installed("fastmcp")[:2] not in {"2.", "3."},
    reason="needs fastmcp 2.x or 3.x (nox -s mcp_matrix runs it)",
)


def assert_refused(server: object, said: str) -> None:
    with pytest.raises(TypeError) as refused:
        instrument(server, MemorySink())
    message = str(refused.value)
    assert said in message
    assert "mcp>=2.3,<3" in message
    assert "fastmcp>=4,<5" in message


@FRAMEWORK_COVERAGE
@MCP_1X
def test_the_mcp_1x_fastmcp_is_refused_with_what_is_accepted() -> None:
    # Imported by name: only in mcp 1.x, and the type checker sees the mcp 2.x the project uses.
    fastmcp_1x = import_module("mcp.server.fastmcp")
    assert_refused(fastmcp_1x.FastMCP("old"), "mcp 1.x is not supported")


@FRAMEWORK_COVERAGE
@MCP_1X
def test_the_mcp_1x_low_level_server_is_refused_with_what_is_accepted() -> None:
    from mcp.server.lowlevel import Server

    assert_refused(Server("old"), "mcp 1.x is not supported")


@FRAMEWORK_COVERAGE
@FASTMCP_BEFORE_4
def test_a_fastmcp_before_4_server_is_refused_with_what_is_accepted() -> None:
    fastmcp = import_module("fastmcp")
    assert_refused(fastmcp.FastMCP("old"), f"of fastmcp {installed('fastmcp')}")
