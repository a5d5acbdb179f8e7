"""Rendering a conformance report: a text table for people, JSON for tools, JUnit XML for CI.

JUnit mapping: one ``testcase`` per leg; ``executed-fail`` is a ``<failure>``, ``blocked`` an
``<error>`` (the leg could not finish), ``inapplicable`` and ``skipped`` are ``<skipped>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.runner import LegResult, Report

JUNIT_CLASS = "toolcall-spec.conformance"

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML 1.0 cannot carry; a host's answer quoted in a reason may contain them."""


def counts_line(report: Report) -> str:
    counts = report.counts()
    parts = [f"{n} {outcome}" for outcome, n in counts.items() if n]
    noun = "leg" if len(report.results) == 1 else "legs"
    return f"{len(report.results)} {noun}: {', '.join(parts) or 'none run'}"


def render_text(report: Report) -> str:
    """A table: requirement id, outcome, reason; then the counts and the verdict."""
    id_width = max((len(r.requirement_id) for r in report.results), default=11)
    outcome_width = max(len(o.value) for o in Outcome)
    lines = [
        f"toolcall-spec conformance against: {'; '.join(report.hosts)}"
        + (" (strict)" if report.strict else ""),
        "",
        f"{'REQUIREMENT':<{id_width}}  {'OUTCOME':<{outcome_width}}  REASON",
    ]
    for result in report.results:
        lines.append(
            f"{result.requirement_id:<{id_width}}  {result.outcome.value:<{outcome_width}}  "
            f"{result.reason}"
        )
    counts = report.counts()
    bad = [
        f"{counts[o.value]} {o.value}"
        for o in (Outcome.EXECUTED_FAIL, Outcome.BLOCKED)
        if counts[o.value]
    ]
    verdict = f"FAILED: {', '.join(bad)}" if report.failed else "PASSED: no leg failed or blocked"
    lines += ["", counts_line(report), verdict]
    return "\n".join(lines) + "\n"


def as_json(report: Report) -> dict[str, Any]:
    return {
        "hosts": list(report.hosts),
        "strict": report.strict,
        "passed": not report.failed,
        "counts": report.counts(),
        "legs": [_leg_json(result) for result in report.results],
    }


def _leg_json(result: LegResult) -> dict[str, Any]:
    return {
        "id": result.requirement_id,
        "outcome": result.outcome.value,
        "reason": result.reason,
        "host": result.host,
        "checks": result.summary,
        "hosts": [
            {"host": v.host, "outcome": v.outcome.value, "reason": v.reason}
            for v in result.per_host
        ],
    }


def _xml_text(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def render_junit(report: Report) -> str:
    """JUnit XML (one ``testsuite``, one ``testcase`` per leg) as a string with a declaration."""
    counts = report.counts()
    totals = {
        "tests": str(len(report.results)),
        "failures": str(counts[Outcome.EXECUTED_FAIL.value]),
        "errors": str(counts[Outcome.BLOCKED.value]),
        "skipped": str(counts[Outcome.SKIPPED.value] + counts[Outcome.INAPPLICABLE.value]),
    }
    root = ET.Element("testsuites", {"name": "toolcall-spec conformance", **totals})
    suite = ET.SubElement(root, "testsuite", {"name": "toolcall-spec conformance", **totals})
    properties = ET.SubElement(suite, "properties")
    for host in report.hosts:
        ET.SubElement(properties, "property", {"name": "host", "value": _xml_text(host)})
    ET.SubElement(properties, "property", {"name": "strict", "value": str(report.strict).lower()})
    for result in report.results:
        case = ET.SubElement(
            suite, "testcase", {"classname": JUNIT_CLASS, "name": result.requirement_id}
        )
        reason = _xml_text(result.reason)
        if result.outcome is Outcome.EXECUTED_FAIL:
            failure = ET.SubElement(case, "failure", {"message": reason, "type": "executed-fail"})
            failure.text = reason
        elif result.outcome is Outcome.BLOCKED:
            error = ET.SubElement(case, "error", {"message": reason, "type": "blocked"})
            error.text = reason
        elif result.outcome in (Outcome.SKIPPED, Outcome.INAPPLICABLE):
            ET.SubElement(case, "skipped", {"message": f"{result.outcome.value}: {reason}"})
        else:
            ET.SubElement(case, "system-out").text = reason
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'
