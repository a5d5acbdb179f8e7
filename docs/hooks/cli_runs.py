"""Run ``toolcall-spec`` in process while the site is built, so that every command output shown in
the docs is the real output of the current code, never a pasted one that can go stale."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from markdown_text import fenced

DIRECTIVE = re.compile(r"^<!-- run: toolcall-spec (?P<args>.+?) -->$", re.MULTILINE)
"""A line ``<!-- run: toolcall-spec validate examples/x.json -->`` in a page becomes a console
block with the command and its output."""


@dataclass(frozen=True, slots=True)
class Run:
    command: str
    output: str
    exit_code: int


def run_cli(args: list[str], root: Path) -> Run:
    """Run the CLI with ``args``; an argument naming a file below ``root`` is passed as an
    absolute path and shown as written."""
    from toolcall_spec.cli import main  # noqa: PLC0415 (imports every subcommand)

    real = [str(root / a) if (root / a).is_file() else a for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exit_code = main(real)
        except SystemExit as stop:  # argparse exits on usage errors and --help
            exit_code = stop.code if isinstance(stop.code, int) else 2
    output = out.getvalue() + err.getvalue()
    for shown, passed in zip(args, real, strict=True):
        if shown != passed:
            output = output.replace(passed, shown)
    return Run(shlex.join(["toolcall-spec", *args]), output.rstrip("\n"), exit_code)


def expand(markdown: str, root: Path) -> str:
    """Replace every run directive with a console block of the real command and output."""

    def block(match: re.Match[str]) -> str:
        run = run_cli(shlex.split(match["args"]), root)
        console = fenced(f"$ {run.command}\n{run.output}", "console")
        return f"{console}\n\nExit status {run.exit_code}."

    return DIRECTIVE.sub(block, markdown)
