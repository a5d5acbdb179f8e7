"""Every run-create check, in one place (RFC 0244 §G as DESIGN.md reads it, RFC 0245 §C).

Before anything runs, a host checks the run request against its own discovery document. Each rule
is one small function ``check_*(request) -> RunRefused | None``; ``RUN_CREATE_CHECKS`` lists them
in the order they run, and the first refusal wins. A refusal is ``400 validation_error`` with the
flat error envelope, whose message and ``details.field`` name the full path of the offending member.
A host that must behave differently (a test's mutant host) passes its own tuple of checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolcall_spec.paths import format_path
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID, script_problems
from toolcall_spec.rules import advertises, is_tool_error
from toolcall_spec.validation import validate

VALIDATION_ERROR = "validation_error"
MAX_LISTED_PROBLEMS = 20
"""An invalid suite's refusal lists at most this many schema problems in ``details.problems``."""


class RunRefused(Exception):  # noqa: N818  (the name the host API promises)
    """A run-create refusal: ``status`` (HTTP), ``field`` (full path) and the error ``envelope``."""

    def __init__(self, field: str, reason: str, **details: Any) -> None:
        self.status = 400
        self.field = field
        self.message = f"{field}: {reason}"
        self.envelope: dict[str, Any] = {
            "error": VALIDATION_ERROR,
            "message": self.message,
            "details": {"field": field, **details},
        }
        super().__init__(self.message)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a run-create check sees: the suite, the host's capabilities, the mode and the agent."""

    suite: Any
    capabilities: Mapping[str, Any]
    mode: str
    agent_id: str = SCRIPTED_AGENT_ID
    baseline_run_id: str | None = None
    finished_run_ids: frozenset[str] = frozenset()
    """Runs the host has finished: a regression run's baseline must be one of them."""

    def tasks(self) -> list[Any]:
        tasks = self.suite.get("tasks") if isinstance(self.suite, Mapping) else None
        return tasks if isinstance(tasks, list) else []

    def entries(self) -> Iterator[tuple[list[str | int], Mapping[str, Any]]]:
        """``(path, entry)`` of every fixture entry of every task, in declaration order."""
        for t, task in enumerate(self.tasks()):
            fixtures = task.get("fixtures") if isinstance(task, Mapping) else None
            responses = fixtures.get("toolResponses") if isinstance(fixtures, Mapping) else None
            for e, entry in enumerate(responses if isinstance(responses, list) else []):
                if isinstance(entry, Mapping):
                    yield ["tasks", t, "fixtures", "toolResponses", e], entry


Check = Callable[[RunRequest], "RunRefused | None"]


def _eval_suite(capabilities: Mapping[str, Any]) -> Mapping[str, Any]:
    agents = capabilities.get("agents")
    eval_suite = agents.get("evalSuite") if isinstance(agents, Mapping) else None
    return eval_suite if isinstance(eval_suite, Mapping) else {}


def check_suite_validates(request: RunRequest) -> RunRefused | None:
    """The suite is valid against the suite schema (warnings do not refuse)."""
    errors = [p for p in validate(request.suite, "suite") if p.severity == "error"]
    if not errors:
        return None
    listed = [problem.as_dict() for problem in errors[:MAX_LISTED_PROBLEMS]]
    return RunRefused(errors[0].path, errors[0].message, problems=listed)


def check_agent_known(request: RunRequest) -> RunRefused | None:
    """The host runs the requested agent (the reference host has the scripted agent only)."""
    if request.agent_id == SCRIPTED_AGENT_ID:
        return None
    return RunRefused(
        "agentId", f"this host runs only the agent {SCRIPTED_AGENT_ID}", agentId=request.agent_id
    )


def check_mode_declared(request: RunRequest) -> RunRefused | None:
    """A run may only request a mode the suite declares."""
    declared = request.suite.get("modes") if isinstance(request.suite, Mapping) else None
    if isinstance(declared, list) and request.mode in declared:
        return None
    return RunRefused(
        "mode", f"the suite does not declare the mode {request.mode!r}", mode=request.mode
    )


def check_mode_advertised(request: RunRequest) -> RunRefused | None:
    """A run may only request a mode the host advertises in ``agents.evalSuite.modes``."""
    advertised = _eval_suite(request.capabilities).get("modes")
    if isinstance(advertised, list) and request.mode in advertised:
        return None
    return RunRefused(
        "mode",
        f"the host does not advertise the mode {request.mode!r} in agents.evalSuite.modes",
        mode=request.mode,
    )


def check_task_limit(request: RunRequest) -> RunRefused | None:
    """A suite has at most ``agents.evalSuite.maxTasksPerSuite`` tasks, when the host sets one."""
    limit = _eval_suite(request.capabilities).get("maxTasksPerSuite")
    if not isinstance(limit, int) or len(request.tasks()) <= limit:
        return None
    return RunRefused(
        "tasks",
        f"the suite has {len(request.tasks())} tasks; the host runs at most {limit} per suite",
        maxTasksPerSuite=limit,
    )


def check_agent_inputs(request: RunRequest) -> RunRefused | None:
    """Every task input is a script the scripted agent can run."""
    for t, task in enumerate(request.tasks()):
        task_input = task.get("input") if isinstance(task, Mapping) else None
        for problem in script_problems(task_input, ["tasks", t, "input"]):
            return RunRefused(problem.path, problem.message)
    return None


def check_task_ids_unique(request: RunRequest) -> RunRefused | None:
    """Task ids are unique: they key the summary, the scores and what the agent saw."""
    seen: set[str] = set()
    for t, task in enumerate(request.tasks()):
        task_id = task.get("taskId") if isinstance(task, Mapping) else None
        if task_id in seen:
            return RunRefused(format_path(["tasks", t, "taskId"]), "a task id appears twice")
        if isinstance(task_id, str):
            seen.add(task_id)
    return None


def check_baseline(request: RunRequest) -> RunRefused | None:
    """A baseline is only for a ``regression`` run, and names a run this host finished."""
    baseline = request.baseline_run_id
    if baseline is None:
        return None
    if request.mode != "regression":
        return RunRefused("baselineRunId", "a baseline run is only for the regression mode")
    if baseline not in request.finished_run_ids:
        return RunRefused("baselineRunId", "no finished run of this host has this id")
    return None


def check_fixture_matching(request: RunRequest) -> RunRefused | None:
    """``args``/``argsMatch`` need ``agents.evalSuite.fixtureMatching`` (RFC 0244 §D, §G)."""
    if advertises(request.capabilities, "agents", "evalSuite", "fixtureMatching"):
        return None
    for path, entry in request.entries():
        member = next((name for name in ("args", "argsMatch") if name in entry), None)
        if member is not None:
            return RunRefused(
                format_path([*path, member]),
                "the host does not advertise agents.evalSuite.fixtureMatching, "
                "so it cannot match fixture entries on their arguments",
            )
    return None


def check_fixture_errors(request: RunRequest) -> RunRefused | None:
    """Any ``isError: true`` entry needs ``agents.evalSuite.fixtureErrors`` (RFC 0245 §C)."""
    if advertises(request.capabilities, "agents", "evalSuite", "fixtureErrors"):
        return None
    for path, entry in request.entries():
        if is_tool_error(entry):
            return RunRefused(
                format_path([*path, "isError"]),
                "the host does not advertise agents.evalSuite.fixtureErrors, "
                "so it cannot replay a recorded tool error",
            )
    return None


RUN_CREATE_CHECKS: tuple[Check, ...] = (
    check_suite_validates,
    check_agent_known,
    check_mode_declared,
    check_mode_advertised,
    check_task_limit,
    check_task_ids_unique,
    check_baseline,
    check_agent_inputs,
    check_fixture_matching,
    check_fixture_errors,
)
"""Every run-create check, in the order it runs. The schema comes first: the others then read a
well-formed suite (they stay defensive for hosts that drop it)."""


def first_refusal(
    request: RunRequest, checks: tuple[Check, ...] = RUN_CREATE_CHECKS
) -> RunRefused | None:
    """The refusal of the first failing check, or ``None`` when the run may start."""
    for check in checks:
        refusal = check(request)
        if refusal is not None:
            return refusal
    return None
