"""Shell completion in the real shells: the script ``toolcall-spec completion SHELL`` prints,
loaded into bash, zsh and fish, completes subcommands and options. Locally a missing shell skips
with the reason; in CI (``CI`` set) it fails, since .ci/run installs them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = str(Path(sys.executable).parent)
"""Where this environment's ``toolcall-spec`` script is: the shells must find it on PATH."""


def shell(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is missing in CI: apt-get install {name}")
        pytest.skip(f"{name} is not installed")
    return found


def run_in(shell_path: str, script: str) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [shell_path, "-c", script], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


BASH_COMPLETE = """
eval "$(toolcall-spec completion bash)"
COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<< "$COMP_LINE"
{extra}
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_python_argcomplete toolcall-spec "${{COMP_WORDS[-1]}}" "${{COMP_WORDS[-2]}}"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""


def bash_candidates(line: str) -> set[str]:
    extra = 'COMP_WORDS+=("")' if line.endswith(" ") else ""
    out = run_in(shell("bash"), BASH_COMPLETE.format(line=line, extra=extra))
    return {word.strip() for word in out.splitlines() if word.strip()}


def test_bash_completes_subcommands_options_and_choices() -> None:
    assert bash_candidates("toolcall-spec val") == {"validate"}
    assert {"conformance", "completion"} <= bash_candidates("toolcall-spec co")
    assert "--format" in bash_candidates("toolcall-spec conformance --fo")
    assert {"text", "json", "junit"} <= bash_candidates("toolcall-spec conformance --format ")


def test_fish_completes_subcommands_with_their_summary() -> None:
    out = run_in(
        shell("fish"),
        'toolcall-spec completion fish | source; complete -C "toolcall-spec val"',
    )
    assert out.startswith("validate\tvalidate JSON or JSONL documents")
    options = run_in(
        shell("fish"),
        'toolcall-spec completion fish | source; complete -C "toolcall-spec schema --bun"',
    )
    assert options.split("\t")[0].strip() == "--bundle"


def test_zsh_registers_the_completion_function() -> None:
    out = run_in(
        shell("zsh"),
        'autoload -U compinit; compinit -u; eval "$(toolcall-spec completion zsh)"; '
        'print -r -- "$_comps[toolcall-spec]"',
    )
    assert out.strip() == "_python_argcomplete"


def test_an_unknown_shell_is_a_usage_error() -> None:
    from support.cli import run_cli

    run = run_cli("completion", "tcsh")
    assert run.returncode == 2
    assert "bash" in run.stderr
    assert "fish" in run.stderr
