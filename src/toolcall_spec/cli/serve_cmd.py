"""``toolcall-spec serve``: the reference host over HTTP (the OpenWOP v2 surface) on uvicorn.

Loopback by default. ``--token`` (or the ``TOOLCALL_SPEC_TOKEN`` environment variable, which keeps
the token out of the process list) puts every endpoint but discovery behind a bearer token.
Prints ``serving on URL`` once the socket is bound (``--port 0`` picks a free port) and runs until
interrupted. Exit 2 when the server cannot start (port taken, bad directory, missing extra).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from toolcall_spec.cli.console import fail, port_number

DEFAULT_PORT = 8765
BYTE_UNITS = {"kib": 1024, "mib": 1024**2, "gib": 1024**3}
TOKEN_ENV = "TOOLCALL_SPEC_TOKEN"


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser("serve", help="serve the reference host over HTTP")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--token",
        help=f"bearer token required on every endpoint but discovery "
        f"(default: ${TOKEN_ENV} when set)",
    )
    parser.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="allow serving without a token on an address that is not loopback",
    )
    parser.add_argument(
        "--allow-suite-dir",
        metavar="DIR",
        help="let evalSuiteRef name file: URIs inside DIR (and nowhere else)",
    )
    parser.add_argument(
        "--without-fixture-errors",
        action="store_true",
        help="do not advertise agents.evalSuite.fixtureErrors (RFC 0245's "
        "negative host: suites with isError: true entries are refused)",
    )
    parser.add_argument(
        "--without-fixture-matching",
        action="store_true",
        help="do not advertise agents.evalSuite.fixtureMatching (suites using args or "
        "argsMatch are refused)",
    )
    parser.add_argument(
        "--without-baseline-selection",
        action="store_true",
        help="do not advertise agents.evalSuite.baselineSelection (RFC 0251: creates with "
        "evalModes or baselineRunId are refused)",
    )
    parser.add_argument(
        "--without-recorded-fixtures",
        action="store_true",
        help="do not advertise agents.evalSuite.recordedFixtures (RFC 0252: creates with "
        "fixtureRuns are refused)",
    )
    parser.add_argument(
        "--expose-test-seams",
        action="store_true",
        help="serve what the scripted agent received (run snapshot extensions) and live tool "
        "invocation counts, for conformance legs that need them; off by default, since it "
        "quotes recorded fixture payloads",
    )
    parser.add_argument(
        "--max-runs",
        type=int,
        metavar="N",
        help="finished runs kept in memory; the oldest are evicted first (default 1000)",
    )
    parser.add_argument(
        "--max-kept-bytes",
        type=byte_count,
        metavar="SIZE",
        help="memory budget of the runs kept and running, in bytes or with a KiB/MiB/GiB "
        "suffix (default 256MiB); the oldest finished runs are evicted to make room, and a "
        "run that does not fit beside the runs in progress is answered 503",
    )
    parser.add_argument(
        "--max-run-age",
        type=float,
        metavar="SECONDS",
        help="finished runs are evicted this long after they finished (default 3600)",
    )
    parser.add_argument(
        "--max-events-per-run",
        type=int,
        metavar="N",
        help="events one run may write; a suite that would write more is refused at create "
        "with 413 (default 20000)",
    )
    parser.add_argument(
        "--max-active-runs",
        type=int,
        metavar="N",
        help="runs queued or running at once; more are answered 429",
    )
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )
    return "serve"


def byte_count(text: str) -> int:
    """An argparse type: a number of bytes, plain or with a KiB, MiB or GiB suffix."""
    number, unit = text.strip(), 1
    for suffix, size in BYTE_UNITS.items():
        if number.lower().endswith(suffix):
            number, unit = number[: -len(suffix)].strip(), size
            break
    try:
        return int(number) * unit
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a size: {text!r} (bytes, or a number with KiB, MiB or GiB)"
        ) from None


def run(args: argparse.Namespace) -> int:
    try:
        from toolcall_spec.host import ReferenceHost  # noqa: PLC0415
        from toolcall_spec.http.app import HostSettings, create_app  # noqa: PLC0415
        from toolcall_spec.http.auth import startup_refusal  # noqa: PLC0415
        from toolcall_spec.http.limits import Limits  # noqa: PLC0415
        from toolcall_spec.http.server import bind, is_loopback, serve_forever, url_of  # noqa: PLC0415
        from toolcall_spec.http.suite_refs import SuiteSources, conformance_fixtures  # noqa: PLC0415
    except ImportError as exc:
        fail(
            f"serving needs the http extra ({exc.name} is missing): "
            "pip install 'toolcall-spec[http]'"
        )
        return 2
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    refusal = startup_refusal(token, args.host, insecure_no_auth=args.insecure_no_auth)
    if refusal is not None:
        fail(refusal)
        return 2
    try:
        overrides = {
            "max_runs_kept": args.max_runs,
            "max_active_runs": args.max_active_runs,
            "max_kept_bytes": args.max_kept_bytes,
            "max_run_age_seconds": args.max_run_age,
            "max_events_per_run": args.max_events_per_run,
        }
        limits = Limits(**{key: value for key, value in overrides.items() if value is not None})
        sources = SuiteSources(
            conformance_fixtures(),
            allowed_dir=None if args.allow_suite_dir is None else Path(args.allow_suite_dir),
        )
    except (OSError, ValueError) as exc:
        fail(str(exc))
        return 2
    withheld = [
        member
        for member, flag in (
            ("fixtureErrors", args.without_fixture_errors),
            ("fixtureMatching", args.without_fixture_matching),
            ("baselineSelection", args.without_baseline_selection),
            ("recordedFixtures", args.without_recorded_fixtures),
        )
        if flag
    ]
    backend = ReferenceHost().without(*withheld)  # the app applies the limits to its store
    settings = HostSettings(
        token=token, sources=sources, limits=limits, expose_test_seams=args.expose_test_seams
    )
    app = create_app(backend, settings)
    try:
        sock = bind(args.host, args.port)
    except OSError as exc:
        fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return 2
    if not is_loopback(args.host) and token is None:
        fail(
            f"warning: {args.host} is not a loopback address and no token is set: anyone who "
            "can reach this port can run suites"
        )
    print(f"serving on {url_of(sock)}", flush=True)
    return serve_forever(app, sock, log_level=args.log_level)
