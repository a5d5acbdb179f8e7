"""Every run-create check, in one place (RFC 0244 §G as DESIGN.md reads it, RFC 0245 §C).

Before anything runs, a host checks the run request against its own discovery document. Each rule
is one small function ``check_*(request) -> RunRefused | None``; ``RUN_CREATE_CHECKS`` lists them
in the order they run, and the first refusal wins. A refusal is ``400 validation_error`` with the
flat error envelope, whose message and ``details.field`` name the full path of the offending member.
A host that must behave differently (a test's mutant host) passes its own tuple of checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolcall_spec.capabilities import (
    BASELINE_SELECTION,
    EVAL_SUITE,
    FIXTURE_ERRORS,
    FIXTURE_MATCHING,
    RECORDED_FIXTURES,
    advertised_modes,
    advertises,
    member,
)
from toolcall_spec.json_paths import format_path
from toolcall_spec.openwop_wire import (
    VALIDATION_ERROR,
    RunTransport,
    error_envelope,
    refusal_field,
)
from toolcall_spec.replay.agent import SCRIPTED_AGENT_ID, script_problems
from toolcall_spec.rules import is_tool_error
from toolcall_spec.validation import validate

DEFAULT_MODE = "golden"
MAX_LISTED_PROBLEMS = 20
"""An invalid suite's refusal lists at most this many schema problems in ``details.problems``."""


class RunRefused(Exception):  # noqa: N818  (the name the host API promises)
    """The one run-create refusal type: ``status`` (HTTP), ``field`` (the full path of what is
    refused, or ``None``) and the flat error ``envelope``. Checks return it; hosts raise it;
    adapters rebuild it from a host's answer (``from_envelope``)."""

    def __init__(self, field: str, reason: str, **details: Any) -> None:
        message = f"{field}: {reason}"
        self._set(
            400, field, error_envelope(VALIDATION_ERROR, message, {"field": field, **details})
        )

    def _set(self, status: int, field: str | None, envelope: Mapping[str, Any]) -> None:
        self.status = status
        self.field = field
        # A plain dict: adapters rebuild refusals from what any host answered.
        self.envelope: dict[str, Any] = dict(envelope)
        self.message = str(envelope.get("message", ""))
        Exception.__init__(self, self.message)

    @classmethod
    def from_envelope(cls, status: int, envelope: dict[str, Any]) -> RunRefused:
        """A refusal as a host answered it (status and envelope as sent)."""
        refused = cls.__new__(cls)
        refused._set(status, refusal_field(envelope), envelope)
        return refused


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One eval run to create: the suite and everything else the create asks for.

    ``modes`` comes from RFC 0251 ``evalModes``; ``mode`` is the one mode of a create without it
    (this package's ``evalMode`` member, or the in-process API), ``golden`` by default.
    ``fixture_runs`` is RFC 0252's ``{taskId: source runId}``; ``options`` the RunOptions members
    as sent (``configurable``, ``tags``, ``metadata``); ``transport`` is what ``run.started``
    records (``rest`` over HTTP)."""

    suite: Any
    agent_id: str = SCRIPTED_AGENT_ID
    mode: str = DEFAULT_MODE
    modes: tuple[str, ...] | None = None
    baseline_run_id: str | None = None
    fixture_runs: Mapping[str, str] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    owner: Mapping[str, Any] | None = None
    transport: RunTransport | None = None

    @property
    def effective_modes(self) -> tuple[str, ...]:
        return self.modes if self.modes is not None else (self.mode,)

    @property
    def modes_field(self) -> str:
        """The member a mode refusal names: ``evalModes`` when sent, else ``mode``."""
        return "evalModes" if self.modes is not None else "mode"


@dataclass(frozen=True, slots=True)
class CheckContext:
    """What a run-create check sees: the request, the host's capabilities, the runs the host has
    finished and, per task id of ``fixtureRuns``, the recorded entries of a usable source run."""

    request: RunRequest
    capabilities: Mapping[str, Any]
    finished_run_ids: frozenset[str] = frozenset()
    recorded: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)

    @property
    def suite(self) -> Any:
        return self.request.suite

    def tasks(self) -> list[Any]:
        tasks = self.suite.get("tasks") if isinstance(self.suite, Mapping) else None
        return tasks if isinstance(tasks, list) else []

    def entries(self) -> Iterator[tuple[list[str | int], Mapping[str, Any]]]:
        """``(path, entry)`` of every fixture entry the run would serve, in declaration order: a
        task's own entries, or those recorded by its ``fixtureRuns`` source run."""
        for t, task in enumerate(self.tasks()):
            task_id = task.get("taskId") if isinstance(task, Mapping) else None
            if isinstance(task_id, str) and task_id in self.recorded:
                for e, entry in enumerate(self.recorded[task_id]):
                    yield ["fixtureRuns", task_id, e], entry
                continue
            fixtures = task.get("fixtures") if isinstance(task, Mapping) else None
            responses = fixtures.get("toolResponses") if isinstance(fixtures, Mapping) else None
            for e, entry in enumerate(responses if isinstance(responses, list) else []):
                if isinstance(entry, Mapping):
                    yield ["tasks", t, "fixtures", "toolResponses", e], entry


Check = Callable[[CheckContext], "RunRefused | None"]


def check_suite_validates(request: CheckContext) -> RunRefused | None:
    """The suite is valid against the suite schema (warnings do not refuse)."""
    errors = [p for p in validate(request.suite, "suite") if p.severity == "error"]
    if not errors:
        return None
    listed = [problem.as_dict() for problem in errors[:MAX_LISTED_PROBLEMS]]
    return RunRefused(errors[0].path, errors[0].message, problems=listed)


def check_agent_known(request: CheckContext) -> RunRefused | None:
    """The host runs the requested agent (the reference host has the scripted agent only)."""
    agent_id = request.request.agent_id
    if agent_id == SCRIPTED_AGENT_ID:
        return None
    return RunRefused(
        "agentId", f"this host runs only the agent {SCRIPTED_AGENT_ID}", agentId=agent_id
    )


def check_eval_modes_allowed(request: CheckContext) -> RunRefused | None:
    """RFC 0251 §A: ``evalModes`` and ``baselineRunId`` only to a host advertising
    ``agents.evalSuite.baselineSelection``; ``evalModes`` is then a non-empty list of distinct
    modes (live-shadow, which ignores fixtures, runs alone on this host)."""
    asked = request.request
    member = "evalModes" if asked.modes is not None else "baselineRunId"
    if asked.modes is None and asked.baseline_run_id is None:
        return None
    if not advertises(request.capabilities, BASELINE_SELECTION):
        return RunRefused(
            member,
            "the host does not advertise agents.evalSuite.baselineSelection (RFC 0251)",
        )
    modes = asked.modes
    if modes is not None and (not modes or len(set(modes)) != len(modes)):
        return RunRefused("evalModes", "must be a non-empty list of distinct eval modes")
    if modes is not None and "live-shadow" in modes and len(modes) > 1:
        return RunRefused("evalModes", "live-shadow ignores fixtures: on this host it runs alone")
    return None


def check_mode_declared(request: CheckContext) -> RunRefused | None:
    """A run may only request modes the suite declares."""
    declared = request.suite.get("modes") if isinstance(request.suite, Mapping) else None
    declared = declared if isinstance(declared, list) else []
    for mode in request.request.effective_modes:
        if mode not in declared:
            return RunRefused(
                request.request.modes_field,
                f"the suite does not declare the mode {mode!r}",
                mode=mode,
            )
    return None


def check_mode_advertised(request: CheckContext) -> RunRefused | None:
    """A run may only request modes the host advertises in ``agents.evalSuite.modes``."""
    advertised = advertised_modes(request.capabilities)
    for mode in request.request.effective_modes:
        if mode not in advertised:
            return RunRefused(
                request.request.modes_field,
                f"the host does not advertise the mode {mode!r} in agents.evalSuite.modes",
                mode=mode,
            )
    return None


MAX_TAGS = 100
MAX_TAG_LENGTH = 256
CONFIGURABLE_SECTIONS: dict[str, frozenset[str] | None] = {
    "run": frozenset(
        {"recursionLimit", "runTimeoutMs", "maxLoopIterations", "escalationThreshold"}
    ),
    "ai": frozenset(
        {
            "provider",
            "model",
            "temperature",
            "maxTokens",
            "credentialRef",
            "promptOverrides",
            "mockProvider",
            "reasoningVerbosity",
            "maxRefusals",
        }
    ),
    "distillation": frozenset({"tokenBudget"}),
    "budget": None,
    "extensions": None,
}
"""``configurable.schema.json``'s sections and their keys (runs.md §Run options); ``None``: the
section's keys are not listed here (``budget`` is a budget policy, ``extensions`` is keyed by
org)."""


def check_run_options(request: CheckContext) -> RunRefused | None:
    """RunOptions (runs.md): ``configurable`` closed and versioned, ``tags`` at most 100 strings
    of at most 256 characters, ``metadata`` an object. The reference host calls no AI provider
    (it does not advertise ``aiProviders``), so it refuses ``configurable.ai.provider``."""
    options = request.request.options
    if "tags" in options:
        refused = _tags_problem(options["tags"])
        if refused is not None:
            return refused
    if "metadata" in options and not isinstance(options["metadata"], Mapping):
        return RunRefused("metadata", "must be a JSON object")
    if "configurable" in options:
        return _configurable_problem(options["configurable"])
    return None


def _tags_problem(tags: Any) -> RunRefused | None:
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        return RunRefused("tags", "must be an array of strings")
    if len(tags) > MAX_TAGS:
        return RunRefused("tags", f"at most {MAX_TAGS} tags, not {len(tags)}")
    for index, tag in enumerate(tags):
        if len(tag) > MAX_TAG_LENGTH:
            return RunRefused(format_path(["tags", index]), f"at most {MAX_TAG_LENGTH} characters")
    return None


def _configurable_problem(configurable: Any) -> RunRefused | None:
    if not isinstance(configurable, Mapping):
        return RunRefused("configurable", "must be a JSON object")
    version = configurable.get("version")
    if version != 1 or isinstance(version, bool):
        return RunRefused("configurable.version", "required, and 1")
    for section, value in configurable.items():
        where = ["configurable", section]
        if section == "version":
            continue
        if section not in CONFIGURABLE_SECTIONS:
            return RunRefused(format_path(where), "unknown section")
        if not isinstance(value, Mapping):
            return RunRefused(format_path(where), "must be a JSON object")
        keys = CONFIGURABLE_SECTIONS[section]
        unknown = next((key for key in value if keys is not None and key not in keys), None)
        if unknown is not None:
            return RunRefused(format_path([*where, unknown]), "unknown key")
    ai = configurable.get("ai")
    if isinstance(ai, Mapping) and "provider" in ai:
        return RunRefused(
            "configurable.ai.provider", "this host does not advertise aiProviders: it calls none"
        )
    return None


def check_task_limit(request: CheckContext) -> RunRefused | None:
    """A suite has at most ``agents.evalSuite.maxTasksPerSuite`` tasks, when the host sets one."""
    limit = member(request.capabilities, (*EVAL_SUITE, "maxTasksPerSuite"))
    if not isinstance(limit, int) or len(request.tasks()) <= limit:
        return None
    return RunRefused(
        "tasks",
        f"the suite has {len(request.tasks())} tasks; the host runs at most {limit} per suite",
        maxTasksPerSuite=limit,
    )


def check_agent_inputs(request: CheckContext) -> RunRefused | None:
    """Every task input is a script the scripted agent can run."""
    for t, task in enumerate(request.tasks()):
        task_input = task.get("input") if isinstance(task, Mapping) else None
        for problem in script_problems(task_input, ["tasks", t, "input"]):
            return RunRefused(problem.path, problem.message)
    return None


def check_task_ids_unique(request: CheckContext) -> RunRefused | None:
    """Task ids are unique: they key the summary, the scores and what the agent saw."""
    seen: set[str] = set()
    for t, task in enumerate(request.tasks()):
        task_id = task.get("taskId") if isinstance(task, Mapping) else None
        if task_id in seen:
            return RunRefused(format_path(["tasks", t, "taskId"]), "a task id appears twice")
        if isinstance(task_id, str):
            seen.add(task_id)
    return None


def check_baseline(request: CheckContext) -> RunRefused | None:
    """A baseline needs the ``regression`` mode and names a run this host finished; an unusable
    baseline is refused with the same answer whatever the reason (RFC 0251 §C)."""
    baseline = request.request.baseline_run_id
    if baseline is None:
        return None
    if "regression" not in request.request.effective_modes:
        return RunRefused("baselineRunId", "a baseline run needs the regression mode")
    if baseline not in request.finished_run_ids:
        return RunRefused("baselineRunId", "not a usable baseline run on this host")
    return None


def check_fixture_runs(request: CheckContext) -> RunRefused | None:
    """RFC 0252: ``fixtureRuns`` only to a host advertising ``agents.evalSuite.recordedFixtures``;
    at least one entry; each key a task of the suite, each value a usable source run (a finished
    run of this host that recorded that task). Unusable sources get one answer, whatever the
    reason."""
    fixture_runs = request.request.fixture_runs
    if fixture_runs is None:
        return None
    if not advertises(request.capabilities, RECORDED_FIXTURES):
        return RunRefused(
            "fixtureRuns",
            "the host does not advertise agents.evalSuite.recordedFixtures (RFC 0252)",
        )
    if not fixture_runs:
        return RunRefused("fixtureRuns", "must name at least one task")
    task_ids = {task.get("taskId") for task in request.tasks() if isinstance(task, Mapping)}
    for task_id in fixture_runs:
        if task_id not in task_ids:
            return RunRefused(format_path(["fixtureRuns", task_id]), "the suite has no such task")
        if task_id not in request.recorded:
            return RunRefused(
                format_path(["fixtureRuns", task_id]), "not a usable source run for this task"
            )
    return None


def check_fixture_matching(request: CheckContext) -> RunRefused | None:
    """``args``/``argsMatch`` need ``agents.evalSuite.fixtureMatching`` (RFC 0244 §D, §G)."""
    if advertises(request.capabilities, FIXTURE_MATCHING):
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


def check_fixture_errors(request: CheckContext) -> RunRefused | None:
    """Any ``isError: true`` entry needs ``agents.evalSuite.fixtureErrors`` (RFC 0245 §C)."""
    if advertises(request.capabilities, FIXTURE_ERRORS):
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
    check_run_options,
    check_eval_modes_allowed,
    check_mode_declared,
    check_mode_advertised,
    check_task_limit,
    check_task_ids_unique,
    check_baseline,
    check_fixture_runs,
    check_agent_inputs,
    check_fixture_matching,
    check_fixture_errors,
)
"""Every run-create check, in the order it runs. The schema comes first: the others then read a
well-formed suite (they stay defensive for hosts that drop it)."""


def first_refusal(
    request: CheckContext, checks: tuple[Check, ...] = RUN_CREATE_CHECKS
) -> RunRefused | None:
    """The refusal of the first failing check, or ``None`` when the run may start."""
    for check in checks:
        refusal = check(request)
        if refusal is not None:
            return refusal
    return None
