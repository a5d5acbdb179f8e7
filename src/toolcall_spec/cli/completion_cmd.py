"""``toolcall-spec completion SHELL``: the script that makes SHELL complete subcommands, options
and their values (argcomplete). Load it once per shell, or install it:

- bash: ``eval "$(toolcall-spec completion bash)"`` (in ~/.bashrc)
- zsh: ``eval "$(toolcall-spec completion zsh)"`` (in ~/.zshrc)
- fish: ``toolcall-spec completion fish | source`` (in ~/.config/fish/config.fish)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

SHELLS = ("bash", "zsh", "fish")


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "completion",
        help="print the shell completion script for bash, zsh or fish",
        description="Print the completion script for SHELL. bash and zsh: "
        'eval "$(toolcall-spec completion bash)"; fish: toolcall-spec completion fish | source',
    )
    parser.add_argument("shell", choices=SHELLS, help="bash, zsh or fish")
    return "completion"


def run(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode  # noqa: PLC0415  (only here)

    sys.stdout.write(shellcode(["toolcall-spec"], shell=args.shell))
    return 0
