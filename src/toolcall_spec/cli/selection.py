"""``-k EXPR`` selection, as pytest spells it: words matched as case-insensitive substrings of a
name, combined with ``and``, ``or``, ``not`` and parentheses (``-k "0245 and not refused"``)."""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")

Matcher = Callable[[str], bool]


class SelectionError(ValueError):
    """The expression does not parse; the message says where."""


def compile_selection(expression: str) -> Matcher:
    """A predicate over names; raises ``SelectionError`` for a malformed expression."""
    tokens = [m[1] for m in _TOKEN.finditer(expression)]
    if not tokens:
        raise SelectionError("-k: the expression is empty")
    matcher, rest = _or(tokens)
    if rest:
        raise SelectionError(f"-k: unexpected {rest[0]!r} in {expression!r}")
    return matcher


def _or(tokens: list[str]) -> tuple[Matcher, list[str]]:
    left, tokens = _and(tokens)
    while tokens[:1] == ["or"]:
        right, tokens = _and(tokens[1:])
        left = _either(left, right)
    return left, tokens


def _and(tokens: list[str]) -> tuple[Matcher, list[str]]:
    left, tokens = _not(tokens)
    while tokens[:1] == ["and"]:
        right, tokens = _not(tokens[1:])
        left = _both(left, right)
    return left, tokens


def _either(a: Matcher, b: Matcher) -> Matcher:
    return lambda name: a(name) or b(name)


def _both(a: Matcher, b: Matcher) -> Matcher:
    return lambda name: a(name) and b(name)


def _not(tokens: list[str]) -> tuple[Matcher, list[str]]:
    if tokens[:1] == ["not"]:
        inner, rest = _not(tokens[1:])
        return (lambda name: not inner(name)), rest
    return _atom(tokens)


def _atom(tokens: list[str]) -> tuple[Matcher, list[str]]:
    if not tokens:
        raise SelectionError("-k: the expression ends too early")
    head, rest = tokens[0], tokens[1:]
    if head == "(":
        inner, rest = _or(rest)
        if rest[:1] != [")"]:
            raise SelectionError("-k: a '(' is not closed")
        return inner, rest[1:]
    if head in (")", "and", "or"):
        raise SelectionError(f"-k: expected a word, found {head!r}")
    word = head.lower()
    return (lambda name: word in name.lower()), rest
