"""The requirement matrix page: every requirement of the registry with its level, source, the
spec statement it links to, and the tests that witness it. Rendered at build time from
spec/requirements.json and the test sources, so it never goes stale."""

from __future__ import annotations

import html
import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

from markdown_text import cell

from toolcall_spec.requirement_registry import Requirement, Witness

MATRIX_URI = "reference/requirements.md"
SPEC_DIR = "spec"


def matrix_page(
    requirements: Iterable[Requirement],
    witnesses: Iterable[Witness],
    page_titles: Mapping[str, str],
) -> str:
    """The matrix as Markdown, one table per spec page in registry order. ``page_titles`` maps a
    spec page (``replay.md``) to its title; a page without one is named by its file."""
    requirements = list(requirements)
    by_requirement: dict[str, list[Witness]] = defaultdict(list)
    for witness in witnesses:
        by_requirement[witness.requirement_id].append(witness)
    by_page: dict[str, list[Requirement]] = defaultdict(list)
    for requirement in requirements:
        by_page[requirement.page].append(requirement)

    lines = [
        "---",
        "hide: [toc]",  # the table needs the width; its sections are in the navigation anyway
        "---",
        "",
        "# Requirement matrix",
        "",
        *_summary(requirements, by_requirement),
        "",
    ]
    for page, members in by_page.items():
        title = page_titles.get(page, page)
        lines += [f"## {title}", "", f"Stated in [{title}]({_spec_link(page)}).", ""]
        lines += [
            "| Requirement | Statement | Witness tests |",
            "| --- | --- | --- |",
        ]
        lines += [_row(r, by_requirement.get(r.id, [])) for r in members]
        lines.append("")
    return "\n".join(lines)


def _summary(
    requirements: list[Requirement], by_requirement: Mapping[str, list[Witness]]
) -> list[str]:
    levels = Counter(r.level for r in requirements)
    unwitnessed = [r.id for r in requirements if not by_requirement.get(r.id)]
    counts = ", ".join(f"{levels[level]} {level}" for level in ("MUST", "SHOULD", "MAY"))
    lines = [
        f"Every normative statement of the [specification]({_spec_link('index.md')}), generated "
        "from the "
        "requirement registry (`spec/requirements.json`) and the test sources when the site is "
        "built. A test witnesses a requirement by carrying "
        '`@pytest.mark.requirement("<id>")`; the id links to the statement, the statement links '
        "back here.",
        "",
        f"**{len(requirements)} requirements** ({counts}); "
        f"**{len(requirements) - len(unwitnessed)}** witnessed by at least one test.",
    ]
    if unwitnessed:
        lines += ["", '!!! warning "Requirements without a witness test"', ""]
        lines += [f"    - [`{rid}`](#{rid})" for rid in unwitnessed]
    return lines


def _row(requirement: Requirement, witnesses: list[Witness]) -> str:
    rid = requirement.id
    link = f"{_spec_link(requirement.page)}#{rid}"
    tests = sorted({w.test for w in witnesses})
    witness_cell = "<br>".join(_breakable(t, ("/", "::")) for t in tests) or "**none yet**"
    return (
        f'| <a id="{rid}"></a>[{_breakable(rid, (".",))}]({link})<br>'
        f"**{requirement.level}** · {cell(requirement.source)} | {cell(requirement.title)} | "
        f"{witness_cell} |"
    )


def _breakable(text: str, after: tuple[str, ...]) -> str:
    """Inline code that a narrow table column may wrap after each separator, not mid-word."""
    escaped = html.escape(text)
    for separator in after:
        escaped = escaped.replace(separator, f"{separator}<wbr>")
    return f"<code>{escaped}</code>"


def _spec_link(page: str) -> str:
    return posixpath.relpath(f"{SPEC_DIR}/{page}", posixpath.dirname(MATRIX_URI))
