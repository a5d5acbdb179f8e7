"""Moved: the conformance fixture registry is ``toolcall_spec.host.fixtures`` (hosts seed the
fixtures; conformance reads them). This module keeps the old import path working."""

from __future__ import annotations

from toolcall_spec.host.fixtures import (
    FIXTURE_ERROR,
    FIXTURE_FILES,
    UnknownFixtureError,
    fixture_id_of,
    lists_fixture,
    load_fixture,
)

__all__ = [
    "FIXTURE_ERROR",
    "FIXTURE_FILES",
    "UnknownFixtureError",
    "fixture_id_of",
    "lists_fixture",
    "load_fixture",
]
