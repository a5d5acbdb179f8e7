"""``valid_documents(kind)``: the family generators by kind."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.analytics import ingest_answers, ingest_batches, tool_call_events
from support.strategies.capabilities import capabilities
from support.strategies.events import error_envelopes, eval_summaries, run_events
from support.strategies.mcp import call_tool_results
from support.strategies.suites import suites
from toolcall_spec.catalog import Kind

_VALID: dict[Kind, st.SearchStrategy[Any]] = {
    "suite": suites,
    "capabilities": capabilities,
    "run-event": run_events,
    "eval-summary": eval_summaries,
    "error-envelope": error_envelopes,
    "call-tool-result": call_tool_results,
    "tool-call-event": tool_call_events,
    "ingest-batch": ingest_batches,
    "ingest-answer": ingest_answers,
}


def valid_documents(kind: Kind) -> st.SearchStrategy[Any]:
    """Documents the schema of ``kind`` accepts."""
    return _VALID[kind]
