"""Running the ``toolcall-spec`` command in a subprocess, as a user does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "toolcall_spec.cli"]


def run_cli(
    *args: str | Path,
    stdin: bytes | str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run one command to its end. Whatever the input, the command answers with a message and an
    exit code, never a traceback: every call checks that."""
    run = subprocess.run(
        [*CLI, *map(str, args)],
        input=stdin.decode() if isinstance(stdin, bytes) else stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run
