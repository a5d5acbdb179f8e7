"""Eval fixture replay (RFC 0244 §D, RFC 0245): the fixture server, run-create checks, event log,
scripted conformance agent, scoring, and promotion of a recorded run into a replayable suite.
The reference host that runs them lives in ``toolcall_spec.host``."""

from __future__ import annotations

from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID, ScriptedAgent, ToolAnswer
from toolcall_spec.replay.fixtures import MISS, FixtureServer, Miss, Served
from toolcall_spec.replay.matching import args_match
from toolcall_spec.replay.refusal import RUN_CREATE_CHECKS, RunRefused, RunRequest

__all__ = [
    "MISS",
    "RUN_CREATE_CHECKS",
    "SCRIPTED_AGENT_ID",
    "FixtureServer",
    "Miss",
    "RunRefused",
    "RunRequest",
    "ScriptedAgent",
    "Served",
    "ToolAnswer",
    "args_match",
]
