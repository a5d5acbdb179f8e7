"""The one markup of a normative statement in spec/*.md, read by the docs build and by the tests.

A statement is a paragraph that opens with its level in bold and its requirement id in code:

    **MUST** `openwop.requirement.0245.fixture-error-replayed` A host that serves ...

The build gives that paragraph the id as its HTML id (so the requirement matrix links to it) and
links the id to its row on the matrix (where the witness tests are listed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STATEMENT = re.compile(
    r"^\*\*(?P<level>MUST|SHOULD|MAY)\*\* `(?P<id>[a-z0-9-]+\.requirement\.[a-z0-9.-]+)`",
    re.MULTILINE,
)
"""A statement opens a line: ``**LEVEL** `id` ``."""

MENTION = re.compile(r"\b(?:openwop|toolcall-spec)\.requirement\.[a-z0-9]+\.[a-z0-9-]+")
"""Any requirement id written anywhere (a statement or a cross reference)."""


@dataclass(frozen=True, slots=True)
class Statement:
    requirement_id: str
    level: str
    line: int


def statements(markdown: str) -> list[Statement]:
    """Every statement of a page, in page order, with its 1-based line."""
    return [
        Statement(m["id"], m["level"], markdown.count("\n", 0, m.start()) + 1)
        for m in STATEMENT.finditer(markdown)
    ]


def mentions(markdown: str) -> set[str]:
    return set(MENTION.findall(markdown))


def decorate(markdown: str, matrix_url: str) -> str:
    """Give each statement paragraph its id and a class (attr_list), and link its id to the
    statement's row on the requirement matrix at ``matrix_url``."""
    out: list[str] = []
    position = 0
    for match in STATEMENT.finditer(markdown):
        requirement_id, level = match["id"], match["level"]
        end = markdown.find("\n\n", match.end())
        end = len(markdown.rstrip("\n")) if end == -1 else end
        out.append(markdown[position : match.start()])
        out.append(f"**{level}** [`{requirement_id}`]({matrix_url}#{requirement_id})")
        out.append(markdown[match.end() : end])
        out.append(f"\n{{: #{requirement_id} .requirement .requirement-{level.lower()} }}")
        position = end
    out.append(markdown[position:])
    return "".join(out)
