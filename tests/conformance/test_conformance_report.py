"""The three report formats: the text table, JSON, and JUnit XML parsed back (one testcase per
leg, failures as <failure>, blocked as <error>, inapplicable and skipped as <skipped>)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import orjson
import pytest

from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.report import as_json, render_junit, render_text
from toolcall_spec.conformance.runner import HostVerdict, LegResult, Report

IDS = [
    "toolcall-spec.requirement.suite.is-error-boolean",
    "openwop.requirement.0245.fixture-error-replayed",
    "openwop.requirement.0245.unadvertised-refused",
    "toolcall-spec.requirement.replay.error-never-live",
    "toolcall-spec.requirement.events.log-order",
]
OUTCOMES = [
    Outcome.EXECUTED_PASS,
    Outcome.EXECUTED_FAIL,
    Outcome.INAPPLICABLE,
    Outcome.SKIPPED,
    Outcome.BLOCKED,
]


@pytest.fixture
def mixed() -> Report:
    """One leg of each outcome; the failure's reason quotes a host answer with control
    characters and markup."""
    reasons = [
        "fine",
        'the host said <b>"no"</b> & \x00\x1b[31m',
        "the host advertises agents.evalSuite.fixtureErrors",
        "the host does not expose the live invocation counts seam",
        "ConnectionError: gone",
    ]
    results = tuple(
        LegResult(rid, outcome, reason, "h", "", (HostVerdict("h", outcome, reason),))
        for rid, outcome, reason in zip(IDS, OUTCOMES, reasons, strict=True)
    )
    return Report(("h",), False, results)


def test_text_lists_every_leg_with_its_outcome_in_one_column(mixed: Report) -> None:
    lines = render_text(mixed).splitlines()
    column = next(line for line in lines if line.startswith("REQUIREMENT")).index("OUTCOME")
    for rid, outcome in zip(IDS, OUTCOMES, strict=True):
        (line,) = [line for line in lines if line.startswith(rid)]
        assert line[column:].startswith(outcome.value)
    assert "5 legs: 1 executed-pass, 1 executed-fail, 1 skipped, 1 inapplicable, 1 blocked" in lines
    assert lines[-1] == "FAILED: 1 executed-fail, 1 blocked"


def test_json_carries_every_leg_and_the_counts(mixed: Report) -> None:
    document = orjson.loads(orjson.dumps(as_json(mixed)))
    assert document["passed"] is False
    assert document["counts"] == {o.value: 1 for o in Outcome}
    assert [leg["id"] for leg in document["legs"]] == IDS
    assert [leg["outcome"] for leg in document["legs"]] == [o.value for o in OUTCOMES]
    assert document["legs"][1]["hosts"] == [
        {"host": "h", "outcome": "executed-fail", "reason": document["legs"][1]["reason"]}
    ]


def test_junit_parses_back_with_one_testcase_per_leg(mixed: Report) -> None:
    root = ET.fromstring(render_junit(mixed).encode())
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == IDS
    assert {case.get("classname") for case in cases} == {"toolcall-spec.conformance"}
    children = [[child.tag for child in case] for case in cases]
    assert children == [["system-out"], ["failure"], ["skipped"], ["skipped"], ["error"]]
    counts = {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")}
    assert counts == {"tests": "5", "failures": "1", "errors": "1", "skipped": "2"}
    failure = cases[1].find("failure")
    assert failure is not None
    assert '<b>"no"</b> &' in (failure.get("message") or "")  # escaped, then read back intact
    assert "\x00" not in (failure.text or "")
    skipped = cases[2].find("skipped")
    assert skipped is not None
    assert (skipped.get("message") or "").startswith("inapplicable: ")


def test_a_passing_report_says_so() -> None:
    result = LegResult(IDS[0], Outcome.EXECUTED_PASS, "fine", "h")
    report = Report(("h",), True, (result,))
    assert render_text(report).splitlines()[-1] == "PASSED: no leg failed or blocked"
    assert "(strict)" in render_text(report).splitlines()[0]
    assert as_json(report)["passed"] is True
    root = ET.fromstring(render_junit(report).encode())
    properties = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert properties["strict"] == "true"


def test_a_blocked_leg_alone_fails_the_report() -> None:
    result = LegResult(IDS[0], Outcome.BLOCKED, "HostError: 401", "h")
    report = Report(("h",), False, (result,))
    assert report.failed
    assert render_text(report).splitlines()[-1] == "FAILED: 1 blocked"
    assert as_json(report)["passed"] is False
