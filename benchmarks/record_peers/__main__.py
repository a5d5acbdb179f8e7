"""``python -m benchmarks.record_peers``: MCP cassette recorders side by side (``nox -s
record_peers`` installs the pinned peers and runs it; docs/record-replay.md shows the table).

The same client (the real ``mcp`` client, the 2025 handshake) makes the probe's calls
(``drive.PROBE``: a tool that fails then succeeds with the same arguments, a plain success, a
JSON-RPC error) through each peer's recorder, over stdio and streamable HTTP where the peer has
a way to; then, against the peer's own replay of that recording, the same calls and a miss. The
recording is also imported with ``toolcall-spec promote --from cassette``. A peer that is not
installed or does not run is a row that says so; nothing fails the run.

Options: ``--peers a,b`` ``--transports stdio,http``, ``--json PATH`` (default
``build/record_peers.json``), ``--workdir DIR`` (recordings and logs; default a fresh temporary
folder, named in the output), ``--venv PEER=BIN`` (a peer installed in a venv of its own, by
that venv's bin folder: mcp-cassette needs Python 3.12). ``--markdown JSON [--page PAGE]`` runs
nothing: it prints the docs table of a run's JSON, or writes it into the page after its
``record-peers-table`` comment.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import docs_tables
from benchmarks.docs_tables import table_block
from benchmarks.record_peers.drive import (
    LIVE_SERVER,
    MISS,
    PROBE,
    REPO,
    Background,
    Outcome,
    free_port,
    session,
    wait_for_file,
)

TRANSPORTS = ("stdio", "http")
LIVE_ANSWERS = [(True, None), (False, None), (False, None), (None, -32001)]
"""What the live server answers the probe: (isError, JSON-RPC error code)."""
RECORDED_FAILURES = [True, False, False, True]
"""The entries a faithful import makes: failed exactly where the live call failed."""

PY = sys.executable
TOOLCALL_SPEC = str(Path(PY).parent / "toolcall-spec")
AGENT_VCR_RECORDING = REPO / "tests" / "support" / "agent_vcr_recording.py"
MCP_RECORDER_HOOKS = REPO / "tests" / "support" / "mcp_recorder_hooks.py"
"""``mcp-recorder`` with Starlette's startup hooks given back (it dies at start without them)."""

Command = list[str]


@dataclass(frozen=True)
class Peer:
    """How a peer records and replays: each a command for a transport, ``None`` where the peer
    has no way (``why_not`` says which). The HTTP commands take the upstream URL or the port."""

    distribution: str
    executable: str
    recording: str
    record_stdio: Callable[[str, Path], Command] | None
    record_http: Callable[[str, Path, str, int], Command] | None
    replay_stdio: Callable[[str, Path, Path], Command] | None
    replay_http: Callable[[str, Path, Path, int], Command] | None
    why_not: dict[str, str]
    variant: str = ""
    """How this row runs the peer, when not by its documented command."""
    live_over_http: bool = True
    """Whether its HTTP recorder proxies the live server over HTTP (else it starts it itself)."""
    misses: Callable[[Path], int | None] = lambda folder: None
    """The misses the peer counted in a replay, read from what it wrote in ``folder``."""


REPORT = "replay-report.json"
"""The file a peer's replay writes its report to, where it can (``--log``, ``--report``)."""
REPLAY_LOG = "replay.log"
"""The output of an HTTP replay server."""


def _toolcall_spec_misses(folder: Path) -> int | None:
    report = folder / REPORT
    if not report.exists():
        return None
    return int(json.loads(report.read_text("utf-8"))["summary"]["fixtureMissCount"])


def _mcp_cassette_misses(folder: Path) -> int | None:
    report = folder / REPORT
    if not report.exists():
        return None
    document = json.loads(report.read_text("utf-8"))
    misses = document.get("misses", document.get("unmatched"))
    return len(misses) if isinstance(misses, list) else misses


def _mcp_recorder_misses(folder: Path) -> int | None:
    """What mcp-recorder prints as its replay server stops: ``N incoming request(s) had no
    match`` (nothing when none missed)."""
    log = folder / REPLAY_LOG
    if not log.exists():
        return None
    found = re.search(r"(\d+) incoming request\(s\) had no match", log.read_text("utf-8"))
    return int(found.group(1)) if found else 0


LIVE: Command = [PY, str(LIVE_SERVER)]


def _mcp_recorder(prefix: Callable[[str], Command], variant: str) -> Peer:
    """mcp-recorder, run by ``prefix``: the client speaks streamable HTTP to its proxy, which
    starts the live server over stdio (``--target-stdio``; the client's transport is what the
    row names)."""
    return Peer(
        distribution="mcp-recorder",
        executable="mcp-recorder",
        recording="cassette.json",
        record_stdio=None,
        record_http=lambda exe, out, url, port: [
            *prefix(exe),
            *("record", "--target-stdio", shlex.join(LIVE), "--port", str(port)),
            *("--output", str(out)),
        ],
        replay_stdio=None,
        replay_http=lambda exe, rec, report, port: [
            *(*prefix(exe), "replay", "--cassette", str(rec), "--port", str(port))
        ],
        why_not={"stdio": "its proxy serves the client over HTTP only"},
        variant=variant,
        live_over_http=False,
        misses=_mcp_recorder_misses,
    )


PEERS: dict[str, Peer] = {
    "toolcall-spec": Peer(
        distribution="toolcall-spec",
        executable="toolcall-spec",
        recording="suite.json",
        record_stdio=lambda exe, out: [exe, "record", "--out", str(out), "--", *LIVE],
        record_http=lambda exe, out, url, port: [
            *(exe, "record", "--out", str(out), "--upstream", url, "--port", str(port))
        ],
        replay_stdio=lambda exe, rec, report: [
            exe,
            "serve-fixtures",
            str(rec),
            "--log",
            str(report),
        ],
        replay_http=lambda exe, rec, report, port: [
            *(exe, "serve-fixtures", str(rec), "--http", "--port", str(port), "--log", str(report))
        ],
        why_not={},
        misses=_toolcall_spec_misses,
    ),
    "mcp-cassette": Peer(
        distribution="mcp-cassette",
        executable="mcp-cassette",
        recording="cassette.json",
        record_stdio=lambda exe, out: [exe, "record", "--cassette", str(out), "--", *LIVE],
        record_http=lambda exe, out, url, port: [
            *(exe, "record", "--cassette", str(out), "--url", url, "--port", str(port))
        ],
        replay_stdio=lambda exe, rec, report: [exe, "serve", str(rec), "--report", str(report)],
        replay_http=lambda exe, rec, report, port: [
            *(exe, "serve", str(rec), "--port", str(port), "--report", str(report))
        ],
        why_not={},
        misses=_mcp_cassette_misses,
    ),
    "mcp-rec": Peer(
        distribution="mcp-rec",
        executable="mcp-rec",
        recording="session.jsonl",
        record_stdio=lambda exe, out: [exe, "record", "-o", str(out), "--", *LIVE],
        record_http=None,
        replay_stdio=lambda exe, rec, report: [exe, "replay", str(rec)],
        replay_http=None,
        why_not={"http": "no HTTP option"},
    ),
    "mcp-recorder": _mcp_recorder(lambda exe: [exe], variant=""),
    "mcp-recorder+hooks": _mcp_recorder(
        lambda exe: [PY, str(MCP_RECORDER_HOOKS)], variant="Starlette's startup hooks given back"
    ),
    "agent-vcr": Peer(
        distribution="agent-vcr",
        executable="agent-vcr",
        recording="session.vcr",
        # Its `record --transport stdio` deadlocks a real client (docs/record-replay.md): its
        # own MCPRecorder, through the tests' script, records.
        record_stdio=lambda exe, out: [PY, str(AGENT_VCR_RECORDING), str(out), *LIVE],
        record_http=None,
        replay_stdio=lambda exe, rec, report: [
            *(exe, "replay", "--file", str(rec), "--transport", "stdio")
        ],
        replay_http=None,
        why_not={"http": "SSE, not streamable HTTP"},
        variant="its MCPRecorder, fed by a pipe",
    ),
    "agent-vcr-cli": Peer(
        distribution="agent-vcr",
        executable="agent-vcr",
        recording="session.vcr",
        record_stdio=lambda exe, out: [
            *(exe, "record", "--transport", "stdio", "--server-command", PY),
            *("--server-args", str(LIVE_SERVER), "--output", str(out)),
        ],
        record_http=None,
        replay_stdio=lambda exe, rec, report: [
            *(exe, "replay", "--file", str(rec), "--transport", "stdio")
        ],
        replay_http=None,
        why_not={"http": "SSE, not streamable HTTP"},
        variant="agent-vcr record",
    ),
    "mcp-vcr": Peer(
        distribution="mcp-vcr",
        executable="mcp-vcr",
        recording="session.ndjson",
        record_stdio=lambda exe, out: [
            *(exe, "record", "--format", "ndjson", "--output", str(out), "--", *LIVE)
        ],
        record_http=None,
        replay_stdio=None,
        replay_http=None,
        why_not={
            "http": "no HTTP option",
            "replay": "its replay re-sends the recording to a live server; it serves no client",
        },
    ),
}


def version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def outcomes_json(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    return [outcome.as_json() for outcome in outcomes]


def imported(recording: Path, peer: str) -> dict[str, Any]:
    """``toolcall-spec promote --from cassette`` on the recording (toolcall-spec's is a suite)."""
    if peer == "toolcall-spec":
        suite = json.loads(recording.read_text("utf-8"))
        return _entries(suite)
    run = subprocess.run(
        [TOOLCALL_SPEC, "promote", "--from", "cassette", str(recording)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if run.returncode != 0:
        return {"ok": False, "error": run.stderr.strip()[-300:]}
    return _entries(json.loads(run.stdout))


def _entries(suite: dict[str, Any]) -> dict[str, Any]:
    entries = suite["tasks"][0]["fixtures"]["toolResponses"]
    return {
        "ok": True,
        "calls": [entry["tool"] for entry in entries],
        "isError": [entry.get("isError", False) for entry in entries],
    }


def run_peer(name: str, transport: str, workdir: Path, bins: dict[str, Path]) -> dict[str, Any]:
    """One peer over one transport: record, replay, import. Never raises."""
    peer = PEERS[name]
    result: dict[str, Any] = {"peer": name, "transport": transport}
    record = peer.record_stdio if transport == "stdio" else peer.record_http
    if record is None:
        return {**result, "supported": False, "why": peer.why_not.get(transport, "no way")}
    exe = shutil.which(peer.executable, path=str(bins.get(name, Path(PY).parent)))
    if exe is None:
        return {**result, "supported": True, "installed": False}
    result.update(supported=True, installed=True)
    folder = workdir / f"{name}-{transport}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    recording = folder / peer.recording
    log = folder / "client-stderr.log"
    try:
        if transport == "stdio":
            assert peer.record_stdio is not None
            result["record"] = outcomes_json(session(peer.record_stdio(exe, recording), PROBE, log))
        else:
            result["record"] = _record_http(peer, exe, recording, folder)
    except Exception as exc:
        result["record_failure"] = str(exc)[:400]
        return result
    result["recorded_file"] = wait_for_file(recording)
    if not result["recorded_file"]:
        return result
    try:
        result["import"] = imported(recording, name)
    except Exception as exc:
        result["import"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    replay = peer.replay_stdio if transport == "stdio" else peer.replay_http
    if replay is None:
        result["replay_why_not"] = peer.why_not.get("replay", "no replay over this transport")
        return result
    try:
        result["replay"] = _replay(peer, transport, exe, recording, folder)
    except Exception as exc:
        result["replay_failure"] = f"{type(exc).__name__}: {exc}"[:400]
        return result
    result["misses_counted"] = peer.misses(folder)
    return result


def _replay(
    peer: Peer, transport: str, exe: str, recording: Path, folder: Path
) -> list[dict[str, Any]]:
    """The probe and the miss, asked of the peer's replay of its recording."""
    report = folder / REPORT
    log = folder / "client-stderr.log"
    if transport == "stdio":
        assert peer.replay_stdio is not None
        command = peer.replay_stdio(exe, recording, report)
        outcomes = outcomes_json(session(command, [*PROBE, MISS], log))
        if str(report) in command:
            wait_for_file(report)  # written as the replay server exits, after the client has gone
        return outcomes
    assert peer.replay_http is not None
    port = free_port()
    server = Background(peer.replay_http(exe, recording, report, port), folder / REPLAY_LOG)
    try:
        return outcomes_json(session(server.url(port), [*PROBE, MISS], log))
    finally:
        server.stop()


def _record_http(peer: Peer, exe: str, recording: Path, folder: Path) -> list[dict[str, Any]]:
    """The live server over HTTP (when the peer proxies one), the peer's recorder in front of it,
    the client at the recorder; then the recorder stopped (Ctrl-C), as a person ends a
    recording."""
    assert peer.record_http is not None
    live = Background([*LIVE, "--http"], folder / "live.log") if peer.live_over_http else None
    try:
        upstream = live.url() if live is not None else ""
        port = free_port()
        recorder = Background(peer.record_http(exe, recording, upstream, port), folder / "rec.log")
        try:
            return outcomes_json(session(recorder.url(port), PROBE, folder / "client-stderr.log"))
        finally:
            recorder.stop()  # it saves as it stops
    finally:
        if live is not None:
            live.stop()


# --- what the table says -------------------------------------------------------------------------


def _answer(outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return "no call"
    if outcome["failure"]:
        reason = outcome["failure"]
        return "no answer (timeout)" if "TimeoutError" in reason else f"no answer ({reason[:60]})"
    if outcome["rpcError"] is not None:
        return f"JSON-RPC error {outcome['rpcError']}"
    return "tool error (isError)" if outcome["isError"] else "success"


def cells(result: dict[str, Any]) -> dict[str, str]:
    """The table's cells for one run, each read from what the run measured."""
    if not result["supported"]:
        return {"records": f"no: {result['why']}"}
    if not result.get("installed"):
        return {"records": "not installed (see the session's log)"}
    if "record_failure" in result:
        return {"records": f"no: {result['record_failure'][:120]}"}
    failed = next((o["failure"] for o in result["record"] if o["failure"]), None)
    if failed is not None:
        written = "a file written" if result["recorded_file"] else "nothing written"
        return {"records": f"no: the client got {failed[:80]}; {written}"}
    if not result["recorded_file"]:
        return {"records": "no: nothing written"}
    answers = [(o["isError"], o["rpcError"]) for o in result["record"]]
    records = "yes" if answers == LIVE_ANSWERS else f"the client got {answers}"
    out = {"records": records, "imports": _import_cell(result.get("import"))}
    if "replay" not in result:
        out["replays"] = f"no: {result.get('replay_failure') or result.get('replay_why_not')}"
        return out
    replay = result["replay"]

    def at(i: int) -> dict[str, Any] | None:
        return replay[i] if i < len(replay) else None

    first, second = at(0), at(1)
    if len(replay) == 1 and first and first["failure"]:  # the session itself failed
        out["replays"] = f"no: {first['failure'].split('(')[0].strip()[:80]}"  # ( : its request
        return out
    out["replays"] = "yes"
    out["isError kept"] = "yes" if first and first["isError"] is True else _answer(first)
    in_order = bool(first and second and first["isError"] and second["isError"] is False)
    out["same call twice: fail, then success"] = "yes" if in_order else f"no: {_answer(second)}"
    out["recorded JSON-RPC error"] = _answer(at(3))
    out["a miss"] = _answer(at(4))
    counted = result.get("misses_counted")
    out["misses counted"] = "no counter" if counted is None else str(counted)
    return out


def _import_cell(found: dict[str, Any] | None) -> str:
    if found is None:
        return "-"
    if not found["ok"]:
        return f"no: {found['error'][:100]}"
    if found["isError"] == RECORDED_FAILURES:
        return f"yes, {len(found['calls'])} entries, isError as recorded"
    return f"{len(found['calls'])} entries, isError {found['isError']}"


COLUMNS = (
    "records",
    "imports",
    "replays",
    "isError kept",
    "same call twice: fail, then success",
    "recorded JSON-RPC error",
    "a miss",
    "misses counted",
)


def rows(document: dict[str, Any], *, merged: bool = False) -> list[list[str]]:
    """One row per peer and transport; ``merged``: a transport the peer has no way to record
    over is no row of its own but a note on the transport cell of the peer's other rows."""
    versions = document["versions"]
    results = document["results"]
    out = []
    for result in results:
        peer = PEERS[result["peer"]]
        name = f"{peer.distribution} {versions.get(peer.distribution) or ''}".strip()
        if peer.variant:
            name += f" ({peer.variant})"
        transport = result["transport"]
        if merged:
            if not result["supported"]:
                continue
            for other in results:
                if other["peer"] == result["peer"] and not other["supported"]:
                    transport += f" (not {other['transport']}: {other['why']})"
        found = cells(result)
        out.append([name, transport, *(found.get(c, "-") for c in COLUMNS)])
    return out


def markdown(document: dict[str, Any]) -> str:
    """The table of docs/record-replay.md, made from a run's JSON."""
    header = ["peer", "transport", *COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows(document, merged=True):
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines)


def render(document: dict[str, Any]) -> str:
    header = ["peer", "transport", *COLUMNS]
    table = [header, *rows(document)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


TABLE_BLOCK = table_block("record-peers-table")


def replace_table(page: Path, table: str) -> None:
    docs_tables.replace_table(page, table, TABLE_BLOCK, "record-peers-table")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.record_peers")
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--transports", default=",".join(TRANSPORTS))
    parser.add_argument("--json", default="build/record_peers.json")
    parser.add_argument("--workdir", default=None)
    parser.add_argument(
        "--venv",
        action="append",
        default=[],
        metavar="PEER=BIN",
        help="a peer installed in a venv of its own: that venv's bin folder (mcp-cassette needs "
        "Python 3.12)",
    )
    parser.add_argument("--markdown", metavar="JSON", default=None)
    parser.add_argument("--page", default=None)
    return parser.parse_args(argv)


def venv_version(distribution: str, bins: Path | None) -> str | None:
    """A peer's version, from its own venv when it has one (it is not importable here)."""
    python = bins / "python" if bins else None
    if python is None or not python.exists():
        return version(distribution)
    script = f"import importlib.metadata as m; print(m.version({distribution!r}))"
    found = subprocess.run(
        [str(python), "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip() or None


def main(argv: list[str]) -> None:
    options = parse(argv)
    if options.markdown is not None:
        docs_tables.print_or_write(options.markdown, options.page, markdown, replace_table)
        return
    workdir = Path(options.workdir or tempfile.mkdtemp(prefix="toolcall-spec-record-peers-"))
    bins = {peer: Path(folder) for peer, _, folder in (v.partition("=") for v in options.venv)}
    results = []
    for name in options.peers.split(","):
        for transport in options.transports.split(","):
            results.append(run_peer(name, transport, workdir, bins))
            print(f"  {name} / {transport}: done", file=sys.stderr)
    versions = {p.distribution: venv_version(p.distribution, bins.get(n)) for n, p in PEERS.items()}
    versions["mcp"] = version("mcp")
    document = {
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "python": platform.python_version(),
        "versions": versions,
        "probe": {"calls": [list(c) for c in PROBE], "miss": list(MISS)},
        "results": results,
    }
    print(f"measured {document['date']}, Python {document['python']}")
    print("versions: " + ", ".join(f"{k}=={v}" for k, v in versions.items()))
    print(render(document))
    output = Path(options.json)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"\nJSON: {output}  recordings and logs: {workdir}")


if __name__ == "__main__":
    main(sys.argv[1:])
