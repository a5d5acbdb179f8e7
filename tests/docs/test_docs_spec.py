"""The normative text and the requirement registry agree: every registry id is stated, once, on
the page the registry names and at the level it names, and no page states or mentions an id the
registry does not know."""

from __future__ import annotations

import sys
from collections import Counter

import pytest
from support.repo import REPO

from toolcall_spec.requirement_registry import registry

sys.path.insert(0, str(REPO / "docs" / "hooks"))  # the docs build's modules, as mkdocs loads them
import spec_statements

SPEC = REPO / "spec"
PAGES = sorted(SPEC.glob("*.md"))


def _statements() -> list[tuple[str, spec_statements.Statement]]:
    return [
        (page.name, statement)
        for page in PAGES
        for statement in spec_statements.statements(page.read_text(encoding="utf-8"))
    ]


def test_every_registry_id_is_stated_on_its_page() -> None:
    stated = {(page, s.requirement_id) for page, s in _statements()}
    missing = [(r.id, r.page) for r in registry().values() if (r.page, r.id) not in stated]
    assert not missing, f"registry ids not stated on the page the registry names: {missing}"


def test_every_statement_names_a_registry_id_at_its_level() -> None:
    known = registry()
    wrong = [
        f"spec/{page}:{s.line}: {s.requirement_id} ({s.level})"
        for page, s in _statements()
        if s.requirement_id not in known
        or known[s.requirement_id].level != s.level
        or known[s.requirement_id].page != page
    ]
    assert not wrong, f"statements that disagree with spec/requirements.json: {wrong}"


def test_each_requirement_is_stated_exactly_once() -> None:
    counts = Counter(s.requirement_id for _, s in _statements())
    assert [rid for rid, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("folder", ["spec", "docs"])
def test_every_id_mentioned_in_the_text_is_in_the_registry(folder: str) -> None:
    mentioned = {
        (path.relative_to(REPO).as_posix(), rid)
        for path in (REPO / folder).rglob("*.md")
        for rid in spec_statements.mentions(path.read_text(encoding="utf-8"))
    }
    assert [m for m in mentioned if m[1] not in registry()] == []


def test_statement_markup_is_recognised_only_at_the_start_of_a_line() -> None:
    text = (
        "Intro mentioning **MUST** `toolcall-spec.requirement.core.only-literal-true` inline.\n"
        "\n"
        "**SHOULD** `toolcall-spec.requirement.suite.warn-error-inside-response` Warn.\n"
        "\n"
        "**MUST NOT** `toolcall-spec.requirement.core.only-literal-true` is no level.\n"
    )
    found = spec_statements.statements(text)
    assert [(s.requirement_id, s.level, s.line) for s in found] == [
        ("toolcall-spec.requirement.suite.warn-error-inside-response", "SHOULD", 3)
    ]


def test_decorate_anchors_each_statement_and_links_it_to_the_matrix() -> None:
    markdown = pytest.importorskip("markdown")
    text = (
        "# Page\n\n"
        "**MUST** `openwop.requirement.0245.fixture-error-replayed` A served error\n"
        "is an error.\n\n"
        "Informative text.\n\n"
        "**MAY** `toolcall-spec.requirement.x.last` The last paragraph, no newline at the end."
    )
    html = markdown.markdown(
        spec_statements.decorate(text, "../reference/requirements.md"),
        extensions=["attr_list"],
    )
    first = "openwop.requirement.0245.fixture-error-replayed"
    assert f'<p class="requirement requirement-must" id="{first}">' in html
    assert f'<a href="../reference/requirements.md#{first}"><code>{first}</code></a>' in html
    assert "is an error.</p>" in html
    assert "<p>Informative text.</p>" in html
    assert 'id="toolcall-spec.requirement.x.last"' in html
    assert "{:" not in html  # every attribute list was consumed
