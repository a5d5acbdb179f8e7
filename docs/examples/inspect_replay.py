"""An Inspect AI eval whose tools are a recording, replayed by ``toolcall-spec serve-fixtures``.

Each task of the suite (each recorded session) is one sample. The agent of each sample gets the
recorded tools over MCP (stdio) from a ``serve-fixtures`` process of its own, so every sample
replays its recording from the start: a recorded failure reaches the model as a tool error, as
it did live, and a call the recording cannot answer is a tool error too, counted as a fixture
miss. The scorer reads the process's ``--log`` summary: the sample's score is its number of
fixture misses (0: the agent stayed on the recording), the summary is the score's metadata, and
the ``total`` metric adds the misses of all samples.

    inspect eval inspect_replay.py --model openai/gpt-4o -T suite=billing.json
"""

import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.agent import as_solver, react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import mcp_server_stdio, mcp_tools

FIXTURE_LOG = "fixture_log"
"""The key of the sample store that names the serve-fixtures log of the sample."""


@task
def replay_recording(
    suite: str,
    prompt: str = "Look up customer c-1 and report the balance.",
    command: str = "toolcall-spec",
    log_dir: str = "fixture-logs",
) -> Task:
    """One sample per task of ``suite``, each answered by the recording of that task.

    Args:
        suite: the suite file a recording wrote (``toolcall-spec record``), or its journal.
        prompt: what the agent is asked in every sample.
        command: the ``toolcall-spec`` executable.
        log_dir: where each sample's ``serve-fixtures --log`` is written.
    """
    task_ids = [entry["taskId"] for entry in json.loads(Path(suite).read_text())["tasks"]]
    return Task(
        dataset=[Sample(id=task_id, input=prompt) for task_id in task_ids],
        solver=replay_agent(suite, command, log_dir),
        scorer=fixture_misses(),
    )


@solver
def replay_agent(suite: str, command: str, log_dir: str) -> Solver:
    """A ReAct agent whose only tools are the sample's recorded ones. The MCP connection, and
    with it the serve-fixtures process, ends with the agent: the log is written before scoring."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        log = Path(log_dir).resolve() / f"{state.sample_id}-epoch{state.epoch}.json"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)  # a log of an earlier run must not be scored
        state.store.set(FIXTURE_LOG, str(log))
        recording = mcp_server_stdio(
            name="recording",
            command=command,
            args=["serve-fixtures", suite, "--task", str(state.sample_id), "--log", str(log)],
        )
        agent = react(tools=[mcp_tools(recording)], submit=False)
        return await as_solver(agent)(state, generate)

    return solve


@metric
def total() -> Metric:
    """The sum of the samples' scores: all fixture misses of the eval."""

    def compute(scores: list[SampleScore]) -> float:
        return sum(sample.score.as_float() for sample in scores)

    return compute


@scorer(metrics=[total()])
def fixture_misses() -> Scorer:
    """The sample's fixture misses, read from the serve-fixtures log (its ``summary``)."""

    async def score(state: TaskState, target: Target) -> Score:
        log = Path(state.store.get(FIXTURE_LOG))
        if not log.is_file():
            raise RuntimeError(f"{log}: serve-fixtures wrote no log (did it start?)")
        summary = json.loads(log.read_text())["summary"]
        misses = summary["fixtureMissCount"]
        return Score(
            value=misses,
            explanation=f"{misses} of {summary['callCount']} tool calls missed the recording",
            metadata=summary,
        )

    return score
