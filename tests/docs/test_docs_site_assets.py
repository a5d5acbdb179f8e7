"""What the docs build adds besides pages: every schema raw at its ``$id`` path, the mermaid
renderer from the pinned npm package, ``versions.json``; the generated models page; and
docstrings in one style (no raw Sphinx roles, which mkdocstrings would print as they are)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support.repo import REPO

import toolcall_spec
from toolcall_spec.catalog import all_schemas

sys.path.insert(0, str(REPO / "docs" / "hooks"))  # the docs build's modules, as mkdocs loads them
import models_reference
import site_assets

ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|exc|obj|ref):`")


def test_no_docstring_or_page_uses_a_sphinx_role() -> None:
    sources = [*(REPO / "src").rglob("*.py"), *(REPO / "docs").rglob("*.md")]
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in sources
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
        if ROLE.search(line)
    ]
    assert offenders == []


def test_the_models_page_lists_every_model_with_its_members() -> None:
    from toolcall_spec import models

    page = models_reference.models_page(getattr(models, name) for name in models.__all__)
    for name in models.__all__:
        assert f"### {name}\n" in page, name
    call_tool_result = page.split("### CallToolResult\n", 1)[1].split("\n### ", 1)[0]
    assert "| `isError` | `bool` | no |" in call_tool_result
    assert "| `content` | `list[TextContent | ImageContent | " in call_tool_result
    assert "| `_meta` |" in call_tool_result  # the JSON name, not the Python attribute


def test_the_mermaid_renderer_comes_from_the_pinned_npm_package() -> None:
    lock = json.loads((REPO / "package-lock.json").read_text("utf-8"))
    pinned = json.loads((REPO / "package.json").read_text("utf-8"))["devDependencies"]["mermaid"]
    assert lock["packages"]["node_modules/mermaid"]["version"] == pinned
    assert site_assets.MERMAID_SOURCE == REPO / "node_modules/mermaid/dist/mermaid.min.js"


@pytest.fixture(scope="module")
def built_site() -> Path:
    site = REPO / "site"
    if not (site / "search" / "search_index.json").is_file():
        pytest.skip("no built site: run `nox -s docs` first")
    return site


def test_the_built_site_serves_every_schema_raw_and_a_versions_file(built_site: Path) -> None:
    for path, schema in all_schemas().items():
        assert json.loads((built_site / "schemas" / path).read_text("utf-8")) == schema
    versions = json.loads((built_site / "versions.json").read_text("utf-8"))
    assert [v["version"] for v in versions] == [toolcall_spec.__version__]
    assert (built_site / site_assets.MERMAID_URI).stat().st_size > 1_000_000


def test_the_install_page_names_the_distribution_and_works_from_a_clone() -> None:
    # The distribution's name as the built metadata says it (tomllib is not in Python 3.10).
    from importlib.metadata import distribution

    name = distribution("toolcall-spec").metadata["Name"]
    page = (REPO / "docs/install.md").read_text("utf-8")
    assert f"$ pip install {name}\n" in page  # once published
    assert "$ pip install .\n" in page  # from the clone, at its root
    assert "$ cd toolcall-spec\n" in page
    readme = (REPO / "README.md").read_text("utf-8")
    assert "pip install . && toolcall-spec conformance" in readme
    assert f"`pip install {name}`" in readme
