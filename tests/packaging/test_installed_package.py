"""The release path a user takes: `python -m build` makes an sdist, and the wheel built FROM that
sdist is installed, with its dependencies resolved by pip, into a fresh virtual environment. There
the models import, every schema, model, example and spec page is package data, the CLI validates
a packaged example and `toolcall-spec conformance` passes. Built once for the module (about a
minute, most of it pip)."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.repo import EXAMPLES, REPO

from toolcall_spec.catalog import all_schemas

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    python: Path
    script: Path
    wheel: Path
    sdist: Path
    outside: Path
    """A working directory outside the source tree, so imports come from site-packages."""

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args],
            cwd=self.outside,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def python_says(self, code: str) -> str:
        run = self.run(self.python, "-c", code)
        assert run.returncode == 0, run.stderr
        return run.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    venv, dist, outside = root / "venv", root / "dist", root / "elsewhere"
    outside.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    # Without --sdist/--wheel, build makes the sdist and then the wheel from the unpacked sdist.
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(REPO)],
        check=True,
        timeout=600,
        capture_output=True,
    )
    (sdist,) = dist.glob("toolcall_spec-*.tar.gz")
    (wheel,) = dist.glob("toolcall_spec-*.whl")
    subprocess.run([*pip, "install", str(wheel)], check=True, timeout=600)
    return Installed(python, venv / "bin" / "toolcall-spec", wheel, sdist, outside)


def test_the_install_is_not_editable(installed: Installed) -> None:
    """Slow on purpose (over 10 s, in its module fixture): `python -m build` of the sdist and the
    wheel from it, and a fresh virtual environment, as a release makes them."""
    location = Path(installed.python_says("import toolcall_spec; print(toolcall_spec.__file__)"))
    assert "site-packages" in location.parts
    assert REPO not in location.parents


def test_the_wheel_holds_schemas_models_typed_examples_spec_and_py_typed(
    installed: Installed,
) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    expected = {
        "toolcall_spec/py.typed",
        "toolcall_spec/models/__init__.py",
        "toolcall_spec/spec/requirements.json",
        "toolcall_spec/examples/index.json",
        "toolcall_spec/data/reference-host.json",
        "toolcall_spec/data/fixtures/conformance-eval-fixture-error.json",
        "toolcall_spec/data/templates/suite.json",
        *(f"toolcall_spec/schemas/{path}" for path in all_schemas()),
        *(
            f"toolcall_spec/{folder}/{p.relative_to(REPO / 'generated' / folder).as_posix()}"
            for folder in ("models", "typed")
            for p in (REPO / "generated" / folder).rglob("*.py")
        ),
        *(
            f"toolcall_spec/examples/{p.relative_to(EXAMPLES).as_posix()}"
            for p in EXAMPLES.rglob("*")
            if p.is_file()
        ),
    }
    assert sorted(expected - names) == []


def test_the_sources_and_the_license_are_real_files_not_links(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as sdist:
        members = sdist.getmembers()
    assert [m.name for m in members if m.issym() or m.islnk()] == []
    names = {m.name.split("/", 1)[1] for m in members if "/" in m.name}
    assert {"LICENSE", "schemas/suites/agent-eval-suite.schema.json", "spec/requirements.json"} <= (
        names
    )
    assert {"generated/models/__init__.py", "generated/typed/__init__.py"} <= names
    assert not (REPO / "src/toolcall_spec/schemas").exists()


def test_the_metadata_names_license_versions_and_urls(installed: Installed) -> None:
    wheel = zipfile.ZipFile(installed.wheel)
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    text = wheel.read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel.namelist())
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in text
    assert "Classifier: Typing :: Typed" in text
    for label in ("Documentation", "Source", "Changelog"):
        assert f"Project-URL: {label}, https://" in text


def test_conformance_passes_from_the_installed_wheel(installed: Installed) -> None:
    run = installed.run(installed.script, "conformance", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr


def test_the_models_import(installed: Installed) -> None:
    code = (
        "import toolcall_spec.models as m\n"
        'r = m.CallToolResult.model_validate_json(\'{"content": [], "isError": true}\')\n'
        "print(r.isError, len(m.__all__) > 20)\n"
    )
    assert installed.python_says(code) == "True True\n"


def test_the_typed_dicts_import_from_inside_the_package(installed: Installed) -> None:
    code = (
        "import toolcall_spec.typed as t\n"
        "print(t.__file__)\n"
        "print(sorted(t.IngestAnswer.__annotations__))\n"
    )
    location, members = installed.python_says(code).splitlines()
    assert "site-packages" in Path(location).parts
    schema = json.loads((REPO / "schemas" / "analytics" / "ingest-answer.schema.json").read_text())
    assert members == str(sorted(schema["properties"]))  # the schema's members, one for one


def test_every_schema_is_package_data(installed: Installed) -> None:
    code = (
        "import json\n"
        "from toolcall_spec.catalog import all_schemas\n"
        "print(json.dumps(all_schemas()))\n"
    )
    assert json.loads(installed.python_says(code)) == all_schemas()


def test_the_cli_validates_a_packaged_example(installed: Installed) -> None:
    examples = Path(
        installed.python_says(
            "from importlib import resources\n"
            "print(resources.files('toolcall_spec').joinpath('examples'))\n"
        ).strip()
    )
    valid = installed.run(
        installed.script, "validate", examples / "suites/rfc0245-fail-then-succeed.json"
    )
    assert valid.returncode == 0, valid.stderr
    invalid = installed.run(
        installed.script, "validate", examples / "suites/rfc0245-string-iserror.json"
    )
    assert invalid.returncode == 1
    assert "tasks[0].fixtures.toolResponses[0].isError: " in invalid.stdout
    listed = installed.run(installed.script, "schema")
    assert listed.returncode == 0
    assert "suites/agent-eval-suite.schema.json" in listed.stdout
