"""Node, npm and the TypeScript package (typescript/) for the tests in tests/typescript/.

Locally a test that needs node skips when node, npm or the package's dependencies
(``npm ci --prefix typescript``) are missing; under CI (``CI`` set) it fails instead, so a CI
machine without them cannot pass by skipping.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support.repo import REPO

TYPESCRIPT = REPO / "typescript"
"""The npm package @toolcall-spec/schemas."""
GENERATED = REPO / "generated" / "typescript"
"""What `nox -s generate` makes for TypeScript: index.d.ts, kinds.json, schemas/."""
JUDGE = Path(__file__).resolve().parents[1] / "typescript" / "judge.mjs"
ANSWER_TIMEOUT = 60.0
"""Seconds the judge may take for one document (the first compiles a schema)."""


def unavailable(reason: str) -> None:
    """Skip locally, fail under CI: a CI run must not pass by skipping the TypeScript tests."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the TypeScript tests must run)")
    pytest.skip(reason)


def tool(name: str) -> str:
    """The full path of a command (node, npm), or skip/fail when it is missing."""
    found = shutil.which(name)
    if found is None:
        unavailable(f"{name} is not installed (.ci/run installs npm, which brings node)")
    assert found is not None
    return found


def package_dependencies() -> Path:
    """typescript/node_modules with ajv, ajv-formats and tsc, or skip/fail when not installed."""
    modules = TYPESCRIPT / "node_modules"
    needed = [modules / "ajv", modules / "ajv-formats", modules / ".bin" / "tsc"]
    if not all(path.exists() for path in needed):
        unavailable("typescript/node_modules is missing: run `npm ci --prefix typescript`")
    return modules


def tsc() -> str:
    """The TypeScript compiler pinned in typescript/package-lock.json."""
    tool("node")
    return str(package_dependencies() / ".bin" / "tsc")


class NodeJudge:
    """One long-lived node process judging documents with @toolcall-spec/schemas: a JSON line
    in, a JSON line out (tests/typescript/judge.mjs)."""

    def __init__(self) -> None:
        package_dependencies()
        self._process = subprocess.Popen(
            [tool("node"), str(JUDGE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def judge(self, kind: str, document: Any) -> dict[str, Any]:
        """``{"valid", "toolError", "problems"}`` of ``document`` as a ``kind``."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None
        assert stdout is not None
        stdin.write(json.dumps({"kind": kind, "document": document}) + "\n")
        stdin.flush()
        # One answer per line sent, read before the next is sent: nothing waits in the
        # reader's buffer, so select on the pipe tells whether the answer has come.
        ready, _, _ = select.select([stdout], [], [], ANSWER_TIMEOUT)
        line = stdout.readline() if ready else ""
        if not line:
            raise RuntimeError(f"the node judge did not answer: {self._stderr()}")
        answer: dict[str, Any] = json.loads(line)
        if "failure" in answer:
            raise RuntimeError(f"the node judge failed: {answer['failure']}")
        return answer

    def _stderr(self) -> str:
        if self._process.poll() is None:
            return "(still running)"
        assert self._process.stderr is not None
        return self._process.stderr.read()[-2000:]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=10)


def run(
    command: list[str], cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end (bounded by ``timeout``), its output captured as text."""
    return subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


TS_SUPPORT = Path(__file__).resolve().parent / "ts"
"""The node scripts of the tests: the TypeScript probe server, the SDK client."""


def node_with_mcp_sdk() -> str:
    """node, with the MCP TypeScript SDK of the repository's package-lock.json installed
    (`npm ci` at the root), or skip/fail."""
    node = tool("node")
    if not (REPO / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        unavailable("the MCP TypeScript SDK is missing: run `npm ci` at the repository's root")
    return node


def ts_client(target: list[str] | str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The MCP TypeScript SDK client (support/ts/record_client.mjs) making ``calls``: it
    launches ``target`` (a command) over stdio, or connects to it (a URL) over streamable HTTP.
    What it received, one JSON value per call (the tool list first)."""
    spec = {"url": target} if isinstance(target, str) else {"command": target}
    script = str(TS_SUPPORT / "record_client.mjs")
    done = run(
        [node_with_mcp_sdk(), script, json.dumps({**spec, "calls": calls})], cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]
