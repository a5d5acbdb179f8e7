"""The ground truth of the peers comparison (``nox -s peers``, benchmarks/peers/): the probe
server, on each framework and over each transport, really gives the real ``mcp`` client 22 calls
of which exactly the 14 planned ones are errors, and the comparison's reader attributes what a
peer records to the right call. No peer is installed here."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peers.analyse import mentioned_tools, summarise
from benchmarks.peers.drive import TRANSPORTS, run_once
from benchmarks.peers.probe import (
    CALLS,
    EMAIL,
    ERROR_CLASSES,
    FRAMEWORKS,
    INVALID_ARGUMENTS,
    IS_ERROR,
    RAISED,
    SUCCESS,
    UNKNOWN_TOOL,
)


def test_the_probe_plans_22_calls_14_of_them_errors_each_named_apart() -> None:
    kinds = Counter(call.kind for call in CALLS)
    assert len(CALLS) == 22
    assert kinds == {SUCCESS: 8, IS_ERROR: 6, RAISED: 4, UNKNOWN_TOOL: 2, INVALID_ARGUMENTS: 2}
    assert sum(call.is_error for call in CALLS) == 14
    # Each call is found by its tool name alone, and no name is found inside another's.
    for call in CALLS:
        assert mentioned_tools(f"tools/call {call.tool}") == {call.tool}


def _framework_installed(framework: str) -> None:
    if framework == "fastmcp":
        pytest.importorskip("fastmcp", minversion="4")


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_real_client_receives_the_planned_errors(
    framework: str, transport: str, tmp_path: Path
) -> None:
    _framework_installed(framework)
    run = run_once("bare", framework, transport, tmp_path)

    assert run.failure is None
    assert [outcome.tool for outcome in run.outcomes] == [call.tool for call in CALLS]
    received = {outcome.tool: outcome.error for outcome in run.outcomes}
    assert received == {call.tool: call.is_error for call in CALLS}
    errors = Counter(outcome.kind for outcome in run.outcomes if outcome.error)
    assert errors == {IS_ERROR: 6, RAISED: 4, UNKNOWN_TOOL: 2, INVALID_ARGUMENTS: 2}
    # The tools' own failure texts carry the user's address: the PII check has something to find.
    with_address = {o.tool for o in run.outcomes if o.kind == IS_ERROR and EMAIL in o.text}
    assert with_address == {call.tool for call in CALLS if call.kind == IS_ERROR}


def _span(name: str, status: str = "UNSET", **attributes: Any) -> dict[str, Any]:
    return {"kind": "span", "name": name, "attributes": attributes, "status": status}


def test_the_reader_counts_a_span_error_by_status_or_error_type_and_skips_ambiguous_spans() -> None:
    records = [
        _span("tools/call refund_order", "ERROR"),
        _span("tools/call notify_customer", **{"error.type": "RuntimeError"}),
        _span("tools/call sum_numbers"),
        # Mentions two tools (a tools/list, say): attributed to neither.
        _span("tools/list", "ERROR", names="sum_numbers echo_text"),
        {"kind": "span", "name": "tools/call echo_text", "status": "UNSET", "attributes": {}},
    ]
    summary = summarise(records)

    assert summary["calls_seen"] == 4
    assert summary["errors_recorded"] == 2
    assert summary["successes_recorded_as_errors"] == 0
    assert summary["per_class"][IS_ERROR]["became"] == {
        "ERROR without error.type": 1,
        "not seen": 5,
    }
    assert summary["per_class"][RAISED]["became"] == {"RuntimeError": 1, "not seen": 3}
    assert set(summary["per_class"]) == {SUCCESS, *ERROR_CLASSES}


def test_the_reader_finds_the_address_in_a_recorded_error_message() -> None:
    leaking = _span("tools/call charge_card", "ERROR")
    leaking["description"] = f"card of {EMAIL} declined for 12 EUR"
    clean = _span("tools/call charge_card", "ERROR")
    clean["description"] = "card of <EMAIL> declined for 12 EUR"

    assert summarise([leaking])["pii_in_error_messages"] is True
    assert summarise([leaking])["raised_with_own_message"] == 1
    assert summarise([clean])["pii_in_error_messages"] is False


def test_the_reader_counts_this_packages_events_by_status_and_labels_them_by_category() -> None:
    records = [
        {"kind": "toolcall_event", "event": {"event_name": "sync_contacts", "status": "success"}},
        {
            "kind": "toolcall_event",
            "event": {
                "event_name": "export_report",
                "status": "error",
                "error_category": "unknown",
                "error_message": "[EMAIL_REDACTED] may not export Q3",
            },
        },
    ]
    summary = summarise(records)

    assert summary["per_class"][RAISED]["recorded_as_error"] == 1
    assert summary["per_class"][RAISED]["became"] == {"success": 1, "unknown": 1, "not seen": 2}
    assert summary["raised_with_own_message"] == 1
    assert summary["pii_in_error_messages"] is False


def test_the_reader_takes_agentcats_is_error_and_its_error_type() -> None:
    event = {
        "resource_name": "charge_card",
        "is_error": True,
        "error": {"message": f"card of {EMAIL} declined", "type": "UnexpectedToolError"},
    }
    summary = summarise([{"kind": "agentcat", "event": event}])

    assert summary["calls"]["charge_card"]["became"] == "UnexpectedToolError"
    assert summary["pii_in_error_messages"] is True


def test_the_reader_counts_a_sentry_error_event_and_not_an_ok_transaction() -> None:
    transaction = {
        "transaction": "tools/call refund_order",
        "contexts": {"trace": {"status": "ok", "data": {"mcp.tool.name": "refund_order"}}},
        "spans": [],
    }
    logged = {
        "level": "error",
        "logentry": {"formatted": "Tool 'sync_contacts' raised an unexpected exception"},
        "exception": {
            "values": [
                {
                    "type": "ConnectionError",
                    "value": f"address book of {EMAIL} unreachable",
                    "mechanism": {"type": "logging"},
                    # Stack frames quote the probe's source, which names other tools: not read.
                    "stacktrace": {"frames": [{"context_line": "def sum_numbers(a, b):"}]},
                }
            ]
        },
    }
    records = [
        {"kind": "sentry", "type": "transaction", "payload": transaction},
        {"kind": "sentry", "type": "event", "payload": logged},
    ]
    summary = summarise(records)

    assert summary["calls"]["refund_order"] | {"messages": []} == {
        "kind": IS_ERROR,
        "seen": True,
        "error": False,
        "became": "success",
        "messages": [],
    }
    assert summary["calls"]["sync_contacts"]["became"] == "logging event"
    assert summary["calls"]["sum_numbers"]["seen"] is False
    assert summary["errors_recorded"] == 1
    assert summary["pii_in_error_messages"] is True
