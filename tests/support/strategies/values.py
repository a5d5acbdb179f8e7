"""Scalars, JSON values and the shared formats every document family draws from."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from functools import cache
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from toolcall_spec.validation import INTEGER_RANGE

JSON = Any
T = TypeVar("T")


class Draw(Protocol):
    """A typed draw: what ``@st.composite`` passes and what ``st.data().draw`` is (hypothesis's
    own ``st.DrawFn`` also demands a ``__signature__`` that the bound ``data.draw`` lacks)."""

    def __call__(self, strategy: st.SearchStrategy[T], /) -> T: ...


BOOLEAN_LOOKALIKES: tuple[JSON, ...] = ("true", "True", "false", 1, 0, 1.0, 0.0, None, "1", [], {})
"""JSON values that are not the boolean ``true`` but are often read as one (or as ``false``)."""

EVAL_MODES = ("golden", "rubric", "adversarial", "regression", "live-shadow")
ERROR_CATEGORIES = (
    "auth",
    "validation",
    "timeout",
    "rate_limit",
    "server",
    "unknown",
    "tool_error",
)
LOWER, DIGITS = "abcdefghijklmnopqrstuvwxyz", "0123456789"

# --- scalars and JSON values --------------------------------------------------------------------

text_chars = st.characters(exclude_categories=["Cs"])


@cache
def free_text(min_size: int = 0, max_size: int = 12) -> st.SearchStrategy[str]:
    """Free text, any Unicode; never ending in a newline (see the module doc)."""
    return st.text(text_chars, min_size=min_size, max_size=max_size).filter(
        lambda s: not s.endswith("\n")
    )


@cache
def pattern_words(first: str, rest: str, max_rest: int = 8) -> st.SearchStrategy[str]:
    """``[first][rest]*``: the cheap way to a string that matches a simple pattern."""
    return st.builds(str.__add__, st.sampled_from(first), st.text(rest, max_size=max_rest))


member_names = st.text(LOWER + DIGITS + "_-.$ ", max_size=8)
"""Member names of open objects: plain and odd ones (``""``, ``"a.b"``, ``"$x"``) alike."""


@cache
def json_integers(
    min_value: int = 0, max_value: int | None = None
) -> st.SearchStrategy[int | float]:
    """JSON integers: small, big (beyond 64 bits), and integral floats such as ``2.0``."""
    top = max_value if max_value is not None else 2**70
    return st.one_of(
        st.integers(min_value, min(top, min_value + 100)),
        st.integers(min_value, top),
        st.integers(min_value, min(top, 2**53)).map(float),
    )


@cache
def json_numbers(
    min_value: float | None = None, max_value: float | None = None
) -> st.SearchStrategy[int | float]:
    low = int(min_value) if min_value is not None else INTEGER_RANGE.start
    high = int(max_value) if max_value is not None else INTEGER_RANGE.stop - 1
    floats = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False)
    return st.integers(low, high) | floats


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    # Integers within what every reader of the package takes (larger ones are refused: their
    # own tests cover that).
    st.integers(INTEGER_RANGE.start, INTEGER_RANGE.stop - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    free_text(),
)


@cache
def json_values(depth: int = 2) -> st.SearchStrategy[JSON]:
    """Any JSON value, arrays and objects nested up to ``depth`` levels (a hand-rolled bound:
    ``st.recursive`` costs more per draw and retries often)."""
    if depth == 0:
        return json_scalars
    inner = json_values(depth - 1)
    return st.one_of(
        json_scalars,
        st.lists(inner, max_size=2),
        st.dictionaries(member_names, inner, max_size=2),
    )


json_objects = st.dictionaries(member_names, json_values(1), max_size=2)


@cache
def foreign_keys(declared: frozenset[str]) -> st.SearchStrategy[str]:
    """Member names an open object may carry beside its declared members."""
    return member_names.filter(lambda k: k not in declared)


def objects_of(
    required: Mapping[str, st.SearchStrategy[Any]],
    optional: Mapping[str, st.SearchStrategy[Any]] | None = None,
    *,
    open_values: st.SearchStrategy[Any] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """An object with its required members, any subset of its optional members, and foreign
    members with ``open_values`` when the object is open."""
    declared = frozenset(required) | frozenset(optional or {})
    base = st.fixed_dictionaries(dict(required), optional=dict(optional or {}))
    extras: list[st.SearchStrategy[dict[str, Any]]] = []
    if open_values is not None:
        extras.append(st.dictionaries(foreign_keys(declared), open_values, max_size=2))
    if not extras:
        return base
    return st.tuples(base, *extras).map(_merge)


def _merge(parts: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in reversed(parts):  # declared members (first) win over extras of the same name
        merged.update(part)
    return merged


# --- shared formats -----------------------------------------------------------------------------

_FIRST_DAY = date(1, 1, 1)
_days = st.one_of(
    st.integers(0, (date(9999, 12, 31) - _FIRST_DAY).days).map(
        lambda n: _FIRST_DAY + timedelta(days=n)
    ),
    st.integers(0, 20_000).map(lambda n: date(2000, 1, 1) + timedelta(days=n)),
    st.sampled_from([date(2000, 2, 29), date(2024, 2, 29), date(9999, 12, 31)]),
)
_zones = st.sampled_from(["Z", "z", "+00:00", "-00:00", "+05:30", "-08:00", "+23:59", "-23:59"])


@st.composite
def _timestamps(draw: Draw) -> str:
    day = draw(_days)
    minutes, second = divmod(draw(st.integers(0, 24 * 3600 - 1)), 60)
    fraction = draw(st.sampled_from(["", ".0", ".5", ".123", ".123456789"]))
    separator = draw(st.sampled_from("TTTt"))
    return (
        f"{day.year:04d}-{day.month:02d}-{day.day:02d}{separator}"
        f"{minutes // 60:02d}:{minutes % 60:02d}:{second:02d}{fraction}{draw(_zones)}"
    )


timestamps = _timestamps()
"""RFC 3339 date-times with a time zone: real calendar days (29 February included), fractions,
``Z``/``z``/offsets, a lowercase ``t`` now and then. No leap second, no year 0000."""

uuids = st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())
