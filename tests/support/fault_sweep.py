"""The fault sweep, in the manner of SQLite's I/O-error tests: run a workload with the Nth
durable file-system call failing (``toolcall_spec.filesystem.FaultPlan``), recover, check the
invariants; N = 1, 2, ... until a run completes with no fault left to inject. Every durable path's
sweep is this loop with its own workload and checks: one function serves them all.

``sweep`` runs in process (``Crashed`` stands for kill -9 there); a workload in child processes
passes the plan on with ``FaultPlan.to_environment`` and reads back how far it got.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from toolcall_spec.filesystem import Crashed, FaultPlan, intercepted

MODES: tuple[tuple[str | None, bool], ...] = (
    ("ENOSPC", True),  # a disk that stays full
    ("ENOSPC", False),  # a disk that was full for one call
    ("EIO", False),
    ("EDQUOT", True),
    ("EMFILE", False),
    (None, False),  # kill -9 at the call
)
"""(errno name or ``None`` for a kill, persistent): the faults every sweep injects at each point."""

MAX_POINTS = 5_000
"""A workload with more fault points than this is a runaway (each point is one full run)."""


@dataclass
class SweepReport:
    """What a sweep did: the fault points of the workload (the calls of a run without a fault),
    the runs, and the faults the workload surfaced as errors (for the closing figures)."""

    points: int = 0
    runs: int = 0
    errors: dict[str, int] = field(default_factory=dict)


def sweep(
    workload: Callable[[], object],
    check: Callable[[FaultPlan, BaseException | None], None],
    *,
    modes: Iterable[tuple[str | None, bool]] = MODES,
    ops: frozenset[str] | None = None,
) -> SweepReport:
    """For each fault mode and N = 1, 2, ...: run ``workload`` with the Nth call failing, then
    ``check(plan, raised)`` (recover there, and assert the invariants); stop a mode when a run
    completes without the fault being injected. ``raised``: what the workload raised (``None``
    when it absorbed the fault). The report's ``points`` is the number of calls of a clean run."""
    report = SweepReport()
    for errno, persistent in modes:
        at = 1
        while True:
            plan = FaultPlan(at=at, errno=errno, persistent=persistent)
            if ops is not None:
                plan.ops = ops
            raised: BaseException | None = None
            with intercepted(plan):
                try:
                    workload()
                except (Exception, Crashed) as exc:  # the fault, surfaced: the check judges it
                    raised = exc
            check(plan, raised)
            report.runs += 1
            if raised is not None:
                name = type(raised).__name__
                report.errors[name] = report.errors.get(name, 0) + 1
            if not plan.injected:
                report.points = max(report.points, plan.calls)
                break
            at += 1
            assert at <= MAX_POINTS, f"more than {MAX_POINTS} fault points: a runaway workload"
    return report


def record_sweep(
    record_property: Callable[[str, object], None], path: str, report: SweepReport
) -> None:
    """Put a sweep's figures in the run's summary ("fault points of the durable paths"), through
    pytest's ``record_property`` fixture: ``PATH: N fault points, R runs, errors {...}``."""
    errors = ", ".join(f"{name} {count}" for name, count in sorted(report.errors.items()))
    line = f"{path}: {report.points} fault points, {report.runs} runs; surfaced: {errors or 'none'}"
    record_property("fault_points", line)
