"""Paths to members of a JSON document, in the one form this package uses everywhere.

Dotted members and ``[i]`` for array items: ``tasks[0].fixtures.toolResponses[0].isError``.
A member whose name is not a plain identifier is quoted: ``payload["vendor.key"]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

_PLAIN_MEMBER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")

ROOT = "(root)"
"""How the document itself is named when a problem has no deeper path."""


def format_path(parts: Iterable[str | int]) -> str:
    """Join member names and array indices into ``a.b[0].c``; the empty path is ``(root)``."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _PLAIN_MEMBER.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{printable(json.dumps(part, ensure_ascii=False))}]")
    return "".join(out) or ROOT


def printable(text: str) -> str:
    """``text`` with every non-printable character (newlines, U+2028, ...) escaped, so that a
    path or a message quoting a document's value stays on one readable line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)


def join_path(prefix: str, parts: Iterable[str | int]) -> str:
    """Append ``parts`` to an already formatted ``prefix`` (``(root)`` counts as empty)."""
    rest = format_path(parts)
    if prefix in ("", ROOT):
        return rest
    if rest == ROOT:
        return prefix
    return prefix + rest if rest.startswith("[") else f"{prefix}.{rest}"
