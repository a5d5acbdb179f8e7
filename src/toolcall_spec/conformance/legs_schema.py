"""Server-free legs: the suite schema itself, checked without a host (RFC 0245's §A row)."""

from __future__ import annotations

import copy
from typing import Any

from toolcall_spec.conformance.adapter import HostAdapter
from toolcall_spec.conformance.leg import Context, Leg
from toolcall_spec.conformance.outcomes import Verdict, check, passed
from toolcall_spec.host.fixtures import FIXTURE_ERROR, load_fixture
from toolcall_spec.json_paths import format_path
from toolcall_spec.validation import validate

NOT_BOOLEANS: tuple[Any, ...] = ("true", "false", 1, 0, None, [True])
"""``isError`` values that look like a boolean to a lax reader and must fail the type."""


def error_paths(document: Any) -> list[str]:
    return [p.path for p in validate(document, "suite") if p.severity == "error"]


def with_entry(suite: dict[str, Any], index: int, **members: Any) -> dict[str, Any]:
    changed = copy.deepcopy(suite)
    changed["tasks"][0]["fixtures"]["toolResponses"][index].update(members)
    return changed


def entry_path(index: int, *members: str) -> str:
    return format_path(["tasks", 0, "fixtures", "toolResponses", index, *members])


def is_error_boolean(adapter: HostAdapter, ctx: Context) -> Verdict:
    fixture = load_fixture(FIXTURE_ERROR)
    check(error_paths(fixture) == [], f"the fixture {FIXTURE_ERROR} does not validate")
    check(error_paths(with_entry(fixture, 0, isError=False)) == [], "isError: false fails")
    path = entry_path(0, "isError")
    for value in NOT_BOOLEANS:
        found = error_paths(with_entry(fixture, 0, isError=value))
        check(path in found, f"isError: {value!r} is accepted (errors: {found})")
    return passed(
        f"the fixture and isError true/false validate; {len(NOT_BOOLEANS)} non-booleans fail"
    )


def args_match_needs_args(adapter: HostAdapter, ctx: Context) -> Verdict:
    fixture = load_fixture(FIXTURE_ERROR)
    alone = error_paths(with_entry(fixture, 1, argsMatch="exact"))
    check(entry_path(1) in alone, f"argsMatch without args is accepted (errors: {alone})")
    paired = error_paths(with_entry(fixture, 1, argsMatch="subset", args={"id": "c-1"}))
    check(paired == [], f"argsMatch with args fails: {paired}")
    return passed("argsMatch without args fails; with args it validates")


LEGS = (
    Leg(
        "toolcall-spec.requirement.suite.is-error-boolean",
        "an isError suite validates; isError as a string, number, null or array fails",
        is_error_boolean,
        server_free=True,
    ),
    Leg(
        "toolcall-spec.requirement.suite.args-match-needs-args",
        "argsMatch without args fails validation; with args it passes",
        args_match_needs_args,
        server_free=True,
    ),
)
