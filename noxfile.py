"""Every routine task of the project as a nox session.

nox -s generate            regenerate generated/ from schemas/ (-- --check: fail on drift)
nox -s test                the test suite (pytest + Hypothesis), less the fault tests
nox -s faults              the fault sweeps and stateful fault tests of the durable paths
nox -s lint                ruff check, ruff format --check, and the import contracts (lint-imports)
nox -s typecheck           mypy --strict: src, tests, benchmarks and the docs hooks
nox -s docs                mkdocs build --strict
nox -s docs_check          the strict build, then the built site in Debian's headless Chromium
nox -s bench               benchmarks, as ratios against peers measured in the same run
nox -s mcp_matrix          the MCP framework tests against each supported mcp / fastmcp pair
nox -s inspect             an Inspect AI eval whose tools are a suite served by serve-fixtures
nox -s floors              the store, ingest, MCP and CLI tests on the lowest declared dependencies
nox -s peers               the telemetry peers side by side on one probe server (docs/peers.md)
nox -s record_peers        the MCP cassette recorders side by side (docs/record-replay.md)
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox

# tests/support/floors.py derives the floors from pyproject.toml; the tests check it too.
sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
from support.floors import floor_requirements, floors_test_tools, names, read_pyproject

nox.options.sessions = ["generate", "lint", "typecheck", "test"]
nox.options.reuse_existing_virtualenvs = True

GENERATOR = "datamodel-code-generator==0.89.0"
"""Pinned: generated/ is reproduced byte for byte only by this exact generator version."""

IMPORT_LINTER = "import-linter==2.17"
"""The layer contracts ([tool.importlinter] in pyproject.toml) are checked by this version."""


GENERATED_PROFILES = (None, "typed")
"""The generator's runs: the Pydantic models ([tool.datamodel-codegen]: generated/models), then
the TypedDicts (its profile ``typed``: generated/typed)."""


@nox.session
def generate(session: nox.Session) -> None:
    """Regenerate generated/ from schemas/: every run of GENERATED_PROFILES, each with the
    session's arguments (``-- --check`` checks each for drift, and fails on the first), then the
    TypeScript (generated/typescript, checked the same way)."""
    session.install(GENERATOR)
    for profile in GENERATED_PROFILES:
        selected = () if profile is None else ("--profile", profile)
        session.run("datamodel-codegen", *selected, *session.posargs)
    _generate_typescript(session)


def _generate_typescript(session: nox.Session) -> None:
    """generated/typescript: the types by json-schema-to-typescript and the bundled schemas by
    `toolcall-spec schema --bundle` (typescript/scripts/generate.mjs). The generator is pinned in
    typescript/package-lock.json and installed from it by `npm ci`; the package itself is
    installed for its bundler. ``-- --check`` fails on drift."""
    session.install("-e", ".")
    _npm_ci(session, "typescript")
    check = ("--check",) if "--check" in session.posargs else ()
    session.run("node", "typescript/scripts/generate.mjs", *check, external=True)


def _install_mcp_vcr(session: nox.Session) -> None:
    """mcp-vcr records the transcripts ``promote --from mcp-vcr`` is tested on
    (tests/mcp_boundary/test_cassettes.py). It declares Requires-Python >=3.12, so pip refuses it
    in the test extra on 3.11, where it installs and runs all the same: hence here, past that
    check, after the package. Without it that test skips, and fails under CI."""
    session.install("--ignore-requires-python", "mcp-vcr==0.2.0")


PARALLEL = ("-n", "auto", "--dist", "loadscope")
"""pytest-xdist: one worker per core; a module's tests stay on one worker, so a module-scoped
fixture (a built wheel, a served host) is made once."""


@nox.session
def test(session: nox.Session) -> None:
    """Install the package with every extra and run the test suite on every core, with the 25
    slowest tests listed. Arguments go to pytest: ``nox -s test -- -m "not slow"`` is the quick
    inner loop, ``nox -s test -- -n 0 tests/x.py`` one file in one process."""
    # docs: the tests of the docs build (tests/test_docs_*.py) render Markdown with it.
    session.install("-e", ".[all,test,docs]")
    _install_mcp_vcr(session)
    # The npm packages the node tests use, where npm is installed (without it those tests skip,
    # and fail under CI: tests/support/node.py): the root's (the MCP TypeScript SDK that the
    # recording and replay tests run as client and server) and the TypeScript package's.
    if shutil.which("npm") is not None:
        _npm_ci(session)
        _npm_ci(session, "typescript")
    session.run("pytest", *PARALLEL, "--durations=25", "-m", "not faults", *session.posargs)


FAULTS_PROFILE = "faults"
"""The Hypothesis profile of ``nox -s faults`` (tests/conftest.py): its example counts are what
keep the session inside its time budget on a 2-core machine."""


@nox.session
def faults(session: nox.Session) -> None:
    """The durable paths driven through faults (tests marked ``faults``): the fault sweeps of the
    ingest log's writer, its loader and checkpoint, and the recorder, every file-system call
    failed in turn (ENOSPC, EIO, EDQUOT, EMFILE, a kill); and the stateful Hypothesis machines
    of endpoint + log + loader + engine and of the recording proxy. Prints each sweep's fault
    points. ``TOOLCALL_SPEC_FAULTS_PROFILE`` picks another Hypothesis profile."""
    session.install("-e", ".[all,test,docs]")  # docs: every test module is collected
    if shutil.which("npm") is not None:
        _npm_ci(session)
    env = {"TOOLCALL_SPEC_HYPOTHESIS_PROFILE": FAULTS_PROFILE}
    session.run("pytest", *PARALLEL, "-m", "faults", "-rA", *session.posargs, env=env)


MCP_MATRIX = {
    # The newest releases of the supported series, whatever they are on the day it runs.
    "newest": ("mcp>=2.3,<3", "fastmcp>=4,<5"),
    # The oldest supported pair: mcp's lowest 2.x we accept, with fastmcp's first 4.x release
    # (it installs beside mcp 2.3.0: fastmcp-slim 4.0.0 asks for mcp>=2.0,<3).
    "oldest": ("mcp==2.3.0", "fastmcp==4.0.0"),
    # Not supported, and refused as such: the last mcp 1.x, with the newest fastmcp 3.x that
    # installs beside it (no fastmcp 4 does).
    "unsupported-refused": ("mcp==1.30.0", "fastmcp>=3,<4"),
}
UNSUPPORTED = "unsupported-refused"
"""The framework versions ``instrument`` supports, tested rather than assumed (pyproject.toml
states the same ranges; docs/analytics.md says why mcp 1.x is not supported)."""

MCP_MATRIX_TESTS = ("tests/mcp_boundary", "tests/analytics/test_otel_sink.py")
"""The tests that run against the frameworks: instrument on every framework, over stdio and
streamable HTTP with real clients, and the OpenTelemetry sink on each framework's spans."""


_VERSIONS_OF_THE_FRAMEWORKS = (
    "import importlib.metadata as m; names = ('mcp', 'fastmcp', 'opentelemetry-sdk'); "
    "found = {d.metadata['Name'].lower(): d.version for d in m.distributions()}; "
    "print(', '.join(f'{n} {found.get(n, \"not installed\")}' for n in names))"
)
"""Prints the installed versions of the frameworks (and the OpenTelemetry SDK) in a session."""


@nox.session
@nox.parametrize("pair", list(MCP_MATRIX), ids=list(MCP_MATRIX))
def mcp_matrix(session: nox.Session, pair: str) -> None:
    """The MCP framework tests against each supported pair of ``mcp`` and ``fastmcp`` (the
    newest, the oldest), and the refusal of ``mcp`` 1.x and ``fastmcp`` 3.x; prints the versions
    that ran."""
    mcp_requirement, fastmcp_requirement = MCP_MATRIX[pair]
    if pair == UNSUPPORTED:  # without the extras, whose ranges would refuse these versions
        session.install("--upgrade", "-e", ".[otel,test]", mcp_requirement, fastmcp_requirement)
        tests: tuple[str, ...] = ("tests/mcp_boundary/test_unsupported_frameworks.py",)
    else:
        # One resolve: the pins win over the extras' ranges (and --upgrade takes the newest).
        session.install("--upgrade", "-e", ".[all,test]", mcp_requirement, fastmcp_requirement)
        _install_mcp_vcr(session)
        tests = MCP_MATRIX_TESTS
    versions = session.run("python", "-c", _VERSIONS_OF_THE_FRAMEWORKS, silent=True)
    session.log(f"mcp_matrix({pair}): {str(versions).strip()}")
    session.run("pytest", *PARALLEL, *tests, *session.posargs)


INSPECT_AI = "inspect-ai==0.3.285"
"""The Inspect AI release ``nox -s inspect`` runs the example eval on. Pinned: not a dependency of
the package (its users bring their own), and a new release is taken by changing the pin."""

INSPECT_EXAMPLE = "docs/examples/inspect_replay.py"
INSPECT_TESTS = ("tests/mcp_boundary/test_inspect_eval.py",)


@nox.session
def inspect(session: nox.Session) -> None:
    """The Inspect AI eval of docs/examples/inspect_replay.py, its tools a suite served by
    ``serve-fixtures`` over MCP stdio, driven by Inspect's scripted mock model: mypy --strict on
    the example and its test against the installed inspect-ai, then the test. inspect-ai works
    with the mcp 2.x the package's extras take, so both share one environment; the test fails
    here, rather than skipping, when inspect-ai cannot be imported."""
    test_tools = [
        text
        for text in read_pyproject(Path("pyproject.toml"))["project"]["optional-dependencies"][
            "test"
        ]
        if names([text]) & {"pytest", "hypothesis", "mypy"}
    ]
    session.install("-e", ".[mcp]", INSPECT_AI, *test_tools)
    _generated_overlay()
    session.run("mypy", INSPECT_EXAMPLE, *INSPECT_TESTS)
    env = {"TOOLCALL_SPEC_REQUIRE_INSPECT": "1"}
    session.run("pytest", *INSPECT_TESTS, *session.posargs, env=env)


FLOORS_TESTS = (
    "tests/analytics/store",
    "tests/analytics/test_ingest_batch.py",
    "tests/analytics/test_ingest_jsonl.py",
    "tests/analytics/test_ingest_parallel.py",
    "tests/analytics/test_ingest_validator_differential.py",
    "tests/http/test_ingest_endpoint.py",
    "tests/http/test_ingest_log.py",
    "tests/http/test_ingest_traces.py",
    "tests/http/test_ingest_traces_log.py",
    "tests/mcp_boundary",
    "tests/cli",
)
"""What ``nox -s floors`` runs: the event store on both engines, the ingest paths (JSONL, the
endpoint, its write-ahead log and loader, OTLP traces), the MCP boundary (instrument, record,
serve-fixtures, with real clients) and the CLI."""

FLOORS_LEFT_OUT = (
    "tests/mcp_boundary/test_cassettes.py",
    "tests/mcp_boundary/test_unsupported_frameworks.py",
)
"""Left out of ``nox -s floors``: test_cassettes.py, whose peer recorder mcp-recorder cannot be
installed beside the floors (tests/support/floors.py, LEFT_OUT_TEST_TOOLS, says why; ``nox -s
test`` runs it); test_unsupported_frameworks.py, which needs mcp 1.x (``nox -s mcp_matrix``)."""

_INSTALLED_VERSIONS = (
    "import importlib.metadata as m, sys; names = sys.argv[1:]; "
    "found = {d.metadata['Name'].lower().replace('_', '-'): d.version for d in m.distributions()}; "
    "print('\\n'.join(f'{n:40} {found.get(n, \"not installed\")}' for n in names))"
)
"""Prints the installed version of each package named on its command line."""


@nox.session
def floors(session: nox.Session) -> None:
    """The package on its dependency floors: every runtime dependency and every dependency of
    the ``all`` extra pinned with ``==`` to the lowest version pyproject.toml declares
    (tests/support/floors.py), in one resolve with the test extra, so no floor can move; prints
    the versions installed, then runs FLOORS_TESTS (less FLOORS_LEFT_OUT). The test tools are
    the test extra's, the newest that install beside the floors.

    It runs on the interpreter nox runs on; ``nox -s floors --force-python 3.10`` runs it on the
    lowest Python the package declares, where one is installed (CI's machine has 3.11 only)."""
    pyproject = read_pyproject(Path("pyproject.toml"))
    pins = floor_requirements(pyproject)
    session.install("-e", ".[all]", *pins, *floors_test_tools(pyproject))
    _install_mcp_vcr(session)
    if shutil.which("npm") is not None:
        _npm_ci(session)
    session.run("python", "-c", _INSTALLED_VERSIONS, *sorted(names(pins)))
    left_out = [f"--ignore={path}" for path in FLOORS_LEFT_OUT]
    session.run("pytest", *PARALLEL, "-m", "not faults", *left_out, *FLOORS_TESTS, *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, then the import contracts: the layers of docs/architecture.md, no cycles."""
    session.install("ruff==0.17.6", IMPORT_LINTER)
    folders = ("src", "tests", "noxfile.py", "benchmarks", "docs/hooks", "docs/examples")
    session.run("ruff", "check", *folders)
    session.run("ruff", "format", "--check", *folders)
    overlay = _package_overlay("build/importlinter")
    session.run("lint-imports", "--no-cache", env={"PYTHONPATH": overlay})


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over everything listed in [tool.mypy] files: src, tests, benchmarks and the
    docs build's hooks. test: pytest, hypothesis and the jsonschema stubs; docs: mkdocs."""
    session.install("-e", ".[all,test,docs]")  # test: mypy, pinned
    _generated_overlay()
    session.run("mypy", *session.posargs)


GENERATED_PACKAGES = ("models", "typed")
"""The folders of generated/, each imported as ``toolcall_spec.<folder>``."""


def _generated_overlay() -> None:
    """A fresh copy of each generated/<folder> as build/typecheck/toolcall_spec/<folder> (on
    mypy_path).

    At run time a source checkout imports them as toolcall_spec.models and toolcall_spec.typed
    through the package's __path__, which mypy does not follow; the copy gives mypy the same
    module tree.
    """
    from pathlib import Path  # noqa: PLC0415

    for folder in GENERATED_PACKAGES:
        target = Path("build/typecheck/toolcall_spec") / folder
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(
            Path("generated") / folder, target, ignore=shutil.ignore_patterns("__pycache__")
        )


def _package_overlay(folder: str) -> str:
    """A fresh copy of the package with every generated package inside it (generated/models as
    toolcall_spec/models ...), the layout of a wheel; returns the folder to put on PYTHONPATH.

    import-linter reads the package from disk and does not follow the __path__ entry through
    which a source checkout imports generated/, so without the copy it would not see the models
    (nor a circle between them and their hand-written bases).
    """
    from pathlib import Path  # noqa: PLC0415

    root = Path(folder)
    shutil.rmtree(root, ignore_errors=True)
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree("src/toolcall_spec", root / "toolcall_spec", ignore=skip)
    for generated in Path("generated").iterdir():
        if generated.is_dir() and generated.name != "__pycache__":
            shutil.copytree(generated, root / "toolcall_spec" / generated.name, ignore=skip)
    return str(root.resolve())


@nox.session
def docs(session: nox.Session) -> None:
    """Build the docs site strictly (a broken link or anchor fails the build)."""
    session.install("-e", ".[all,docs]")
    _npm_ci(session)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site")


@nox.session
def docs_check(session: nox.Session) -> None:
    """Build the site strictly, then check it in a real browser: Debian's headless Chromium
    (apt-get install chromium chromium-driver) loads the home page, a schema page, the
    requirement matrix, the tutorial and the diagrams (drawn by the npm mermaid that `npm ci`
    installs), and searches the site. Screenshots go to $TMPDIR/toolcall-spec-docs."""
    session.install("-e", ".[all,docs,test]")
    _npm_ci(session)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site")
    session.run("pytest", "-p", "no:randomly", "tests/docs/test_docs_browser.py", *session.posargs)


def _npm_ci(session: nox.Session, folder: str = ".") -> None:
    """The npm packages of ``folder``'s package-lock.json, as `npm ci` installs them: the
    repository root's (the docs' mermaid) or typescript/'s (the TypeScript package's generator,
    ajv, typescript, the MCP SDK). npm itself comes from the system (Debian's `npm`), and its
    absence is a clear error."""
    if shutil.which("npm") is None:
        session.error("npm is not on PATH: install Node.js and npm (Debian: apt-get install npm)")
    flags = ("--no-audit", "--no-fund", "--ignore-scripts")
    session.run("npm", "ci", "--prefix", folder, *flags, external=True)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks: figures as ratios against peers measured in the same run."""
    session.install("-e", ".[all,bench]")
    session.run("python", "-m", "benchmarks", *session.posargs)


PEER_FRAMEWORKS = ("mcp==2.3.0", "fastmcp==4.2.3", "opentelemetry-sdk==1.45.2")
"""What the probe server runs on in ``nox -s peers``: the frameworks and the OpenTelemetry SDK."""

PEER_PINS = (
    "logfire==5.4.0",
    "sentry-sdk==2.75.0",
    "opentelemetry-instrumentation-mcp==0.62.4",
    "openinference-instrumentation-mcp==2.0.13",
    "opentel-mcp==0.1.0",
    "agentcat==2.1.0",
)
"""The peers of ``nox -s peers``, each pinned: the comparison is reproduced by these versions (a
newer peer is measured by changing a pin, and docs/peers.md with it). Not an extra of the
package: nothing of it is needed to use toolcall-spec."""


@nox.session
def peers(session: nox.Session) -> None:
    """The comparison of docs/peers.md: each peer instruments the probe server in a process of
    its own, the real mcp client drives the same 22 calls over stdio and streamable HTTP, and a
    table of what each recorded is printed and written to build/peers.json. It reports what the
    peers do; it does not fail when they change (``-- --peers a,b`` ``--transports stdio``...).

    Each peer is installed on its own, with the frameworks pinned beside it: a peer that cannot
    be installed with them is left out (its rows then say the import failed), and none can move
    the frameworks to other versions."""
    session.install("-e", ".[mcp,otel,http]", *PEER_FRAMEWORKS)
    for pin in PEER_PINS:
        session.run(
            "python", "-m", "pip", "install", "--quiet", pin, *PEER_FRAMEWORKS, success_codes=[0, 1]
        )
    session.run("python", "-m", "benchmarks.peers", *session.posargs)


RECORD_PEER_PINS = ("mcp-recorder==0.5.0", "agent-vcr==0.1.0", "mcp-rec==0.1.1")
"""The cassette recorders of ``nox -s record_peers`` that install beside the package, pinned like
PEER_PINS (docs/record-replay.md, "Compared with MCP cassette recorders")."""

RECORD_PEER_PINS_PAST_PYTHON = ("mcp-vcr==0.2.0",)
"""Declares Python 3.12 or newer but runs on 3.11: installed past that check (_install_mcp_vcr)."""

MCP_CASSETTE = "mcp-cassette[http]==0.4.0"
"""Needs Python 3.12 (PEP 695 syntax): installed in a 3.12 venv of its own, never beside the
package (its pytest11 plugin would load into every pytest run). Its commands are proxies and a
replay server: the client and the live server stay in the session's venv."""

PYTHON_312 = "python3.12"
"""The interpreter of mcp-cassette's venv: ``$RECORD_PEERS_PYTHON312``, else a pyenv 3.12 (whose
shim on PATH refuses to run while another version is selected), else on PATH."""


def _python312() -> str | None:
    import os  # noqa: PLC0415

    pyenv = sorted(Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    return os.environ.get("RECORD_PEERS_PYTHON312") or (
        str(pyenv[-1]) if pyenv else shutil.which(PYTHON_312)
    )


@nox.session
def record_peers(session: nox.Session) -> None:
    """The comparison of docs/record-replay.md: the real mcp client makes the same calls through
    each cassette recorder (and ``toolcall-spec record``), over stdio and streamable HTTP where
    the peer can, then against each one's replay; prints the table and writes
    build/record_peers.json (``-- --peers a,b --transports stdio``...). A peer that cannot be
    installed or run is a row that says so; it never fails the session."""
    session.install("-e", ".[mcp,http]")
    for pin in RECORD_PEER_PINS:
        session.run("python", "-m", "pip", "install", "--quiet", pin, success_codes=[0, 1])
    for pin in RECORD_PEER_PINS_PAST_PYTHON:
        flags = ("--quiet", "--ignore-requires-python")
        session.run("python", "-m", "pip", "install", *flags, pin, success_codes=[0, 1])
    venv = Path(session.create_tmp()).resolve() / "mcp-cassette-py312"
    python312 = _python312()
    if python312 is None:
        session.warn(f"no {PYTHON_312}: mcp-cassette's row will say it is not installed")
    else:
        session.run(python312, "-m", "venv", str(venv), external=True, success_codes=[0, 1])
        pip = (str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", MCP_CASSETTE)
        session.run(*pip, external=True, success_codes=[0, 1])
    session.run(
        "python",
        "-m",
        "benchmarks.record_peers",
        "--venv",
        f"mcp-cassette={venv / 'bin'}",
        *session.posargs,
    )
