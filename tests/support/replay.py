"""Test helpers for the replay tests: the pure-Python jsonschema oracle, a fixed clock and id
source, and an independent model of fixture serving that the properties compare the host with.

The model is deliberately naive (a linear scan over all entries, JSON equality by canonical text)
so that it shares no code with ``toolcall_spec.replay``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from support.checks import default_oracle
from support.repo import EXAMPLES
from toolcall_spec.catalog import Kind, validator

if TYPE_CHECKING:
    from toolcall_spec.host import ReferenceHost

TOOL_FAILED_CODE = "toolcall-spec.tool_failed"
VENDOR_CODE = r"^(?!openwop\.)[a-z][a-z0-9]*(-[a-z0-9]+)*\.[a-z][a-z0-9_]*$"


def oracle_errors(kind: Kind, document: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in default_oracle(kind).iter_errors(document)
    ]


def schema_errors(kind: Kind, document: Any) -> list[str]:
    """Fast check first (jsonschema-rs, the package's compiled validator, which never sees what the
    host did), the oracle's messages only when it fails: properties run thousands of events."""
    if validator(kind).is_valid(document):
        return []
    return oracle_errors(kind, document) or ["jsonschema-rs rejects it; the oracle does not"]


def example(relative: str) -> Any:
    return json.loads((EXAMPLES / relative).read_text())


class FixedClock:
    """A clock that advances ``step`` per reading from a fixed start: runs are reproducible."""

    def __init__(self, step_ms: int = 5) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
        self.step = timedelta(milliseconds=step_ms)

    def __call__(self) -> datetime:
        reading = self.now
        self.now += self.step
        return reading


def counter_ids(prefix: str = "run") -> Any:
    count = iter(range(1, 1_000_000))
    # zero-padded: an OpenWOP opaque id is 16 to 128 characters
    return lambda: f"{prefix}-{next(count):012d}"


# --- the independent model ---------------------------------------------------------------------


def canonical(value: Any) -> str:
    """JSON text with sorted keys and integral floats written as integers: two values are equal
    as JSON values exactly when their canonical texts are equal (booleans stay ``true``)."""

    def normal(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, dict):
            return {k: normal(x) for k, x in v.items()}
        if isinstance(v, list):
            return [normal(x) for x in v]
        return v

    return json.dumps(normal(value), sort_keys=True)


def model_matches(entry: dict[str, Any], tool: str, args: dict[str, Any]) -> bool:
    if entry["tool"] != tool:
        return False
    if "args" not in entry:
        return True
    if entry.get("argsMatch") == "subset":
        return all(
            k in args and canonical(v) == canonical(args[k]) for k, v in entry["args"].items()
        )
    return canonical(entry["args"]) == canonical(args)


@dataclass
class ModelCall:
    tool: str
    entry: int | None  # index of the served entry, if one was served
    miss: bool  # counts toward fixtureMissCount
    is_error: bool  # the agent receives a tool error
    live: bool  # the live tool answers


@dataclass
class ModelTask:
    calls: list[ModelCall] = field(default_factory=list)

    @property
    def misses(self) -> int:
        return sum(1 for call in self.calls if call.miss)

    @property
    def live(self) -> int:
        return sum(1 for call in self.calls if call.live)


def model_task(task: dict[str, Any], mode: str = "golden") -> ModelTask:
    """What RFC 0244 §D / RFC 0245 say one task's calls get, from first principles."""
    fixtures = task.get("fixtures", {})
    entries = fixtures.get("toolResponses", [])
    on_miss = fixtures.get("onMiss", "fail")
    consumed = [False] * len(entries)
    out = ModelTask()
    for call in task["input"]["calls"]:
        tool, args = call["tool"], call.get("args", {})
        if mode == "live-shadow":
            out.calls.append(ModelCall(tool, None, False, False, True))
            continue
        chosen = next(
            (i for i, e in enumerate(entries) if not consumed[i] and model_matches(e, tool, args)),
            None,
        )
        if chosen is None:
            live = on_miss == "live"
            out.calls.append(ModelCall(tool, None, True, not live, live))
        else:
            consumed[chosen] = True
            is_error = entries[chosen].get("isError") is True
            out.calls.append(ModelCall(tool, chosen, False, is_error, False))
    return out


def tool_pairs(
    events: Sequence[Mapping[str, Any]],
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """``(tool-called, tool-returned)`` payload pairs in log order (asserting adjacency)."""
    for i, event in enumerate(events):
        if event["type"] == "agent.tool-called":
            returned = events[i + 1]
            assert returned["type"] == "agent.tool-returned"
            assert returned["payload"]["callId"] == event["payload"]["callId"]
            yield event["payload"], returned["payload"]


RUN_LOG_EXAMPLE = "events/rfc0245-run.jsonl"
"""The recorded log of the RFC 0245 positive example, as the reference host records it with a
fixed clock and ids (tests/host/test_reference_host.py keeps the file equal to a fresh
recording)."""


def record_example_run_log() -> str:
    from toolcall_spec.host import ReferenceHost

    host = ReferenceHost(clock=FixedClock(), ids=lambda: "run-000000000001", tenant="acme")
    run_id = host.create_run(example("suites/rfc0245-fail-then-succeed.json"))
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in host.events(run_id))


RFC0251_0252 = ("baselineSelection", "recordedFixtures")
"""The ``agents.evalSuite`` members of RFC 0251 (baseline selection) and RFC 0252 (recorded
fixtures)."""

H = TypeVar("H", bound="ReferenceHost")


def advertising(host: H, *members: str) -> H:
    """``host``, now also advertising these ``agents.evalSuite`` members. The host reads every
    flag from its document at each check, so this is the host that advertises them (set after
    construction: whether the discovery schema lists a member is the schema's business, checked
    by the schema tests, not the behaviour tested here)."""
    host.capabilities["agents"]["evalSuite"].update(dict.fromkeys(members, True))
    return host


def one_task_suite(
    entries: list[dict[str, Any]], suite_id: str = "demo.evals.serve", **fixtures: Any
) -> dict[str, Any]:
    """A suite of one task (``session-1``) whose fixtures are ``entries`` (and ``fixtures``'
    other members, e.g. ``onMiss``): what the serve-fixtures tests serve."""
    return {
        "suiteId": suite_id,
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "session-1",
                "input": {},
                "expected": {"kind": "golden"},
                "fixtures": {"toolResponses": entries, **fixtures},
            }
        ],
    }
