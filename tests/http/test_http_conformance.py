"""Conformance over HTTP: the same legs, through HttpAdapter and the real server, reach the same
outcomes as in process; a broken host served over HTTP is caught by the same leg; and the
``toolcall-spec conformance --host URL`` command works end to end against ``toolcall-spec serve``
started as a subprocess."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

import orjson
import pytest
from support.cli import run_cli
from support.http_serving import serve_subprocess, serving
from support.mutants import MUTANTS, PercentEncodedLinks

from toolcall_spec.conformance.adapter import HostAdapter
from toolcall_spec.conformance.in_process import (
    InProcessAdapter,
    embedded_adapters,
    restricted,
)
from toolcall_spec.conformance.outcomes import Outcome
from toolcall_spec.conformance.registry import LEGS
from toolcall_spec.conformance.runner import Report, run_conformance
from toolcall_spec.host.reference import ReferenceHost
from toolcall_spec.http.adapter import HttpAdapter
from toolcall_spec.http.app import HostSettings, create_app
from toolcall_spec.http.server import BackgroundServer

PROJECTION = "toolcall-spec.requirement.wire.run-id-projection"


def outcomes(report: Report) -> dict[str, str]:
    return {result.requirement_id: result.outcome.value for result in report.results}


def over_http(in_process: dict[str, str]) -> dict[str, str]:
    """The outcomes an in-process report predicts over HTTP: the same, except that the leg on
    run ids in paths, inapplicable without a wire, executes."""
    assert in_process[PROJECTION] == Outcome.INAPPLICABLE.value
    return {**in_process, PROJECTION: Outcome.EXECUTED_PASS.value}


@contextmanager
def served_like(hosts: Sequence[ReferenceHost]) -> Iterator[list[HostAdapter]]:
    """Each in-process host served over HTTP (same class, same capabilities), as adapters."""
    with ExitStack() as stack:
        adapters: list[HostAdapter] = []
        for host in hosts:
            backend = type(host)(host.capabilities)
            server = stack.enter_context(serving(backend))
            adapters.append(stack.enter_context(HttpAdapter(server.url)))
        yield adapters


def test_over_http_every_leg_has_the_in_process_outcome() -> None:
    local = embedded_adapters()
    expected = over_http(outcomes(run_conformance(local)))
    with served_like([adapter.host for adapter in local]) as remote:
        report = run_conformance(remote)
    assert outcomes(report) == expected
    assert set(expected.values()) == {Outcome.EXECUTED_PASS.value}


@pytest.mark.parametrize("which", ["reference", "restricted"])
def test_per_host_the_outcomes_match_too(which: str) -> None:
    host = ReferenceHost() if which == "reference" else restricted(ReferenceHost())
    expected = over_http(outcomes(run_conformance([InProcessAdapter(host)])))
    with served_like([host]) as remote:
        assert outcomes(run_conformance(remote)) == expected


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_a_broken_host_served_over_http_is_caught_by_its_leg(mutant: Any) -> None:
    legs = [leg for leg in LEGS if leg.requirement_id == mutant.caught_by]
    with served_like([mutant.host()]) as remote:
        report = run_conformance(remote, legs)
    assert outcomes(report) == {mutant.caught_by: Outcome.EXECUTED_FAIL.value}


def conformance_cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return run_cli("conformance", "--format", "json", *arguments)


@pytest.mark.parametrize("restricted_host", [False, True], ids=["reference", "negative"])
def test_the_conformance_command_against_a_served_host(restricted_host: bool) -> None:
    """The command line, end to end: the served reference host (or the RFC 0245 negative host)
    gets the outcomes the same host gets in process."""
    host = ReferenceHost()
    options: tuple[str, ...] = ("--token", "tok3n", "--expose-test-seams")
    if restricted_host:
        host = host.without_fixture_errors()
        options += ("--without-fixture-errors",)
    expected = over_http(outcomes(run_conformance([InProcessAdapter(host)])))
    with serve_subprocess(*options) as url:
        done = conformance_cli("--host", url, "--token", "tok3n")
        assert done.returncode == 0, done.stderr
        report = orjson.loads(done.stdout)
        assert report["hosts"] == [url]
        assert {leg["id"]: leg["outcome"] for leg in report["legs"]} == expected
        if restricted_host:
            assert expected["openwop.requirement.0245.unadvertised-refused"] == "executed-pass"
        else:
            assert expected["openwop.requirement.0245.fixture-error-replayed"] == "executed-pass"
        if not restricted_host:
            # Wrong credentials: the legs that need a run cannot execute (blocked, naming 401);
            # none is reported as the host failing a requirement.
            wrong = orjson.loads(conformance_cli("--host", url, "--token", "wrong").stdout)
            by_outcome = {leg["outcome"] for leg in wrong["legs"]}
            assert "executed-fail" not in by_outcome
            blocked = [leg for leg in wrong["legs"] if leg["outcome"] == "blocked"]
            assert blocked
            assert all("401" in leg["reason"] for leg in blocked)


def test_repeated_hosts_fold_into_the_embedded_default_report() -> None:
    """``--host A --host B`` against the embedded pair served over HTTP: one report with the
    embedded default's outcomes, every leg executed, none inapplicable."""
    local = embedded_adapters()
    expected = over_http(outcomes(run_conformance(local)))
    assert set(expected.values()) == {Outcome.EXECUTED_PASS.value}
    with ExitStack() as stack:
        urls = [stack.enter_context(serving(ReferenceHost(a.host.capabilities))).url for a in local]
        done = conformance_cli(*(option for url in urls for option in ("--host", url)))
        alone = orjson.loads(conformance_cli("--host", urls[0]).stdout)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["hosts"] == urls
    assert {leg["id"]: leg["outcome"] for leg in report["legs"]} == expected
    # The second host is what executes the refusal legs: alone, the reference host cannot.
    for refusal in (
        "openwop.requirement.0245.unadvertised-refused",
        "toolcall-spec.requirement.capabilities.fixture-matching-refused",
    ):
        assert {leg["id"]: leg["outcome"] for leg in alone["legs"]}[refusal] == "inapplicable"
        folded = next(leg for leg in report["legs"] if leg["id"] == refusal)
        assert folded["reason"].startswith(f"[{urls[1]}]")


def test_repeated_served_hosts_share_one_token() -> None:
    """``toolcall-spec serve`` and ``serve --without-fixture-errors --without-fixture-matching``
    behind one token: the folded report is the embedded default's, every leg executed."""
    expected = over_http(outcomes(run_conformance(embedded_adapters())))
    assert set(expected.values()) == {"executed-pass"}
    token = ("--token", "tok3n")
    withheld = ("--without-fixture-errors", "--without-fixture-matching")
    seams = "--expose-test-seams"
    with (
        serve_subprocess(*token, seams) as reference,
        serve_subprocess(*token, *withheld, seams) as negative,
    ):
        done = conformance_cli("--host", reference, "--host", negative, *token)
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["hosts"] == [reference, negative]
    assert {leg["id"]: leg["outcome"] for leg in report["legs"]} == expected


def test_the_same_host_given_twice_is_a_usage_error() -> None:
    done = conformance_cli("--host", "http://127.0.0.1:9/", "--host", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert "more than once" in done.stderr


SEAM_LEGS = (
    "toolcall-spec.requirement.replay.agent-receives-tool-error",
    "toolcall-spec.requirement.replay.error-never-live",
    "toolcall-spec.requirement.replay.live-shadow-ignores-fixtures",
)


def test_serve_without_test_seams_passes_with_the_seam_legs_skipped() -> None:
    """``serve`` as shipped (seams off): the command still passes, and exactly the legs that
    read a seam are not executed; strict mode turns a missing seam into a failure."""
    with serve_subprocess() as url:
        done = conformance_cli("--host", url)
        strict = conformance_cli("--host", url, "--strict")
    assert done.returncode == 0, done.stderr
    legs = {leg["id"]: leg["outcome"] for leg in orjson.loads(done.stdout)["legs"]}
    not_executed = {rid for rid, outcome in legs.items() if not outcome.startswith("executed")}
    refusal_legs = {
        "openwop.requirement.0245.unadvertised-refused",
        "toolcall-spec.requirement.capabilities.fixture-matching-refused",
    }
    assert not_executed - refusal_legs == set(SEAM_LEGS)
    assert strict.returncode == 1


@pytest.mark.requirement("toolcall-spec.requirement.wire.run-id-projection")
def test_a_server_without_projected_ids_is_caught_by_the_projection_leg() -> None:
    legs = [leg for leg in LEGS if leg.requirement_id == PROJECTION]
    broken = PercentEncodedLinks(create_app(ReferenceHost(), HostSettings()))
    with BackgroundServer(broken) as server, HttpAdapter(server.url) as adapter:
        report = run_conformance([adapter], legs)
    assert outcomes(report) == {PROJECTION: Outcome.EXECUTED_FAIL.value}
    with serving() as server, HttpAdapter(server.url) as adapter:
        assert outcomes(run_conformance([adapter], legs)) == {PROJECTION: "executed-pass"}
