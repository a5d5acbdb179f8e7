"""``toolcall-spec diff`` on hostile schemas: deep nesting gets a verdict or a clear refusal,
never a silent "none" or a RecursionError; nested allOf and large enums cost polynomial work
(counted here; timed as growth ratios in benchmarks/bench_hostile.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli

from toolcall_spec.compat import compare, verdict
from toolcall_spec.compat import walk as walk_module
from toolcall_spec.json_values import json_equal
from toolcall_spec.loading import DocumentError
from toolcall_spec.validation import MAX_DEPTH

TOO_DEEP = pytest.mark.requirement("toolcall-spec.requirement.compat.too-deep-refused")

Wrap = Callable[[Any], Any]
SHAPES: dict[str, tuple[int, Wrap]] = {
    # name: (levels of arrays and objects each wrap adds, the wrap)
    "items": (1, lambda s: {"items": s}),
    "not": (1, lambda s: {"not": s}),
    "if": (1, lambda s: {"if": s, "then": {"type": "object"}}),
    "then": (1, lambda s: {"if": {"type": "object"}, "then": s}),
    "properties": (2, lambda s: {"type": "object", "properties": {"a": s}}),
    "allOf": (2, lambda s: {"allOf": [s, {"type": "object"}]}),
    "anyOf": (2, lambda s: {"anyOf": [s, {"type": "null"}]}),
    "oneOf": (2, lambda s: {"oneOf": [s, {"type": "null"}]}),
    "prefixItems": (2, lambda s: {"prefixItems": [s]}),
    "$defs": (2, lambda s: {"$defs": {"a": s}, "$ref": "#/$defs/a"}),
}


def nest(depth: int, leaf: Any, wrap: Wrap) -> Any:
    schema = leaf
    for _ in range(depth):
        schema = wrap(schema)
    return schema


@TOO_DEEP
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_change_at_the_deepest_level_accepted_is_found(shape: str) -> None:
    per_level, wrap = SHAPES[shape]
    depth = (MAX_DEPTH - 1) // per_level  # the leaf schema itself is one more level
    old = nest(depth, {"type": "string"}, wrap)
    new = nest(depth, {"type": "string", "maxLength": 3}, wrap)
    changes = compare(old, new)
    assert verdict(changes) is not None, "a change deep down was answered none"
    assert verdict(compare(old, json.loads(json.dumps(old)))) is None


@TOO_DEEP
@pytest.mark.parametrize("depth", [MAX_DEPTH, 150, 400])
def test_a_schema_too_deep_to_compare_is_refused_not_answered(depth: int) -> None:
    old = nest(depth, {"type": "string"}, SHAPES["items"][1])
    new = nest(depth, {"type": "integer"}, SHAPES["items"][1])
    with pytest.raises(DocumentError, match="too deep to compare"):
        compare(old, new)


@TOO_DEEP
def test_the_cli_refuses_too_deep_with_exit_2(tmp_path: Path) -> None:
    wrap = SHAPES["properties"][1]
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(nest(150, {"type": "string"}, wrap)))
    new.write_text(json.dumps(nest(150, {"type": "integer"}, wrap)))
    done = run_cli("diff", old, new)
    assert done.returncode == 2
    assert "too deep to compare" in done.stderr
    assert "verdict" not in done.stdout


def body_walks(monkeypatch: pytest.MonkeyPatch, old: Any, new: Any) -> int:
    """How many pairs of schema bodies one comparison walks, probes included."""
    count = 0
    original = walk_module.Walk._body_once

    def counting(self: walk_module.Walk, *args: Any) -> list[Any]:
        nonlocal count
        count += 1
        return original(self, *args)

    with monkeypatch.context() as patch:
        patch.setattr(walk_module.Walk, "_body_once", counting)
        compare(old, new)
    return count


def test_nested_all_of_costs_polynomial_work(monkeypatch: pytest.MonkeyPatch) -> None:
    wrap = SHAPES["allOf"][1]
    small, large = (
        body_walks(
            monkeypatch, nest(d, {"type": "string"}, wrap), nest(d, {"type": "integer"}, wrap)
        )
        for d in (6, 12)
    )
    assert large <= small * 2**3, f"doubling the depth multiplied the work by {large / small:.0f}"


def test_large_enums_cost_linear_comparisons(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0

    def counting(left: Any, right: Any) -> bool:
        nonlocal calls
        calls += 1
        return json_equal(left, right)

    from toolcall_spec.compat import (
        scalars,
        values,
    )

    monkeypatch.setattr(scalars, "json_equal", counting)
    monkeypatch.setattr(values, "json_equal", counting)
    monkeypatch.setitem(values.SCALAR_CHECKS, "const", counting)
    work = []
    for size in (1000, 2000):
        calls = 0
        changes = compare({"enum": list(range(size))}, {"enum": list(range(1, size + 1))})
        assert sorted(c.kind for c in changes) == ["enum-value-added", "enum-value-removed"]
        work.append(calls)
    assert work[1] <= 2 * work[0] + 10, f"pairwise comparisons: {work}"
