"""MkDocs hook: the layer diagram of the architecture page, drawn from the import contracts that
``lint-imports`` enforces (``[tool.importlinter]`` in pyproject.toml) every time the site is built,
so the picture cannot drift from the rule.

The page marks the place of the diagram with ``<!-- import contracts -->``; the hook puts there a
mermaid flowchart of the layers (one box per layer, top to bottom; siblings that may not import
each other side by side), then every contract in words, with a small flowchart of each forbidden
and independence contract (crossed dashed arrows: imports that must not exist). Every module
a layer names must also be named in the page's prose (in backticks), so a renamed or added module
fails the strict build until the words follow.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.hooks.toolcall_spec.architecture")

REPO = Path(__file__).resolve().parents[2]
PAGE_URI = "architecture.md"
MARKER = "<!-- import contracts -->"
ROW_LENGTH = 4
"""Boxes per row inside a layer of many modules."""

CONTRACT_WORDS = {
    "layers": "a higher layer may import a lower one, never the reverse",
    "forbidden": "the modules on the left never import those on the right, even indirectly",
    "independence": "none of these modules imports another, even indirectly",
    "acyclic_siblings": "no two modules of a package import each other, however indirectly",
}


@dataclass(frozen=True)
class Layer:
    modules: tuple[str, ...]
    independent: bool
    """``a | b``: the modules may not import each other; ``a : b``: they may."""


def read_contracts(pyproject: Path = REPO / "pyproject.toml") -> dict[str, Any]:
    """``[tool.importlinter]`` as lint-imports reads it."""
    if sys.version_info >= (3, 11):
        import tomllib  # noqa: PLC0415

        with pyproject.open("rb") as handle:
            config: dict[str, Any] = tomllib.load(handle)["tool"]["importlinter"]
        return config
    raise PluginError("the architecture page reads pyproject.toml with tomllib: Python 3.11+")


def parse_layer(text: str) -> Layer:
    """One entry of a layers contract: ``a``, ``a | b`` or ``a : b`` (``(a)``: optional)."""
    independent = ":" not in text
    parts = re.split(r"[|:]", text)
    return Layer(tuple(p.strip().strip("()") for p in parts), independent)


def layers_of(config: dict[str, Any]) -> list[Layer]:
    found = [c for c in config["contracts"] if c["type"] == "layers"]
    if len(found) != 1:
        raise PluginError(f"expected one layers contract in [tool.importlinter], got {len(found)}")
    return [parse_layer(text) for text in found[0]["layers"]]


def layers_diagram(config: dict[str, Any]) -> str:
    """The mermaid flowchart of the layers contract, from the top layer down."""
    layers = layers_of(config)
    lines = ["flowchart TB"]
    refs = [
        _draw_layer(lines, number, layer, lowest=number == len(layers) - 1)
        for number, layer in enumerate(layers)
    ]
    lines += [f"    {upper} -->|may import| {lower}" for upper, lower in pairwise(refs)]
    return "\n".join(lines)


def _draw_layer(lines: list[str], number: int, layer: Layer, lowest: bool) -> str:
    """Draw one layer; returns the id the arrows between layers attach to."""
    if len(layer.modules) == 1:
        lines.append(f'    {_node_id(layer.modules[0])}["{layer.modules[0]}"]')
        return _node_id(layer.modules[0])
    if layer.independent:
        title = "side by side: they do not import each other"
    else:
        title = f"{'kernel' if lowest else 'one layer'}: its modules may import each other"
    lines.append(f'    subgraph layer{number}["{title}"]')
    lines += [f'        {_node_id(m)}["{m}"]' for m in layer.modules]
    # Unlinked boxes share a row; invisible links start a new row every ROW_LENGTH boxes.
    lines += [
        f"        {_node_id(above)} ~~~ {_node_id(below)}"
        for above, below in zip(layer.modules, layer.modules[ROW_LENGTH:], strict=False)
    ]
    lines.append("    end")
    return f"layer{number}"


def contract_diagram(config: dict[str, Any], contract: dict[str, Any]) -> str | None:
    """A small flowchart of a forbidden or independence contract; ``None`` for other kinds."""
    root = f"{config['root_package']}."
    if contract["type"] == "forbidden":
        sources = [m.removeprefix(root) for m in contract["source_modules"]]
        targets = [m.removeprefix(root) for m in contract["forbidden_modules"]]
        lines = ["flowchart LR"]
        lines += [f'    {_node_id(m)}["{m}"]' for m in sources + targets]
        lines.append(
            f"    {' & '.join(map(_node_id, sources))} -. never .-x "
            f"{' & '.join(map(_node_id, targets))}"
        )
        return "\n".join(lines)
    if contract["type"] == "independence":
        modules = [m.removeprefix(root) for m in contract["modules"]]
        lines = ["flowchart LR"]
        lines += [f'    {_node_id(m)}["{m}"]' for m in modules]
        lines += [
            f"    {_node_id(first)} x-. never .-x {_node_id(second)}"
            for number, first in enumerate(modules)
            for second in modules[number + 1 :]
        ]
        return "\n".join(lines)
    return None


def _node_id(module: str) -> str:
    """A mermaid id for a module (prefixed: ``end`` and friends are mermaid keywords)."""
    return "m_" + module.replace(".", "_")


def contracts_section(config: dict[str, Any]) -> str:
    """The layer diagram, then every contract in words, with a diagram where one helps."""
    parts = [_fenced(layers_diagram(config))]
    for contract in config["contracts"]:
        words = CONTRACT_WORDS.get(contract["type"], contract["type"])
        parts.append(f"**{contract['name']}** (`{contract['id']}`, {contract['type']}): {words}.")
        drawing = contract_diagram(config, contract)
        if drawing is not None:
            parts.append(_fenced(drawing))
    return "\n\n".join(parts) + "\n"


def diagrams(config: dict[str, Any]) -> list[str]:
    """Every diagram the page gets, in order."""
    found = [contract_diagram(config, c) for c in config["contracts"]]
    return [layers_diagram(config), *(d for d in found if d is not None)]


def _fenced(drawing: str) -> str:
    return f"```mermaid\n{drawing}\n```"


def unnamed_modules(markdown: str, config: dict[str, Any]) -> list[str]:
    """The layer modules the page's prose never names in backticks."""
    named = set(re.findall(r"`(?:toolcall_spec\.)?([a-z_]+)`", markdown))
    modules = [m for layer in layers_of(config) for m in layer.modules]
    return [m for m in modules if m not in named]


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    if page.file.src_uri != PAGE_URI:
        return markdown
    contracts = read_contracts()
    if MARKER not in markdown:
        log.warning("%s: no %s marker for the layer diagram", PAGE_URI, MARKER)
        return markdown
    for module in unnamed_modules(markdown, contracts):
        log.warning("%s: the layer module %s is not described on the page", PAGE_URI, module)
    return markdown.replace(MARKER, contracts_section(contracts))
