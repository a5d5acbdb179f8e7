"""Shared test setup: the requirement marker is checked against the registry at collection."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings
from support.repo import EXAMPLES, REPO  # noqa: F401  (re-exported for the fixtures)

from toolcall_spec.requirement_registry import registry

if TYPE_CHECKING:
    from support.node import NodeJudge
    from support.store import ClickHouseCluster

# CI runs every property with more examples; locally the default profile keeps runs quick.
settings.register_profile("ci", max_examples=300, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100)
# nox -s faults: the stateful fault machines, each example a run of processes and restarts.
settings.register_profile(
    "faults",
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(
    os.environ.get("TOOLCALL_SPEC_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    known = registry()
    for item in items:
        for marker in item.iter_markers("requirement"):
            if not marker.args or marker.args[0] not in known:
                raise pytest.UsageError(
                    f"{item.nodeid}: requirement marker names unknown id {marker.args!r}; "
                    "add it to spec/requirements.json or fix the id"
                )


@pytest.fixture(scope="session")
def node_judge() -> Iterator[NodeJudge]:
    """The JavaScript validator in one long-lived node process, shared by the tests of one worker
    (tests/typescript): one process for thousands of documents."""
    from support.node import NodeJudge

    judge = NodeJudge()
    yield judge
    judge.close()


@pytest.fixture(scope="session")
def clickhouse_base_url() -> Iterator[str]:
    """A real ClickHouse server on loopback (tests/support/store.py says how it is found)."""
    from support.store import clickhouse_server_url

    yield from clickhouse_server_url()


@pytest.fixture(scope="session")
def two_shards() -> Iterator[ClickHouseCluster]:
    """Two ClickHouse servers on loopback started for the session, each a shard of the cluster
    ``support.store.CLUSTER`` (tests/support/store.py says how)."""
    from support.store import clickhouse_cluster

    yield from clickhouse_cluster()


@pytest.fixture(scope="session")
def chdb_base_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """ClickHouse's current engine in this process (chDB: one data directory per process, so one
    per pytest-xdist worker); each test takes a database of its own (``fresh_database_url``)."""
    try:
        import chdb  # noqa: F401
    except ImportError:
        reason = "chdb-core (the test extra) is not installed"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"chdb-core is required under CI=true: {reason}")
        pytest.skip(reason)
    return f"chdb://{tmp_path_factory.mktemp('chdb')}"


SLOW_SECONDS = 10.0
"""A test that runs longer says why in its docstring (README, Development)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the tests that ran over ``SLOW_SECONDS`` without a docstring saying why. A list, not
    a failure: how long a test runs depends on the machine and its load."""
    unexplained = sorted(
        {
            report.nodeid
            for reports in terminalreporter.stats.values()
            for report in reports
            if getattr(report, "when", None) == "call"
            and getattr(report, "duration", 0.0) > SLOW_SECONDS
            and not _has_docstring(report.nodeid)
        }
    )
    if unexplained:
        terminalreporter.section(f"tests over {SLOW_SECONDS:g} s without a docstring saying why")
        for nodeid in unexplained:
            terminalreporter.write_line(nodeid)
    _summarise_fault_points(terminalreporter)


FAULT_POINTS = "fault_points"
"""The ``record_property`` name under which a fault sweep reports its figures (one line each:
``support.fault_sweep.record_sweep``); they reach the summary from xdist workers too."""


def _summarise_fault_points(terminalreporter: pytest.TerminalReporter) -> None:
    lines = sorted(
        {
            str(value)
            for reports in terminalreporter.stats.values()
            for report in reports
            if getattr(report, "when", None) == "call"
            for name, value in getattr(report, "user_properties", ())
            if name == FAULT_POINTS
        }
    )
    if lines:
        terminalreporter.section("fault points of the durable paths")
        for line in lines:
            terminalreporter.write_line(line)


def _has_docstring(nodeid: str) -> bool:
    path, _, rest = nodeid.partition("::")
    name = rest.split("::")[-1].split("[")[0]
    return name in _documented_functions(str(REPO / path))


@cache
def _documented_functions(path: str) -> frozenset[str]:
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return frozenset()
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ast.get_docstring(node)
    )
