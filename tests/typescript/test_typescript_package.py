"""What a TypeScript user gets: ``npm pack`` of typescript/ makes a tarball that installs into an
empty node project (its dependencies from the npm cache that ``npm ci --prefix typescript`` filled,
or the registry), and the examples of docs/typescript.md run there as written: the JavaScript one
under ``node --test`` (a real MCP server and client of the MCP TypeScript SDK, in memory), the
TypeScript one type-checked by ``tsc --noEmit --strict`` against the installed package."""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from support.node import GENERATED, TYPESCRIPT, package_dependencies, run, tool, tsc
from support.repo import REPO

PAGE = REPO / "docs" / "typescript.md"
NODE_TYPES = "@types/node@20.19.25"
"""Node's types for the examples that use `process` (the Node 20 line, as CI's node)."""
PACKAGE_FILES = (
    "package.json",
    "package-lock.json",
    "index.js",
    "index.d.ts",
    "instrument.js",
    "sinks.js",
    "pii.js",
    "unicode.js",
    "README.md",
)


def titled_blocks(page: Path) -> dict[str, str]:
    """The page's code blocks that name a file (```js title="x.mjs"), by file name."""
    pattern = r'^```\w+ title="([^"]+)"\n(.*?)^```$'
    return dict(re.findall(pattern, page.read_text("utf-8"), re.MULTILINE | re.DOTALL))


def sdk_version() -> str:
    lock = json.loads((TYPESCRIPT / "package-lock.json").read_text("utf-8"))
    version: str = lock["packages"]["node_modules/@modelcontextprotocol/sdk"]["version"]
    return version


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packed package. Packed from a copy of typescript/ and generated/typescript, so that
    the staging `npm pack` does (prepack, postpack) never touches the checkout other tests read."""
    package_dependencies()
    root = tmp_path_factory.mktemp("checkout")
    for name in PACKAGE_FILES:
        (root / "typescript").mkdir(exist_ok=True)
        shutil.copy2(TYPESCRIPT / name, root / "typescript" / name)
    shutil.copytree(TYPESCRIPT / "scripts", root / "typescript" / "scripts")
    shutil.copytree(GENERATED, root / "generated" / "typescript")
    dist = root / "dist"
    dist.mkdir()
    packed = run([tool("npm"), "pack", "--pack-destination", str(dist)], cwd=root / "typescript")
    assert packed.returncode == 0, packed.stderr
    (found,) = dist.glob("*.tgz")
    return found


def test_the_tarball_carries_the_code_the_types_and_the_bundled_schemas(tarball: Path) -> None:
    with tarfile.open(tarball) as packed:
        names = {name.removeprefix("package/") for name in packed.getnames()}
    kinds = json.loads((GENERATED / "kinds.json").read_text("utf-8"))
    assert {"index.js", "index.d.ts", "package.json", "generated/index.d.ts"} <= names
    assert {f"generated/{entry['schema']}" for entry in kinds.values()} <= names
    assert not [name for name in names if name.startswith(("scripts/", "node_modules/"))]


@pytest.fixture(scope="module")
def app(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty node project with the tarball and the MCP SDK installed."""
    folder = tmp_path_factory.mktemp("app")
    manifest = {"name": "app", "private": True, "type": "module"}
    (folder / "package.json").write_text(json.dumps(manifest), "utf-8")
    installed = run(
        [
            tool("npm"),
            "install",
            "--prefer-offline",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            str(tarball),
            f"@modelcontextprotocol/sdk@{sdk_version()}",
            NODE_TYPES,
        ],
        cwd=folder,
    )
    assert installed.returncode == 0, installed.stderr
    for name, text in titled_blocks(PAGE).items():
        (folder / name).write_text(text, "utf-8")
    return folder


@pytest.mark.parametrize(
    ("example", "tests"), [("tool-calls.test.mjs", 3), ("analytics.test.mjs", 1)]
)
def test_the_pages_javascript_examples_run_under_node_test(
    app: Path, example: str, tests: int
) -> None:
    """Slow (about 20 s with its fixtures): `npm pack`, then `npm install` of the tarball and the
    MCP SDK into a fresh project, as a user does; the tests of this module share them."""
    result = run([tool("node"), "--test", example], cwd=app, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(rf"^# pass {tests}$", result.stdout, re.MULTILINE), result.stdout
    assert re.search(r"^# fail 0$", result.stdout, re.MULTILINE), result.stdout


@pytest.mark.parametrize("example", ["host.ts", "instrumented.ts"])
def test_the_pages_typescript_examples_type_check_against_the_installed_package(
    app: Path, example: str
) -> None:
    """Over 10 s: one `tsc --strict` run per example, against the package as npm installed it."""
    options = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    options += ["--target", "es2022", "--types", "node"]
    result = run([tsc(), *options, example], cwd=app, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_type_error_against_the_installed_package_is_reported(app: Path) -> None:
    # The check above can fail: the installed types refuse a string isError.
    (app / "wrong.ts").write_text(
        'import type { CallToolResult } from "@toolcall-spec/schemas";\n'
        'export const result: CallToolResult = { content: [], isError: "true" };\n',
        "utf-8",
    )
    options = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext"]
    result = run([tsc(), *options, "wrong.ts"], cwd=app, timeout=180)
    assert result.returncode != 0
    assert "wrong.ts(2," in result.stdout
