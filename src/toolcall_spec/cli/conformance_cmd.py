"""``toolcall-spec conformance [--format text|json|junit] [--strict] [--host URL]... [--token T]``.

Without ``--host`` the legs run against the embedded reference host (and its twin advertising
less, so the refusal legs execute too). ``--host`` may be repeated: every host is exercised and
the results fold into one report, as the embedded pair does, so a served reference host and a
served ``--without-fixture-errors`` host cover RFC 0245 §C's refusal in one run. ``--token``
applies to every host. Exit 0 when no leg is ``executed-fail`` or ``blocked``, 1 when one is, 2
on a usage error or a host whose discovery document cannot be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from toolcall_spec.cli.console import fail, http_url, print_json
from toolcall_spec.cli.selection import SelectionError, compile_selection

STRICT_ENV = "OPENWOP_REQUIRE_BEHAVIOR"
"""Upstream's switch for strict conformance: ``true`` (or ``1``) does what ``--strict`` does."""


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "conformance",
        help="run the conformance legs against the embedded reference host or a v2 host",
        description="Run every conformance leg (one requirement id each) and report its outcome: "
        "executed-pass, executed-fail, skipped, inapplicable or blocked.",
    )
    parser.add_argument("--format", choices=("text", "json", "junit"), default="text")
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"a missing capability or seam, or a blocked leg, fails (also: {STRICT_ENV}=true)",
    )
    parser.add_argument(
        "--host",
        metavar="URL",
        type=http_url,
        action="append",
        help="base URL of an OpenWOP v2 host; repeat it to fold several hosts into one report",
    )
    parser.add_argument("--token", metavar="T", help="bearer token, sent to every --host")
    parser.add_argument(
        "-k",
        metavar="EXPR",
        dest="select",
        help="run only the legs whose requirement id matches EXPR: words (substrings) with "
        'and, or, not and parentheses, as in pytest (-k "0245 and not unadvertised")',
    )
    return "conformance"


def strict_from_env(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(STRICT_ENV, "").strip().lower() in ("true", "1")


def run(args: argparse.Namespace) -> int:
    if args.token is not None and args.host is None:
        fail("conformance: --token needs --host")
        return 2
    from toolcall_spec.conformance.registry import LEGS  # noqa: PLC0415
    from toolcall_spec.conformance.report import (  # noqa: PLC0415  (keeps `--help` light)
        as_json,
        render_junit,
        render_text,
    )
    from toolcall_spec.conformance.runner import run_conformance  # noqa: PLC0415

    legs = LEGS
    if args.select is not None:
        try:
            selected = compile_selection(args.select)
        except SelectionError as exc:
            fail(f"conformance: {exc}")
            return 2
        legs = tuple(leg for leg in LEGS if selected(leg.requirement_id))
        if not legs:
            fail(f"conformance: -k {args.select!r} selects no leg")
            return 2
    strict = bool(args.strict) or strict_from_env()
    try:
        with _adapters(args.host, args.token) as adapters:
            report = run_conformance(adapters, legs, strict=strict)
    except _UsageError as exc:
        fail(f"conformance: {exc}")
        return 2
    if args.format == "json":
        print_json(as_json(report))
    elif args.format == "junit":
        sys.stdout.write(render_junit(report))
    else:
        sys.stdout.write(render_text(report))
    return 1 if report.failed else 0


class _UsageError(Exception):
    """The hosts cannot be used at all (no HTTP support, unreachable, no discovery document, one
    URL given twice)."""


@contextmanager
def _adapters(hosts: Sequence[str] | None, token: str | None) -> Iterator[Sequence[Any]]:
    if not hosts:
        from toolcall_spec.conformance.in_process import embedded_adapters  # noqa: PLC0415

        yield embedded_adapters()
        return
    try:
        from toolcall_spec.http.adapter import HttpAdapter  # noqa: PLC0415
    except ImportError as exc:
        raise _UsageError(
            f"--host needs the HTTP adapter ({exc}); install toolcall-spec[http]"
        ) from None
    names = [host.rstrip("/") for host in hosts]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:  # the report labels each host by its URL: two alike could not be told apart
        raise _UsageError(f"--host {repeated[0]} is given more than once")
    with ExitStack() as stack:
        adapters: list[Any] = []
        for host in hosts:
            adapter = stack.enter_context(HttpAdapter(host, token=token))
            try:
                adapter.capabilities()
            except Exception as exc:  # whatever the transport raised: the host is not usable
                raise _UsageError(f"cannot read the discovery document of {host}: {exc}") from None
            adapters.append(adapter)
        yield adapters
