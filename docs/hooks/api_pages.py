"""Python API pages (mkdocstrings), one per public module or subpackage of ``toolcall_spec``,
discovered when the site is built: a package that lands (replay, analytics, conformance, the HTTP
host) gets its page without anyone editing the docs."""

from __future__ import annotations

import ast
import pkgutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from markdown_text import cell

API_DIR = "api"
PACKAGE = "toolcall_spec"

FIRST = ("rules", "validation", "problems", "paths", "catalog", "loading", "requirements")
"""The core modules, in reading order; every other module follows alphabetically."""

EXCLUDED = frozenset({"models", "cli"})
"""Documented elsewhere: the generated models by the schema reference, the CLI by its page."""


@dataclass(frozen=True, slots=True)
class ApiModule:
    name: str
    summary: str

    @property
    def qualified(self) -> str:
        return f"{PACKAGE}.{self.name}"

    @property
    def uri(self) -> str:
        return f"{API_DIR}/{self.name}.md"


def discover(package_dir: Path) -> list[ApiModule]:
    """The public modules and subpackages below ``package_dir``, core modules first. Read without
    importing, so a module that needs an optional extra still gets its page."""
    found = {
        info.name: ApiModule(info.name, _summary(package_dir, info.name, info.ispkg))
        for info in pkgutil.iter_modules([str(package_dir)])
        if not info.name.startswith("_") and info.name not in EXCLUDED
    }
    ordered = [found.pop(name) for name in FIRST if name in found]
    return ordered + sorted(found.values(), key=lambda m: m.name)


def _summary(package_dir: Path, name: str, is_package: bool) -> str:
    source = package_dir / name / "__init__.py" if is_package else package_dir / f"{name}.py"
    try:
        doc = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8")))
    except (OSError, SyntaxError):
        doc = None
    return " ".join((doc or "").split("\n\n")[0].split())


def module_page(module: ApiModule) -> str:
    return f"# `{module.qualified}`\n\n::: {module.qualified}\n"


def index_page(modules: Iterable[ApiModule]) -> str:
    lines = [
        "# Python API",
        "",
        f"The public modules of `{PACKAGE}`, documented from their docstrings and type hints. "
        "The generated Pydantic models (`toolcall_spec.models`) follow the "
        "[schemas](../reference/schemas/index.md) member for member; the command line has its "
        "own [reference](../reference/cli.md).",
        "",
        "| Module | What it is for |",
        "| --- | --- |",
    ]
    for module in modules:
        lines.append(f"| [`{module.qualified}`]({module.name}.md) | {cell(module.summary)} |")
    return "\n".join([*lines, ""])
