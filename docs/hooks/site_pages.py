"""MkDocs hooks (``hooks:`` in mkdocs.yml) that build the site from the spec and the code.

- spec/*.md (the normative text, kept beside the registry at the repository root) become the
  ``spec/`` pages, each statement getting its id as an anchor;
- the requirement matrix, the schema reference, the CLI reference and the Python API pages are
  generated from spec/requirements.json, the test sources, schemas/, examples/ and the argparse
  parser every time the site is built, so none of them can go stale.

Every problem found while generating is logged as a warning, which ``mkdocs build --strict`` turns
into a failed build.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import api_pages
import cli_reference
import cli_runs
import requirement_matrix
import schema_reference
import spec_statements
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from toolcall_spec.catalog import SCHEMA_FILES, all_schemas, is_kind
from toolcall_spec.requirement_registry import find_witnesses, registry

log = logging.getLogger("mkdocs.hooks.toolcall_spec")

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = REPO / "spec"
TESTS_DIR = REPO / "tests"
SCHEMA_INDEX = f"{schema_reference.SCHEMA_PAGES_DIR}/index.md"
API_INDEX = f"{api_pages.API_DIR}/index.md"
CLI_URI = "reference/cli.md"


# -- nav: the generated sections are expanded where mkdocs.yml names their index page ----------


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    sections: dict[str, Callable[[], list[Any]]] = {
        SCHEMA_INDEX: _schema_nav,
        API_INDEX: _api_nav,
    }
    config.nav = _expand(config.nav or [], sections)
    return config


def _expand(nav: list[Any], sections: dict[str, Callable[[], list[Any]]]) -> list[Any]:
    out: list[Any] = []
    for item in nav:
        if isinstance(item, dict):
            (title, value), *_ = item.items()
            if isinstance(value, list):
                out.append({title: _expand(value, sections)})
            elif value in sections:
                out.append({title: [value, *sections[value]()]})
            else:
                out.append(item)
        else:
            out.append(item)
    return out


def _schema_nav() -> list[Any]:
    families: dict[str, list[dict[str, str]]] = {}
    for path, schema in all_schemas().items():
        family = schema_reference.family_title(path.split("/", 1)[0])
        uri = schema_reference.page_uri(path)
        families.setdefault(family, []).append({schema.get("title", path): uri})
    return [{family: pages} for family, pages in families.items()]


def _api_nav() -> list[Any]:
    return [{m.qualified: m.uri} for m in api_pages.discover(_package_dir())]


# -- files: spec pages from the repository root, generated reference pages ---------------------


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path in sorted(SPEC_DIR.glob("*.md")):
        files.append(File.generated(config, f"spec/{path.name}", abs_src_path=str(path)))
    pages = {
        requirement_matrix.MATRIX_URI: _matrix_page(),
        CLI_URI: _cli_page(),
        **_schema_pages(),
        **_api_pages(),
    }
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    return files


def _matrix_page() -> str:
    requirements = registry().values()
    titles = {path.name: _title(path) for path in SPEC_DIR.glob("*.md")}
    for requirement in requirements:
        if requirement.page not in titles:
            log.warning(
                "requirement %s names a missing spec page %s", requirement.id, requirement.page
            )
    return requirement_matrix.matrix_page(requirements, find_witnesses(TESTS_DIR), titles)


def _title(path: Path) -> str:
    match = re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return match[1].strip() if match else path.stem


def _cli_page() -> str:
    from toolcall_spec.cli import build_parser  # noqa: PLC0415 (the CLI imports every command)

    parser, handlers = build_parser()
    return cli_reference.cli_page(parser, handlers)


def _schema_pages() -> dict[str, str]:
    schemas = all_schemas()
    kind_of = {path: kind for kind, path in SCHEMA_FILES.items()}
    examples = schema_reference.load_examples(REPO)
    by_schema: dict[str, list[schema_reference.Example]] = {}
    for example in examples:
        if not is_kind(example.kind):
            log.warning("examples/index.json: %s has unknown kind %r", example.file, example.kind)
            continue
        by_schema.setdefault(SCHEMA_FILES[example.kind], []).append(example)
    pages = {}
    for path in schemas:
        page = schema_reference.SchemaPage(path, schemas)
        pages[schema_reference.page_uri(path)] = page.render(
            kind_of.get(path), by_schema.get(path, [])
        )
        for fallback in page.fallbacks:
            log.warning("schema reference: no prose for %s", fallback)
    counts = {path: len(found) for path, found in by_schema.items()}
    pages[SCHEMA_INDEX] = schema_reference.index_page(schemas, kind_of, counts)
    return pages


def _package_dir() -> Path:
    return Path(str(resources.files("toolcall_spec")))


def _api_pages() -> dict[str, str]:
    modules = api_pages.discover(_package_dir())
    pages = {m.uri: api_pages.module_page(m) for m in modules}
    pages[API_INDEX] = api_pages.index_page(modules)
    return pages


# -- spec statements: anchors and links to the matrix -----------------------------------------


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    uri = page.file.src_uri
    markdown = cli_runs.expand(markdown, REPO)
    if not uri.startswith("spec/"):
        return markdown
    matrix = posixpath.relpath(requirement_matrix.MATRIX_URI, posixpath.dirname(uri))
    known = registry()
    for statement in spec_statements.statements(markdown):
        requirement = known.get(statement.requirement_id)
        if requirement is None:
            log.warning(
                "%s:%d: %s is not in spec/requirements.json",
                uri,
                statement.line,
                statement.requirement_id,
            )
        elif requirement.level != statement.level:
            log.warning(
                "%s:%d: %s is stated as %s, the registry says %s",
                uri,
                statement.line,
                statement.requirement_id,
                statement.level,
                requirement.level,
            )
    return spec_statements.decorate(markdown, matrix)
