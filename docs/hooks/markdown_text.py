"""Small Markdown helpers shared by the generated pages."""

from __future__ import annotations

import json
import re
from typing import Any

_CODE_SPAN = re.compile(r"(`+)(?:.+?)(?<!`)\1(?!`)")


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no line breaks, no bare pipe outside a code span
    (the tables extension leaves pipes inside code spans alone, and an escape there would show)."""
    text = " ".join(text.split())
    out, position = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [text[position : span.start()].replace("|", "\\|"), span[0]]
        position = span.end()
    out.append(text[position:].replace("|", "\\|"))
    return "".join(out)


def code(text: str) -> str:
    """An inline code span that survives backticks inside ``text``."""
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def json_value(value: Any) -> str:
    """A JSON value as inline code, e.g. ``"error"`` or ``true``."""
    return code(json.dumps(value, ensure_ascii=False))


def fenced(text: str, language: str = "", indent: str = "") -> str:
    """A fenced code block (optionally indented, e.g. inside an admonition)."""
    fence = "```"
    while fence in text:
        fence += "`"
    body = [f"{fence}{language}", *text.rstrip("\n").split("\n"), fence]
    return "\n".join(f"{indent}{line}" if line else line for line in body)
