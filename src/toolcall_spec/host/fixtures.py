"""Conformance fixtures: suites a host seeds under a well-known id and lists in its discovery
document's ``fixtures`` member.

Each fixture lives once, as runtime package data under ``data/fixtures/`` (examples/suites/ holds
an identical copy for the docs); the conformance legs, the embedded reference host and the HTTP
server all load it from here, so they can never drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from toolcall_spec.loading import parse_json
from toolcall_spec.package_data import read_text

FIXTURE_ERROR = "conformance-eval-fixture-error"
"""RFC 0245's fixture: the scripted agent calls one tool twice; an ``isError: true`` entry answers
the first call and a success the second."""

FIXTURE_FILES: Mapping[str, str] = {
    FIXTURE_ERROR: "fixtures/conformance-eval-fixture-error.json",
}
"""Each conformance fixture id and its suite, relative to the package's ``data`` folder."""


class UnknownFixtureError(KeyError):
    """No conformance fixture has this id."""


@cache
def _fixture_text(fixture_id: str) -> str:
    try:
        relative = FIXTURE_FILES[fixture_id]
    except KeyError:
        known = ", ".join(sorted(FIXTURE_FILES))
        raise UnknownFixtureError(
            f"no conformance fixture {fixture_id!r}; known: {known}"
        ) from None
    return read_text(f"data/{relative}")


def load_fixture(fixture_id: str) -> dict[str, Any]:
    """A fresh copy of the fixture's suite (callers may change it freely)."""
    suite: dict[str, Any] = parse_json(_fixture_text(fixture_id))
    return suite


def fixture_id_of(suite: Mapping[str, Any]) -> str | None:
    """The fixture id of a suite that is a conformance fixture (compared by ``suiteId``), so an
    HTTP adapter can reference the host's seeded copy instead of sending the suite."""
    suite_id = suite.get("suiteId")
    for fixture_id in FIXTURE_FILES:
        if load_fixture(fixture_id).get("suiteId") == suite_id:
            return fixture_id
    return None


def lists_fixture(capabilities: Mapping[str, Any], fixture_id: str) -> bool:
    """Whether a discovery document lists ``fixture_id`` in ``fixtures`` (unknown ids tolerated)."""
    listed = capabilities.get("fixtures")
    return isinstance(listed, list) and fixture_id in listed
