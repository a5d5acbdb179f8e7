"""The architecture page's diagrams are drawn from the import contracts
(docs/hooks/architecture.py): every layer of [tool.importlinter] in its place, and a module the
page's words leave out is found."""

from __future__ import annotations

import copy
import re
import sys
from itertools import pairwise
from typing import Any

import pytest
from support.repo import REPO

sys.path.insert(0, str(REPO / "docs" / "hooks"))  # the docs build's modules, as mkdocs loads them
import architecture

PAGE = REPO / "docs" / architecture.PAGE_URI


@pytest.fixture
def contracts() -> dict[str, Any]:
    if sys.version_info < (3, 11):
        pytest.skip("the hook reads pyproject.toml with tomllib (Python 3.11+)")
    return architecture.read_contracts()


def arrows(drawing: str) -> list[tuple[str, str]]:
    return re.findall(r"^\s*(\S+) -->\|may import\| (\S+)$", drawing, re.MULTILINE)


def test_the_layers_are_drawn_top_down_in_the_order_of_the_contract(
    contracts: dict[str, Any],
) -> None:
    drawing = architecture.layers_diagram(contracts)
    (layers_contract,) = [c for c in contracts["contracts"] if c["type"] == "layers"]
    ordered = [architecture.parse_layer(text).modules for text in layers_contract["layers"]]
    # One arrow from each layer to the next one, in the contract's order.
    chain = arrows(drawing)
    assert len(chain) == len(ordered) - 1
    assert [upper for upper, _ in chain[1:]] == [lower for _, lower in chain[:-1]]
    for (upper, lower), (above, below) in zip(chain, pairwise(ordered), strict=True):
        for ref, modules in ((upper, above), (lower, below)):
            if len(modules) == 1:
                assert ref == f"m_{modules[0]}"
            else:  # a frame holding one box per module
                frame = re.search(rf"subgraph {ref}\[.*?\n(.*?)\n    end", drawing, re.DOTALL)
                assert frame is not None, ref
                boxes = re.findall(r'^\s*m_\w+\["(\w+)"\]$', frame[1], re.MULTILINE)
                assert boxes == list(modules)


def test_a_layer_added_to_the_contract_appears_in_the_drawing(contracts: dict[str, Any]) -> None:
    changed = copy.deepcopy(contracts)
    (layers_contract,) = [c for c in changed["contracts"] if c["type"] == "layers"]
    layers_contract["layers"].insert(1, "gateway")
    chain = arrows(architecture.layers_diagram(changed))
    before = arrows(architecture.layers_diagram(contracts))
    assert len(chain) == len(before) + 1
    assert chain[0] == (before[0][0], "m_gateway")  # under the top layer, whatever it holds
    assert chain[1][0] == "m_gateway"  # the new layer sits on the one that was second


def test_the_forbidden_and_independence_contracts_get_their_own_drawing(
    contracts: dict[str, Any],
) -> None:
    drawings = architecture.diagrams(contracts)
    kinds = [c["type"] for c in contracts["contracts"]]
    assert len(drawings) == 1 + kinds.count("forbidden") + kinds.count("independence")
    forbidden = next(c for c in contracts["contracts"] if c["type"] == "forbidden")
    drawing = architecture.contract_diagram(contracts, forbidden)
    assert drawing is not None
    never = re.search(r"^\s*(.+) -\. never \.-x (.+)$", drawing, re.MULTILINE)
    assert never is not None
    root = f"{contracts['root_package']}."
    for side, members in ((never[1], "source_modules"), (never[2], "forbidden_modules")):
        named = [m.removeprefix(root).replace(".", "_") for m in forbidden[members]]
        assert side.split(" & ") == [f"m_{m}" for m in named]


def test_the_page_names_every_layer_module_and_misses_a_new_one(
    contracts: dict[str, Any],
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert architecture.MARKER in text
    assert architecture.unnamed_modules(text, contracts) == []
    changed = copy.deepcopy(contracts)
    (layers_contract,) = [c for c in changed["contracts"] if c["type"] == "layers"]
    layers_contract["layers"][-1] += " : sundial"
    assert architecture.unnamed_modules(text, changed) == ["sundial"]
