"""Capability discovery documents."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    DIGITS,
    EVAL_MODES,
    LOWER,
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_objects,
    json_values,
    objects_of,
    pattern_words,
)
from toolcall_spec.catalog import all_schemas

# --- capabilities -------------------------------------------------------------------------------

_witnesses = st.sampled_from(
    ["witnessable-unaided", "witnessable-gated", "seam-gated", "claims-check", "negative-existence"]
)
_minors = st.builds("{}.{}".format, st.integers(0, 99), st.integers(0, 99))
untils = _minors | st.dates().map(date.isoformat).filter(lambda d: len(d) == 10)


def _capability_records(
    facets: Mapping[str, st.SearchStrategy[Any]] | None = None, *, open_facets: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Family records: ``until`` exactly when the record is not stable; ``facets`` beside the
    record members, and foreign facets too when the family is one this package leaves open."""
    members = objects_of(
        {"since": _minors, "witness": _witnesses},
        dict(facets or {}),
        open_values=json_values(1) if open_facets else None,
    )

    @st.composite
    def records(draw: Draw) -> dict[str, Any]:
        record = draw(members)
        record["status"] = draw(st.sampled_from(["stable", "experimental", "deprecated"]))
        record.pop("until", None)
        if record["status"] != "stable":
            record["until"] = draw(untils)
        return record

    return records()


_eval_suite_capability = objects_of(
    {},
    {
        "modes": st.lists(st.sampled_from(EVAL_MODES), unique=True),
        "maxTasksPerSuite": json_integers(1),
        "maxCostUsdPerSuite": json_numbers(0),
        "fixtureMatching": st.booleans(),
        "fixtureErrors": st.booleans(),
        "baselineSelection": st.booleans(),
        "recordedFixtures": st.booleans(),
    },
)

_DISCOVERY = all_schemas()["capabilities/discovery.schema.json"]
OTHER_FAMILIES = tuple(
    name
    for name, member in _DISCOVERY["properties"].items()
    if member.get("$ref") == "#/$defs/CapabilityRecord"
)
"""The OpenWOP v2 families this package checks as bare records (their facets stay open)."""
UNCHECKED_METADATA = tuple(
    name for name, member in _DISCOVERY["properties"].items() if set(member) == {"description"}
)
UNCHECKED_AGENT_FACETS = tuple(
    name
    for name, member in _DISCOVERY["$defs"]["AgentsFamily"]["properties"].items()
    if set(member) == {"description"}
)
_extension_keys = st.builds(
    "{}.{}".format, pattern_words(LOWER, LOWER + DIGITS, 5), pattern_words(LOWER, LOWER + DIGITS, 5)
)

capabilities = st.tuples(
    objects_of(
        {
            "protocolVersions": st.lists(_minors, min_size=1, max_size=3, unique=True),
            "preferredVersion": _minors,
        },
        {
            "protocolVersion": _minors,
            "extensions": st.dictionaries(_extension_keys, json_objects, max_size=2),
            "implementation": objects_of(
                {},
                {
                    "name": free_text(),
                    "version": free_text(),
                    "vendor": free_text(),
                    "url": st.just("https://example.com/h"),
                },
            ),
            "engineVersion": json_integers(0),
            "eventLogSchemaVersion": json_integers(2),
            "conformance": objects_of(
                {},
                {
                    "mockAgent": st.booleans(),
                    "certificationBundleUrl": st.just("https://example.com/bundle.json"),
                    "seamsProfile": st.just("openwop-conformance-seams-v2"),
                },
            ),
            "fixtures": st.lists(free_text(1), max_size=3, unique=True),
            "agents": _capability_records(
                {
                    "evalSuite": _eval_suite_capability,
                    **{facet: json_values(1) for facet in UNCHECKED_AGENT_FACETS},
                }
            ),
            "toolHooks": _capability_records(
                {
                    "prePostEvents": st.booleans(),
                    "perToolAuthorization": st.booleans(),
                    "perToolRateLimit": st.booleans(),
                }
            ),
            **{member: json_values(1) for member in UNCHECKED_METADATA},
        },
    ),
    # Other families: records whose facets this package leaves open.
    st.dictionaries(
        st.sampled_from(OTHER_FAMILIES), _capability_records(open_facets=True), max_size=2
    ),
).map(lambda parts: {**parts[1], **parts[0]})
