"""What a host advertises in its discovery document, asked in one place.

A capability is named by its member path in the discovery document
(schemas/capabilities/discovery.schema.json): ``("agents", "evalSuite", "fixtureErrors")``.
Advertising takes the literal ``true`` for a boolean member, or the presence of an object (a
family record or facet). Run-create refusal, the reference host and the conformance gates all ask
through the paths and queries below.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolcall_spec.rules import is_literal_true

CapabilityPath = tuple[str, ...]

EVAL_SUITE: CapabilityPath = ("agents", "evalSuite")
"""The eval-suite facet (RFC 0244): its members below are the optional features."""
FIXTURE_ERRORS: CapabilityPath = (*EVAL_SUITE, "fixtureErrors")
"""Fixture entries may carry ``isError: true`` (RFC 0245 §C)."""
FIXTURE_MATCHING: CapabilityPath = (*EVAL_SUITE, "fixtureMatching")
"""Fixture entries may match on ``args``/``argsMatch`` (RFC 0244 §D, §G)."""
BASELINE_SELECTION: CapabilityPath = (*EVAL_SUITE, "baselineSelection")
"""A run may name ``evalModes`` and a ``baselineRunId`` (RFC 0251 §A)."""
RECORDED_FIXTURES: CapabilityPath = (*EVAL_SUITE, "recordedFixtures")
"""A run may replay a finished run's tool answers as ``fixtureRuns`` (RFC 0252)."""
EVAL_MODES: CapabilityPath = (*EVAL_SUITE, "modes")
"""The eval modes the host runs (a list of names, not a flag)."""
PRE_POST_EVENTS: CapabilityPath = ("toolHooks", "prePostEvents")
"""Tool events carry the RFC 0064 pre/post members."""


def dotted(path: CapabilityPath) -> str:
    """A capability path as the docs and messages spell it: ``agents.evalSuite.fixtureErrors``."""
    return ".".join(path)


def member(capabilities: Mapping[str, Any], path: CapabilityPath) -> Any:
    """The value at ``path`` in a discovery document, or ``None`` when any step is missing."""
    node: Any = capabilities
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def advertises(capabilities: Mapping[str, Any], path: CapabilityPath) -> bool:
    """Whether a discovery document advertises the capability at ``path``: the literal ``true``,
    or an object there."""
    node = member(capabilities, path)
    return is_literal_true(node) or isinstance(node, Mapping)


def advertised_modes(capabilities: Mapping[str, Any]) -> list[str]:
    """The eval modes listed in ``agents.evalSuite.modes`` (empty when absent or malformed)."""
    modes = member(capabilities, EVAL_MODES)
    return [m for m in modes if isinstance(m, str)] if isinstance(modes, list) else []


def without(capabilities: Mapping[str, Any], path: CapabilityPath) -> dict[str, Any]:
    """A deep copy of ``capabilities`` that no longer advertises the member at ``path``."""
    document = copy.deepcopy(dict(capabilities))
    parent = member(document, path[:-1])
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    return document
