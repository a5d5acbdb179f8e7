"""A pytest plugin (registered as ``pytest11``, installed with the ``pytest`` extra): record a real
MCP server's tool calls into a suite file named after the test, and replay them to the test's
MCP client afterwards, the way pytest-recording and VCR.py record HTTP.

The ``mcp_server`` fixture hands the test an MCP server: ``mcp_server.command`` (an argv a client
launches over stdio; ``mcp_server.stdio_parameters()`` for the ``mcp`` client) or, when the marker
names the live server by ``url=``, ``mcp_server.url`` (streamable HTTP, served by processes the
fixture runs). Behind it is ``toolcall-spec serve-fixtures`` (replay) or ``toolcall-spec record``
(recording); nothing here answers a call itself.

The cassette is ``<test dir>/cassettes/<module>/<test>.json``. Record modes, as pytest-recording's
(``--toolcall-record-mode``, default ``none``; the marker's ``record_mode`` wins for its tests):

- ``none``: replay; a missing cassette fails the test;
- ``once``: record when the cassette is missing, replay otherwise;
- ``new_episodes``: replay, with misses answered by the live server (``serve-fixtures`` with
  ``onMiss: live`` on a copy of the cassette, itself behind ``record``); after the test, the
  recorded calls the cassette does not answer, by the replay rules, are appended to it;
- ``all``: record, replacing the cassette.

A recording is written to a temporary file and moved into place after the test, so the cassette is
never half written. After a replay, a call the cassette did not answer (``fixtureMissCount`` of
serve-fixtures' ``--log``), or with ``--toolcall-strict`` a recorded call the test never made
(``unconsumedEntries``), fails the test with a report naming each tool and its arguments.
"""

from __future__ import annotations

import copy
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson
import pytest

from toolcall_spec.filesystem import write_file_atomically
from toolcall_spec.loading import DocumentError
from toolcall_spec.openwop_wire import TOOL_CALLED, TOOL_RETURNED
from toolcall_spec.replay.events import FIXTURE_MISS
from toolcall_spec.replay.fixtures import FixtureServer, Miss
from toolcall_spec.replay.journal import journal_path, read_suite_source, suite_bytes
from toolcall_spec.replay.promote import recorded_suite_id
from toolcall_spec.validation import validate

if TYPE_CHECKING:
    from mcp import StdioServerParameters

__all__ = ["RECORD_MODES", "McpServer", "mcp_server"]

RECORD_MODES: Final = ("none", "once", "new_episodes", "all")
MARKER: Final = "mcp_server"
MARKER_ARGS: Final = frozenset({"command", "url", "record_mode", "strict", "cassette"})
CLI: Final = (sys.executable, "-m", "toolcall_spec.cli")

SETTLE_SECONDS: Final = 5.0
"""How long a file the server writes at exit (the replay log, the recording) is waited for after
the test: the client may return before the server has finished exiting."""
START_SECONDS: Final = 60.0
"""How long an HTTP server the fixture starts gets to print its URL."""
STOP_SECONDS: Final = 15.0
"""How long a process the fixture started gets to exit after SIGTERM before it is killed."""

REPLAY, RECORD, NEW_EPISODES = "replay", "record", "new_episodes"
SERVING = re.compile(r"serving on (https?://\S+)")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolcall-spec", "record and replay MCP servers (toolcall-spec)")
    group.addoption(
        "--toolcall-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="how the mcp_server fixture uses cassettes: none (replay only, the default), once, "
        "new_episodes, all",
    )
    group.addoption(
        "--toolcall-strict",
        action="store_true",
        default=False,
        help="fail a replayed test that left recorded calls unmade",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(command=None, url=None, record_mode=None, strict=None, cassette=None): the live "
        "MCP server the mcp_server fixture records (an argv, or a streamable HTTP URL), the "
        "record mode and strictness for this test, and its cassette path",
    )


@dataclass(frozen=True)
class McpServer:
    """What the ``mcp_server`` fixture hands the test: one of ``command`` (launch it as a stdio
    MCP server) and ``url`` (connect over streamable HTTP)."""

    cassette: Path
    """The suite file that is replayed, or that the recording goes to."""
    action: str
    """``replay``, ``record`` or ``new_episodes`` (replay, misses recorded from the live server)."""
    command: list[str] | None = None
    url: str | None = None

    def stdio_parameters(self, env: Mapping[str, str] | None = None) -> StdioServerParameters:
        """``command`` for the ``mcp`` client. The child gets ``env`` (default: this process's
        whole environment, which the live server behind a recording may need; the client alone
        passes only a few variables)."""
        from mcp import StdioServerParameters  # noqa: PLC0415

        if self.command is None:
            raise RuntimeError(f"this MCP server is served over HTTP: connect to {self.url}")
        return StdioServerParameters(
            command=self.command[0],
            args=self.command[1:],
            env=dict(os.environ if env is None else env),
        )


@dataclass(frozen=True)
class _Settings:
    cassette: Path
    mode: str
    strict: bool
    command: list[str] | None
    url: str | None


@pytest.fixture
def mcp_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An MCP server for the test, backed by its cassette (see the module's documentation)."""
    settings = _settings(request.node)
    session = _Session(settings, tmp_path_factory.mktemp("mcp-server"))
    request.node.stash[_SESSION] = session
    try:
        yield session.start()
    finally:
        session.stop()


_SESSION = pytest.StashKey["_Session"]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Once the test body has run: stop the servers, keep the recording, and judge the replay.
    A failure here is the test's own (not an error in teardown)."""
    try:
        yield
    except BaseException:
        report = _finish(item)
        if report:
            item.add_report_section("call", "mcp_server", report)
        raise
    report = _finish(item)
    if report:
        pytest.fail(report, pytrace=False)


def _finish(item: pytest.Item) -> str | None:
    session = item.stash.get(_SESSION, None)
    return None if session is None else session.finish()


# --- settings -----------------------------------------------------------------------------------


def _settings(item: pytest.Item) -> _Settings:
    marker = item.get_closest_marker(MARKER)
    options: dict[str, Any] = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        _usage(item, f"@pytest.mark.{MARKER} takes keyword arguments only")
    unknown = sorted(set(options) - MARKER_ARGS)
    if unknown:
        _usage(item, f"@pytest.mark.{MARKER}: unknown arguments {', '.join(unknown)}")
    mode = options.get("record_mode") or item.config.getoption("toolcall_record_mode") or "none"
    if mode not in RECORD_MODES:
        _usage(item, f"record_mode {mode!r} is not one of {', '.join(RECORD_MODES)}")
    command, url = options.get("command"), options.get("url")
    if command is not None and (
        isinstance(command, str)
        or not isinstance(command, Sequence)
        or not command
        or not all(isinstance(part, str | os.PathLike) for part in command)
    ):
        _usage(item, f"command= must be a non-empty list of strings (an argv), not {command!r}")
    if command is not None and url is not None:
        _usage(item, "give the live server once: command= (stdio) or url= (streamable HTTP)")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        _usage(item, f"url= must be an http(s) URL, not {url!r}")
    cassette = options.get("cassette")
    strict = options.get("strict")
    return _Settings(
        # A relative cassette= is read from the test file's folder, as the default one is.
        cassette=item.path.parent / cassette if cassette is not None else default_cassette(item),
        mode=mode,
        strict=bool(item.config.getoption("toolcall_strict") if strict is None else strict),
        command=[os.fspath(part) for part in command] if command is not None else None,
        url=url,
    )


def _usage(item: pytest.Item, message: str) -> None:
    """A marker the fixture cannot use: the test errors with the message, no traceback."""
    pytest.fail(f"{item.nodeid}: {message}", pytrace=False)


def default_cassette(item: pytest.Item) -> Path:
    """``<test dir>/cassettes/<module>/<test>.json`` (``<Class>.<test>`` for a method), as
    pytest-recording names its cassettes; characters a file name should not hold become ``-``."""
    cls = getattr(item, "cls", None)  # set on pytest.Function items: the test's class, if any
    name = item.name if cls is None else f"{cls.__name__}.{item.name}"
    safe = re.sub(r"[^A-Za-z0-9._-]", "-", name)
    return item.path.parent / "cassettes" / item.path.stem / f"{safe}.json"


# --- one test's server --------------------------------------------------------------------------


class _Background:
    """A process the fixture runs itself (the HTTP servers), its output in a file."""

    def __init__(self, argv: list[str], output: Path) -> None:
        self.output = output
        with output.open("wb") as sink:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT
            )

    def url(self) -> str:
        """The URL the process prints once it serves (``serving on URL``)."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            found = SERVING.search(self.output.read_text(encoding="utf-8", errors="replace"))
            if found:
                return found.group(1)
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                text = self.output.read_text(encoding="utf-8", errors="replace").strip()
                pytest.fail(f"the MCP server did not start serving:\n{text}", pytrace=False)
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (the servers write their log and recording on it), then a kill."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class _Session:
    settings: _Settings
    work: Path
    action: str = REPLAY
    suite: Any = None
    processes: list[_Background] = field(default_factory=list)
    finished: bool = False

    @property
    def log(self) -> Path:
        return self.work / "replay-log.json"

    @property
    def recording(self) -> Path:
        return self.work / "recording.json"

    def start(self) -> McpServer:
        self.action = self._action()
        if self.action != RECORD:
            self.suite = _read_cassette(self.settings.cassette)
        if self.settings.url is not None:  # the test speaks HTTP: so does its replay
            return McpServer(self.settings.cassette, self.action, url=self._start_http())
        return McpServer(self.settings.cassette, self.action, command=self._stdio_command())

    def _action(self) -> str:
        settings, exists = self.settings, self.settings.cassette.is_file()
        if settings.mode == "none" or (settings.mode == "once" and exists):
            if not exists:
                pytest.fail(
                    f"no cassette {settings.cassette} (record mode none replays only): record it "
                    "with --toolcall-record-mode=once",
                    pytrace=False,
                )
            return REPLAY
        if settings.command is None and settings.url is None:
            pytest.fail(
                f"record mode {settings.mode} needs the live server to record: "
                f"@pytest.mark.{MARKER}(command=[...]) or (url=...)",
                pytrace=False,
            )
        return NEW_EPISODES if settings.mode == "new_episodes" and exists else RECORD

    def _record_argv(self, *server: str) -> list[str]:
        suite_id = recorded_suite_id(self.settings.cassette.stem)
        return [*CLI, "record", "--out", str(self.recording), "--suite-id", suite_id, *server]

    def _replay_argv(self, cassette: Path, *rest: str) -> list[str]:
        return [*CLI, "serve-fixtures", str(cassette), "--log", str(self.log), *rest]

    def _live_copy(self) -> Path:
        """The cassette with its task's misses sent to the live server (``onMiss: live``); the
        cassette itself is not touched."""
        suite = copy.deepcopy(self.suite)
        suite["tasks"][0].setdefault("fixtures", {})["onMiss"] = "live"
        target = self.work / "cassette-live.json"
        target.write_bytes(suite_bytes(suite))
        return target

    def _stdio_command(self) -> list[str]:
        command = self.settings.command or []
        if self.action == RECORD:
            return self._record_argv("--", *command)
        if self.action == NEW_EPISODES:
            return self._record_argv("--", *self._replay_argv(self._live_copy(), "--", *command))
        return self._replay_argv(self.settings.cassette)

    def _start_http(self) -> str:
        live = self.settings.url or ""
        if self.action == RECORD:
            return self._background(self._record_argv("--upstream", live, "--port", "0"))
        if self.action == REPLAY:
            return self._background(self._replay_argv(self.settings.cassette, "--http"))
        replay = self._replay_argv(self._live_copy(), "--http", "--upstream", live)
        return self._background(self._record_argv("--upstream", self._background(replay)))

    def _background(self, argv: list[str]) -> str:
        process = _Background(argv, self.work / f"server-{len(self.processes)}.out")
        self.processes.append(process)
        return process.url()

    def stop(self) -> None:
        # The client side first: the recording proxy before the replay behind it.
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()

    def finish(self) -> str | None:
        """Stop the servers, keep what was recorded, and report what failed the test, if any."""
        if self.finished:
            return None
        self.finished = True
        self.stop()
        if self.action == RECORD:
            return self._keep_recording()
        report = _replay_report(self.settings, self.suite, _settled_json(self.log))
        if self.action == NEW_EPISODES:
            problem = self._add_episodes()
            report = "\n".join(part for part in (problem, report) if part) or None
        return report

    def _recorded(self) -> tuple[Any, str | None]:
        """The suite the recording proxy wrote (or its journal), else why there is none."""
        if _settled(self.recording, journal_path(self.recording)) is None:
            return None, (
                f"nothing was recorded for {self.settings.cassette}: the test made no tool call "
                "through the MCP server"
            )
        try:
            suite, _notes = read_suite_source(str(self.recording))
        except DocumentError as exc:
            return None, f"the recording could not be read: {exc}"
        tasks = suite.get("tasks") or []
        if len(tasks) != 1:
            return None, (
                f"the test opened {len(tasks)} MCP sessions: a cassette holds one session "
                "(one client connection per test)"
            )
        return suite, None

    def _keep_recording(self) -> str | None:
        suite, problem = self._recorded()
        if suite is None:
            return problem
        _write_cassette(self.settings.cassette, suite)
        return None

    def _add_episodes(self) -> str | None:
        """Append the recorded calls the cassette does not answer, in call order; the entries
        already there are kept as they are."""
        recorded, problem = self._recorded()
        if recorded is None:
            return None if problem and problem.startswith("nothing") else problem
        merged = copy.deepcopy(self.suite)
        task, new_task = merged["tasks"][0], recorded["tasks"][0]
        new = new_entries(task, new_task["fixtures"]["toolResponses"])
        if not new:
            return None
        task.setdefault("fixtures", {}).setdefault("toolResponses", []).extend(new)
        _merge_tools(task, new_task)
        # The calls and the golden outcome the recording derived describe the whole session just
        # run (its hits were served from these same entries, by the same rules): they replace
        # the old session's, so `toolcall-spec replay` of the cassette makes the new calls.
        task.setdefault("input", {})["calls"] = new_task["input"]["calls"]
        task["expected"] = new_task["expected"]
        _write_cassette(self.settings.cassette, merged)
        return None


def new_entries(task: Mapping[str, Any], recorded: Sequence[Any]) -> list[Any]:
    """The recorded entries the task's fixtures do not answer, by the replay rules (each served
    entry consumed once), in order: what ``new_episodes`` appends."""
    server = FixtureServer.for_task(task)
    return [
        copy.deepcopy(entry)
        for entry in recorded
        if isinstance(server.serve(entry["tool"], entry.get("args", {})), Miss)
    ]


def _merge_tools(task: dict[str, Any], recorded_task: Mapping[str, Any]) -> None:
    """Tools the recording listed that the cassette's tool list lacks are added to it, so
    ``tools/list`` in replay offers the tools of the new calls."""
    listed = task.get("input", {}).get("mcp", {}).get("tools")
    found = recorded_task.get("input", {}).get("mcp", {}).get("tools")
    if not isinstance(listed, list) or not isinstance(found, list):
        return
    names = {tool.get("name") for tool in listed if isinstance(tool, Mapping)}
    listed.extend(tool for tool in found if tool.get("name") not in names)


def _read_cassette(path: Path) -> Any:
    try:
        suite, _notes = read_suite_source(str(path))
    except DocumentError as exc:
        pytest.fail(f"{path}: {exc}", pytrace=False)
    errors = [str(p) for p in validate(suite, "suite") if p.severity == "error"]
    if errors:
        pytest.fail(f"{path} is not a valid suite:\n  " + "\n  ".join(errors), pytrace=False)
    tasks = suite.get("tasks") or []
    if len(tasks) != 1:
        pytest.fail(f"{path} holds {len(tasks)} tasks: a cassette holds one", pytrace=False)
    return suite


def _write_cassette(path: Path, suite: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file_atomically(path, suite_bytes(suite))


def _settled(*paths: Path) -> Path | None:
    """The first of ``paths`` that exists, waiting up to ``SETTLE_SECONDS`` for one."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        for path in paths:
            if path.exists():
                return path
        if time.monotonic() > deadline:
            return None
        time.sleep(0.05)


def _settled_json(path: Path) -> Any:
    return orjson.loads(path.read_bytes()) if _settled(path) is not None else None


# --- the report ---------------------------------------------------------------------------------


def _replay_report(settings: _Settings, suite: Any, log: Any) -> str | None:
    """Why the replay fails the test: misses (always, except under new_episodes where the live
    server answered them and they were recorded), unconsumed entries (strict)."""
    entries = suite["tasks"][0].get("fixtures", {}).get("toolResponses", [])
    summary = log["summary"] if log is not None else None
    lines: list[str] = []
    misses = _missed_calls(log) if log is not None else []
    if misses:
        lines.append(f"{len(misses)} calls missed the cassette (no unconsumed entry matched):")
        lines.extend(f"  {call}" for call in misses)
    if settings.strict:
        unconsumed = summary["unconsumedEntries"] if summary else list(range(len(entries)))
        if unconsumed:
            lines.append(f"strict: {len(unconsumed)} recorded calls were never made:")
            lines.extend(
                f"  entry {i}: {_call_text(entries[i]['tool'], entries[i].get('args'))}"
                for i in unconsumed
            )
    if not lines:
        return None
    return "\n".join(
        [
            f"MCP replay of {settings.cassette}:",
            *lines,
            "Re-record with --toolcall-record-mode=all, or add the new calls with "
            "--toolcall-record-mode=new_episodes.",
        ]
    )


def _missed_calls(log: Mapping[str, Any]) -> list[str]:
    """Each call answered with a fixture miss, as ``tool {args}``, in call order."""
    called: dict[str, tuple[str, Any]] = {}
    missed: list[str] = []
    for event in log.get("events", []):
        payload = event.get("payload", {})
        if event.get("type") == TOOL_CALLED:
            called[payload.get("callId")] = (payload.get("toolName"), payload.get("inputs"))
        elif (
            event.get("type") == TOOL_RETURNED
            and payload.get("error", {}).get("code") == FIXTURE_MISS.code
        ):
            tool, args = called.get(payload.get("callId"), (payload.get("toolName"), None))
            missed.append(_call_text(tool, args))
    return missed


def _call_text(tool: Any, args: Any) -> str:
    return f"{tool} {orjson.dumps(args if args is not None else {}).decode()}"
