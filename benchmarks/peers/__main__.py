"""``python -m benchmarks.peers``: the comparison (``nox -s peers`` installs the pinned peers and
runs it).

Options: ``--peers a,b`` ``--frameworks mcpserver,fastmcp`` ``--transports stdio,http`` (default:
all), ``--json PATH`` (default ``build/peers.json``; ``build/peers-summary.json`` beside it),
``--workdir DIR`` (the raw records and each server's stderr; default a fresh temporary folder, kept
and named in the output). ``--markdown JSON [--page docs/peers.md]`` runs nothing: it prints the
docs table made from a run's JSON, or writes it into the page.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import docs_tables
from benchmarks.docs_tables import table_block
from benchmarks.peers.analyse import summarise
from benchmarks.peers.drive import TRANSPORTS, Run, run_once
from benchmarks.peers.probe import CALLS, ERROR_CLASSES, EXPECTED_COUNTS, FRAMEWORKS, SUCCESS
from benchmarks.peers.serve import PEERS

PEER_PACKAGES: dict[str, tuple[str, ...]] = {
    "bare": (),
    "otel": (),
    "logfire": ("logfire",),
    "sentry": ("sentry-sdk",),
    "traceloop": ("opentelemetry-instrumentation-mcp",),
    "openinference": ("openinference-instrumentation-mcp",),
    "opentel-mcp": ("opentel-mcp",),
    "agentcat": ("agentcat",),
    "toolcall-spec-memory": ("toolcall-spec",),
    "toolcall-spec-otel": ("toolcall-spec",),
}
PEER_TITLES = {
    "bare": "no instrumentation",
    "otel": "the framework's own OpenTelemetry spans",
    "logfire": "logfire (configure + instrument_mcp)",
    "sentry": "Sentry MCPIntegration",
    "traceloop": "opentelemetry-instrumentation-mcp (Traceloop)",
    "openinference": "openinference-instrumentation-mcp",
    "opentel-mcp": "opentel-mcp",
    "agentcat": "AgentCat",
    "toolcall-spec-memory": "toolcall_spec.mcp.instrument + MemorySink",
    "toolcall-spec-otel": "toolcall_spec.mcp.instrument + OpenTelemetrySink",
}
SHORT = {
    "is_error": "isError",
    "raised": "raised",
    "unknown_tool": "unknown",
    "invalid_arguments": "invalid",
}
ERRORS = sum(EXPECTED_COUNTS[kind] for kind in ERROR_CLASSES)


def version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def client_summary(run: Run) -> dict[str, Any]:
    """What the real mcp client received: calls answered, errors, and per class the errors."""
    return {
        "answered": len(run.outcomes),
        "errors": sum(outcome.error for outcome in run.outcomes),
        "rpc_errors": sum(outcome.rpc_error is not None for outcome in run.outcomes),
        "per_class": {
            kind: sum(outcome.error for outcome in run.outcomes if outcome.kind == kind)
            for kind in (SUCCESS, *ERROR_CLASSES)
        },
    }


def setup_of(run: Run) -> dict[str, Any]:
    setups = [record for record in run.records if record.get("kind") == "setup"]
    if not setups:
        return {"ok": False, "error": run.failure or "the server recorded no setup"}
    return {key: value for key, value in setups[0].items() if key != "kind"}


def result_of(run: Run) -> dict[str, Any]:
    setup = setup_of(run)
    result: dict[str, Any] = {
        "peer": run.peer,
        "framework": run.framework,
        "transport": run.transport,
        "seconds": run.seconds,
        "setup": setup,
        "warnings": [r["message"] for r in run.records if r.get("kind") == "warning"],
        "run_failure": run.failure,
        "client": client_summary(run),
        "client_outcomes": [outcome.as_json() for outcome in run.outcomes],
    }
    # A peer whose setup failed recorded nothing of its own (what ran was the bare server).
    result["recorded"] = summarise(run.records) if setup.get("ok") else None
    return result


def environment() -> dict[str, Any]:
    packages = {"mcp", "fastmcp", "opentelemetry-sdk", "toolcall-spec"}
    for names in PEER_PACKAGES.values():
        packages.update(names)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "python": platform.python_version(),
        "versions": {name: version(name) for name in sorted(packages)},
        "probe": {
            "calls": len(CALLS),
            "errors": ERRORS,
            "per_class": dict(EXPECTED_COUNTS),
        },
    }


# --- the printed table --------------------------------------------------------------------------


def _cell(result: dict[str, Any], kind: str) -> str:
    recorded = result["recorded"]
    if recorded is None:
        return "-"
    row = recorded["per_class"][kind]
    became = ", ".join(
        f"{label}" + (f" x{count}" if count != row["calls"] else "")
        for label, count in sorted(row["became"].items())
    )
    return f"{row['recorded_as_error']}/{row['calls']} {became}"


def table_rows(results: list[dict[str, Any]], width: int = 70) -> list[list[str]]:
    rows = []
    for result in results:
        recorded = result["recorded"]
        client = result["client"]
        if recorded is None:
            reason = result["setup"].get("error") or result["run_failure"] or "?"
            status = f"setup failed: {str(reason)[:width]}"
            rows.append(
                [result["peer"], result["framework"], result["transport"], status]
                + ["-"] * 5
                + [f"{client['errors']}/{client['answered']}"]
            )
            continue
        rows.append(
            [
                result["peer"],
                result["framework"],
                result["transport"],
                f"{recorded['calls_seen']}/{len(CALLS)}",
                f"{recorded['errors_recorded']}/{ERRORS}",
                str(recorded["successes_recorded_as_errors"]),
                f"{recorded['raised_with_own_message']}/{EXPECTED_COUNTS['raised']}",
                "yes" if recorded["pii_in_error_messages"] else "no",
                recorded_by(result),
                f"{client['errors']}/{client['answered']}",
            ]
        )
    return rows


def recorded_by(result: dict[str, Any]) -> str:
    """Who recorded the observations: the instrumentation scopes of the spans (the framework's
    own, ``mcp-python-sdk`` or ``fastmcp``, when the peer adds none), or the record kinds."""
    sources = (result["recorded"] or {}).get("recorded_by") or {}
    return ", ".join(sorted(sources)) or "nothing"


def render(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def print_report(results: list[dict[str, Any]], env: dict[str, Any]) -> None:
    print(f"measured {env['date']}, Python {env['python']}")
    print("versions: " + ", ".join(f"{k}=={v}" for k, v in env["versions"].items() if v))
    print()
    header = [
        "peer",
        "framework",
        "transport",
        "calls seen",
        "errors",
        "false err",
        "own exc msg",
        "PII kept",
        "recorded by",
        "client errors",
    ]
    print(render(header, table_rows(results)))
    print()
    header = ["peer", "framework", "transport", *(SHORT[kind] for kind in ERROR_CLASSES)]
    rows = [
        [r["peer"], r["framework"], r["transport"], *(_cell(r, kind) for kind in ERROR_CLASSES)]
        for r in results
    ]
    print("what each error class became (errors recorded / calls, then the labels):")
    print(render(header, rows))


# --- the Markdown table of docs/peers.md --------------------------------------------------------


def _merged(cells: list[str]) -> str:
    """One cell for the transports: the value once when they agree, else each named."""
    if len(set(cells)) == 1:
        return cells[0]
    return "; ".join(
        f"{transport}: {cell}" for transport, cell in zip(TRANSPORTS, cells, strict=False)
    )


def markdown(document: dict[str, Any]) -> str:
    """The table of docs/peers.md from a run's JSON: one row per peer and framework, the
    transports merged where they agree."""
    results = document["results"]
    header = [
        "peer",
        "framework",
        "calls seen",
        f"errors recorded (of {ERRORS})",
        *(f"{SHORT[kind]} ({EXPECTED_COUNTS[kind]})" for kind in ERROR_CLASSES),
        "exception's own message",
        "PII in error messages",
        "recorded by",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    keys = list(dict.fromkeys((r["peer"], r["framework"]) for r in results))
    for peer, framework in keys:
        mine = [r for r in results if (r["peer"], r["framework"]) == (peer, framework)]
        table = table_rows(mine, width=400)
        classes = [[_cell(r, kind) for r in mine] for kind in ERROR_CLASSES]
        cells = [
            document.get("peers", {}).get(peer, peer),
            framework,
            _merged([row[3] for row in table]),
            _merged([row[4] for row in table]),
            *(_merged(cell) for cell in classes),
            _merged([row[6] for row in table]),
            _merged([row[7] for row in table]),
            _merged([row[8] for row in table]),
        ]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers")
    parser.add_argument("--peers", default=",".join(peer for peer in PEERS if peer != "bare"))
    parser.add_argument("--frameworks", default=",".join(FRAMEWORKS))
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--json", default="build/peers.json")
    parser.add_argument("--workdir", default=None)
    parser.add_argument(
        "--markdown",
        metavar="JSON",
        default=None,
        help="print the docs table from a run's JSON (nothing is run)",
    )
    parser.add_argument(
        "--page",
        default=None,
        help="with --markdown: write the table into this page (after its peers-table comment)",
    )
    return parser.parse_args(argv)


TABLE_BLOCK = table_block("peers-table")
"""The table of docs/peers.md: the lines after its ``peers-table`` comment, up to a blank line."""


def replace_table(page: Path, table: str) -> None:
    docs_tables.replace_table(page, table, TABLE_BLOCK, "peers-table")


def main(argv: list[str]) -> None:
    options = parse(argv)
    if options.markdown is not None:
        docs_tables.print_or_write(options.markdown, options.page, markdown, replace_table)
        return
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="toolcall-spec-peers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results = []
    for peer in options.peers.split(","):
        for framework in options.frameworks.split(","):
            for transport in options.transports.split(","):
                run = run_once(peer, framework, transport, workdir)
                result = result_of(run)
                results.append(result)
                print(f"  {peer} / {framework} / {transport}: {run.seconds} s", file=sys.stderr)
    env = environment()
    print_report(results, env)
    document = {**env, "peers": PEER_TITLES, "results": results}
    output = Path(options.json)
    write_json(output, document)
    summary = output.with_name(f"{output.stem}-summary.json")
    write_json(summary, summary_document(document))
    print(f"\nJSON: {output} (summary: {summary})  raw records and server logs: {workdir}")


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def summary_document(document: dict[str, Any]) -> dict[str, Any]:
    """The run without what the client received and what was recorded call by call: what the
    docs table is made of (docs/data/peers.json is one, the measurement docs/peers.md shows)."""
    results = []
    for result in document["results"]:
        kept = {key: value for key, value in result.items() if key != "client_outcomes"}
        if kept["recorded"] is not None:
            kept["recorded"] = {k: v for k, v in kept["recorded"].items() if k != "calls"}
        results.append(kept)
    return {**document, "results": results}


if __name__ == "__main__":
    main(sys.argv[1:])
