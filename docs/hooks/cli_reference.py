"""The CLI reference page, rendered at build time from the real argparse parser, so a new
subcommand (or a changed option) shows up without anyone editing the docs."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Mapping
from types import ModuleType

from markdown_text import cell, code, fenced

WIDTH = 100
"""Usage lines are wrapped at this width, whatever the terminal of the build machine."""


def cli_page(parser: argparse.ArgumentParser, handlers: Mapping[str, ModuleType]) -> str:
    """Markdown for the whole command line: the program, then each subcommand in parser order.
    ``handlers`` maps a subcommand to its module, whose docstring explains it further."""
    lines = [
        "# CLI reference",
        "",
        f"Generated from the `{parser.prog}` argument parser when the site is built.",
        "",
        parser.description or "",
        "",
        fenced(_usage(parser), "text"),
        "",
        *_arguments(parser, with_help=True),
    ]
    commands = _subcommands(parser)
    if commands:
        lines += ["| Command | What it does |", "| --- | --- |"]
        lines += [f"| [`{name}`](#{name}) | {cell(text)} |" for name, (_, text) in commands.items()]
        lines.append("")
    for name, (subparser, text) in commands.items():
        lines += [f"## `{parser.prog} {name}` {{#{name}}}", "", text, ""]
        doc = _details(handlers.get(name))
        if doc:
            lines += [doc, ""]
        lines += [fenced(_usage(subparser), "text"), "", *_arguments(subparser)]
        if subparser.epilog:  # the exit codes, as `--help` states them
            lines += [fenced(subparser.epilog, "text"), ""]
    return "\n".join(lines)


def _subcommands(
    parser: argparse.ArgumentParser,
) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    found: dict[str, tuple[argparse.ArgumentParser, str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, subparser in action.choices.items():
                found[name] = (subparser, _sentence(helps.get(name, "")))
    return found


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _arguments(parser: argparse.ArgumentParser, *, with_help: bool = False) -> list[str]:
    """The argument table; ``-h`` is listed once, for the program, not for every command."""
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._HelpAction) and not with_help:
            continue
        rows.append(f"| {_names(action)} | {cell(_meaning(action, parser.prog))} |")
    if not rows:
        return []
    return ["| Argument | Meaning |", "| --- | --- |", *rows, ""]


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(str(action.metavar or action.dest))
    metavar = ""
    if action.nargs != 0:
        metavar = " " + str(action.metavar or action.dest.upper())
    return ", ".join(code(option + metavar) for option in action.option_strings)


def _meaning(action: argparse.Action, prog: str) -> str:
    help_text = argparse.HelpFormatter(prog)._expand_help(action) if action.help else ""
    parts = [_sentence(help_text)]
    if action.choices is not None:
        parts.append("One of " + ", ".join(code(str(c)) for c in action.choices) + ".")
    if action.default not in (None, False, argparse.SUPPRESS) and action.option_strings:
        parts.append(f"Default: {code(str(action.default))}.")
    if action.required and action.option_strings:
        parts.append("Required.")
    if action.nargs in ("+", "*"):
        parts.append("Repeatable." if action.nargs == "+" else "Optional, repeatable.")
    return " ".join(p for p in parts if p)


def _sentence(text: str) -> str:
    """Help texts are lower-case phrases; in a table beside other sentences they read as one."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _details(module: ModuleType | None) -> str:
    """The module docstring after its first paragraph (which only repeats the usage)."""
    doc = inspect.getdoc(module) if module is not None else None
    if not doc:
        return ""
    _, _, rest = doc.partition("\n\n")
    return rest.strip()
