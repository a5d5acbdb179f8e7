"""``nox -s floors`` pins every dependency the package declares to its lowest declared version
(tests/support/floors.py): a dependency or an extra added to pyproject.toml is covered, or this
fails; and the derivation itself (self-referencing extras, a package named twice, a requirement
with no lowest version) on generated projects."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from support.floors import (
    FLOORS_EXTRA,
    LEFT_OUT_TEST_TOOLS,
    TOOL_EXTRAS,
    FloorError,
    declared_requirements,
    extras_under,
    floor_requirements,
    floors_test_tools,
    names,
    read_pyproject,
)
from support.repo import REPO

PYPROJECT = read_pyproject(REPO / "pyproject.toml")
PROJECT = PYPROJECT["project"]


def declared_names(texts: list[str]) -> set[str]:
    return {canonical(text) for text in texts}


def canonical(text: str) -> str:
    return canonicalize_name(Requirement(text).name)


def test_every_runtime_dependency_and_every_feature_extra_is_pinned_to_its_floor() -> None:
    pins = {canonical(pin): Requirement(pin) for pin in floor_requirements(PYPROJECT)}
    own = canonicalize_name(PROJECT["name"])
    extras = PROJECT["optional-dependencies"]
    # Every extra that is a feature of the package is under `all`: a new one cannot be missed.
    assert set(extras) - TOOL_EXTRAS == extras_under(PROJECT, FLOORS_EXTRA)
    declared = declared_names(PROJECT["dependencies"])
    for extra in set(extras) - TOOL_EXTRAS:
        declared |= declared_names(extras[extra]) - {own}
    assert set(pins) == declared
    for text in [
        *PROJECT["dependencies"],
        *(t for e in extras_under(PROJECT, "all") for t in extras[e]),
    ]:
        requirement = Requirement(text)
        if canonicalize_name(requirement.name) == own:
            continue
        (pinned,) = pins[canonicalize_name(requirement.name)].specifier
        assert pinned.operator == "=="
        # The pin is a version every declaration of the package accepts, and the lowest one.
        assert requirement.specifier.contains(pinned.version, prereleases=True), text
        assert requirement.extras <= pins[canonicalize_name(requirement.name)].extras


def test_the_floors_session_installs_the_derivation_and_ci_runs_it() -> None:
    noxfile = (REPO / "noxfile.py").read_text("utf-8")
    assert "floor_requirements(pyproject)" in noxfile
    assert "floors_test_tools(pyproject)" in noxfile
    assert "nox -s floors" in (REPO / ".ci" / "run").read_text("utf-8")


def test_each_test_tool_left_out_is_in_the_test_extra_and_the_rest_is_installed() -> None:
    test_extra = PROJECT["optional-dependencies"]["test"]
    assert set(LEFT_OUT_TEST_TOOLS) <= declared_names(test_extra)
    kept = floors_test_tools(PYPROJECT)
    assert names(kept) == declared_names(test_extra) - set(LEFT_OUT_TEST_TOOLS)


# Generated projects: a few packages, each extra a list of requirements and of references to
# other extras through the package itself.
PACKAGES = ("alpha", "beta-lib", "gamma_io")
EXTRA_NAMES = ("one", "two", "three")


def requirement_text(name: str, extra: str, major: int, minor: int, upper: bool) -> str:
    return f"{name}{extra}>={major}.{minor}" + (",<9" if upper else "")


REQUIREMENTS = st.builds(
    requirement_text,
    st.sampled_from(PACKAGES),
    st.sampled_from(("", "[standard]", "[speed]")),
    st.integers(0, 3),
    st.integers(0, 12),
    st.booleans(),
)
SELF_REFERENCES = st.sets(st.sampled_from(EXTRA_NAMES), min_size=1, max_size=2).map(
    lambda names: f"sample[{','.join(sorted(names))}]"
)
EXTRAS = st.lists(st.one_of(REQUIREMENTS, SELF_REFERENCES), max_size=3)


@st.composite
def projects(draw: st.DrawFn) -> dict[str, Any]:
    extras = {name: draw(EXTRAS) for name in EXTRA_NAMES}
    extras["all"] = ["sample[one]"]
    dependencies = draw(st.lists(REQUIREMENTS, max_size=2))
    return {
        "project": {
            "name": "sample",
            "dependencies": dependencies,
            "optional-dependencies": extras,
        }
    }


def closure(extras: dict[str, list[str]], start: str) -> set[str]:
    """The extras ``start`` reaches through ``sample[...]``, as a fixed point."""
    reached = {start}
    while True:
        more = {
            extra
            for name in reached
            for text in extras[name]
            if Requirement(text).name == "sample"
            for extra in Requirement(text).extras
        }
        if more <= reached:
            return reached
        reached |= more


def lowest_declared(texts: list[str], name: str) -> Version:
    bounds = [
        Version(s.version)
        for text in texts
        if canonical(text) == name
        for s in Requirement(text).specifier
        if s.operator == ">="
    ]
    return max(bounds)


@given(projects())
def test_each_package_reachable_from_all_gets_one_pin_at_its_highest_declared_floor(
    pyproject: dict[str, Any],
) -> None:
    """Generated projects (each example parses a few dozen requirements; 300 under CI can take
    over 10 s on a loaded machine): the derivation against an independent reading."""
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    reachable = closure(extras, "all")
    assert extras_under(project, "all") == reachable
    texts = [*project["dependencies"], *(t for e in reachable for t in extras[e])]
    texts = [t for t in texts if Requirement(t).name != "sample"]
    pins = [Requirement(pin) for pin in floor_requirements(pyproject)]
    assert [canonicalize_name(p.name) for p in pins] == sorted(declared_names(texts))
    for pin in pins:
        (pinned,) = pin.specifier
        name = canonicalize_name(pin.name)
        assert Version(pinned.version) == lowest_declared(texts, name)
        named = [Requirement(t) for t in texts if canonical(t) == name]
        assert pin.extras == set().union(*(r.extras for r in named))
    # Exactly the requirements reachable from `all` (the runtime ones too), none of the others.
    found = sorted(str(r) for r in declared_requirements(project, "all"))
    assert found == sorted(str(Requirement(t)) for t in texts)


@pytest.mark.parametrize("text", ["duckdb", "duckdb<2", "duckdb!=1.0", "duckdb==1.*", "duckdb>1.1"])
def test_a_requirement_without_a_lowest_version_is_refused_with_its_name(text: str) -> None:
    pyproject = {
        "project": {"name": "sample", "dependencies": [text], "optional-dependencies": {"all": []}}
    }
    with pytest.raises(FloorError, match="duckdb"):
        floor_requirements(pyproject)


def test_a_marker_is_kept_and_an_unknown_extra_is_named() -> None:
    pyproject = {
        "project": {
            "name": "sample",
            "dependencies": ["tomli>=1.1; python_version < '3.11'"],
            "optional-dependencies": {"all": ["sample[missing]"]},
        }
    }
    with pytest.raises(FloorError, match="missing"):
        floor_requirements(pyproject)
    pyproject["project"]["optional-dependencies"] = {"all": []}
    (pin,) = floor_requirements(pyproject)
    marker = Requirement(pin).marker
    assert marker is not None
    assert marker.evaluate() == (sys.version_info < (3, 11))
