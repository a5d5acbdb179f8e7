"""The dependency floors: every runtime dependency of the package, and every dependency of the
extras that ``all`` gathers, pinned with ``==`` to the lowest version pyproject.toml declares.

``nox -s floors`` installs the package with these pins (one resolve: nothing can move a floor)
and runs the store, ingest, MCP and CLI tests on them; tests/packaging/test_floors.py checks
that every dependency pyproject.toml declares is covered, so a new one cannot be forgotten.

Plain Python and ``packaging`` only (nox and pytest both bring it): the noxfile imports it from
nox's interpreter, the tests from the test session's.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

FLOORS_EXTRA = "all"
"""The extra whose dependencies (with the runtime ones) the floors cover: every extra of the
package's features; ``test``, ``docs`` and ``bench`` are the project's tools, not the package's."""

TOOL_EXTRAS = frozenset({"test", "docs", "bench"})
"""The extras that are not features of the package, so not under ``all`` and not floored."""

LEFT_OUT_TEST_TOOLS = {
    "mcp-recorder": (
        "a peer recorder pinned in the test extra (0.5.0) that asks for httpx>=0.28.1 and "
        "uvicorn>=0.40, above the floors; without it tests/mcp_boundary/test_cassettes.py cannot "
        "run, so nox -s floors leaves that file out (nox -s test and mcp_matrix run it)"
    ),
}
"""The test extra's packages that cannot be installed beside the floors, each with the reason:
``nox -s floors`` installs the rest of the test extra (at the newest versions that fit)."""

LOWER_BOUNDS = frozenset({">=", "==", "~=", "==="})
"""The specifier operators that name a lowest version."""


class FloorError(ValueError):
    """A dependency the floors cannot pin: it declares no lowest version, or two requirements of
    one package disagree in a way the derivation does not merge."""


def read_pyproject(path: Path) -> dict[str, Any]:
    """pyproject.toml as a dict (tomllib on 3.11+, tomli, which nox and pytest bring, on 3.10)."""
    toml = importlib.import_module("tomllib" if sys.version_info >= (3, 11) else "tomli")
    with path.open("rb") as handle:
        document: dict[str, Any] = toml.load(handle)
    return document


def floor_requirements(pyproject: Mapping[str, Any], extra: str = FLOORS_EXTRA) -> list[str]:
    """``name[extras]==lowest`` (with its environment marker, if any) for every runtime
    dependency and every dependency of ``extra``, its self-references expanded; one line per
    package, sorted. A package named twice gets the higher of its lowest versions and the union
    of its extras."""
    project = pyproject["project"]
    floors: dict[str, Requirement] = {}
    for requirement in declared_requirements(project, extra):
        name = canonicalize_name(requirement.name)
        pinned = _pin_to_floor(requirement)
        floors[name] = pinned if name not in floors else _merge(floors[name], pinned)
    return [str(floors[name]) for name in sorted(floors)]


def declared_requirements(project: Mapping[str, Any], extra: str) -> list[Requirement]:
    """The runtime dependencies, then those of every extra in ``extras_under(project, extra)``
    (the package's references to itself left out)."""
    own_name = canonicalize_name(project["name"])
    extras: Mapping[str, list[str]] = project.get("optional-dependencies", {})
    found = [Requirement(text) for text in project.get("dependencies", [])]
    for name in sorted(extras_under(project, extra)):
        requirements = (Requirement(text) for text in extras[name])
        found.extend(r for r in requirements if canonicalize_name(r.name) != own_name)
    return found


def extras_under(project: Mapping[str, Any], extra: str) -> set[str]:
    """``extra`` and every extra it reaches through the package's references to itself
    (``toolcall-spec[mcp,http]``)."""
    own_name = canonicalize_name(project["name"])
    extras: Mapping[str, list[str]] = project.get("optional-dependencies", {})
    reached: set[str] = set()
    pending = [extra]
    while pending:
        current = pending.pop()
        if current in reached:
            continue
        if current not in extras:
            raise FloorError(f"[project.optional-dependencies]: no extra named {current!r}")
        reached.add(current)
        for text in extras[current]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) == own_name:
                pending.extend(requirement.extras)
    return reached


def lowest_version(requirement: Requirement) -> str:
    """The lowest version ``requirement`` declares (the highest of its lower bounds)."""
    bounds = [s.version for s in requirement.specifier if s.operator in LOWER_BOUNDS]
    if not bounds or any("*" in bound for bound in bounds):
        raise FloorError(
            f"{requirement}: declares no lowest version (>=, ==, ~=), so no floor can be "
            "tested; give it one in pyproject.toml"
        )
    return max(bounds, key=Version)


def _pin_to_floor(requirement: Requirement) -> Requirement:
    pinned = Requirement(requirement.name)
    pinned.extras = set(requirement.extras)
    pinned.specifier = SpecifierSet(f"=={lowest_version(requirement)}")
    pinned.marker = requirement.marker
    return pinned


def _merge(first: Requirement, second: Requirement) -> Requirement:
    """One pin for a package two requirements name: the higher floor, the union of extras."""
    if str(first.marker) != str(second.marker):
        raise FloorError(f"{first} and {second}: one package under two markers; merge them")
    merged = first if Version(_pinned(first)) >= Version(_pinned(second)) else second
    result = Requirement(str(merged))
    result.extras = set(first.extras) | set(second.extras)
    return result


def _pinned(requirement: Requirement) -> str:
    (specifier,) = requirement.specifier
    return specifier.version


def floors_test_tools(pyproject: Mapping[str, Any]) -> list[str]:
    """The test extra's requirements as declared, less LEFT_OUT_TEST_TOOLS."""
    declared = pyproject["project"]["optional-dependencies"]["test"]
    return [text for text in declared if not names([text]) & set(LEFT_OUT_TEST_TOOLS)]


def names(requirements: Iterable[str]) -> set[str]:
    """The canonical package names of ``requirements``."""
    return {canonicalize_name(Requirement(text).name) for text in requirements}
