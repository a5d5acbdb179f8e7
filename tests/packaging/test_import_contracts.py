"""The import contracts of pyproject.toml ([tool.importlinter]) hold, and each one fails when an
import points the wrong way: the real ``lint-imports`` runs on a copy of the package (with the
generated models inside, as a wheel has them) into which one bad import is planted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.repo import REPO

pytest.importorskip("importlinter", reason="import-linter needs Python 3.11+")

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

PLANTS = [
    # (file in the package, the planted line, the contract it breaks)
    ("loading.py", "import toolcall_spec.validation", "layers"),  # the kernel reaches up
    ("replay/matching.py", "import toolcall_spec.host.store", "layers"),  # replay uses the host
    ("replay/agent.py", "import toolcall_spec.conformance.leg", "layers"),
    ("conformance/outcomes.py", "import toolcall_spec.http.adapter", "layers"),
    ("conformance/outcomes.py", "import toolcall_spec.analytics.pii", "layers"),  # siblings
    ("stray.py", "", "layers"),  # a new top-level module without a layer
    ("analytics/pii.py", "import toolcall_spec.host.fixtures", "apart-from-host"),
    ("compat/changes.py", "import toolcall_spec.replay.matching", "apart-from-host"),
    ("http/app.py", "import toolcall_spec.http.adapter", "http-siblings"),
    ("http/ingest_app.py", "import toolcall_spec.http.app", "http-siblings"),
    # The compat circle, closed again: the walk importing the module that lists its families.
    ("compat/walk.py", "import toolcall_spec.compat.trees", "no-cycles"),
    ("model_bases.py", "import toolcall_spec.models.events", "no-cycles"),  # models <-> bases
]


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as a wheel lays it out: src/toolcall_spec with each package of generated/
    (the models) inside it, as ``nox -s lint`` copies it."""
    root = tmp_path_factory.mktemp("package")
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "src/toolcall_spec", root / "toolcall_spec", ignore=skip)
    for generated in (REPO / "generated").iterdir():
        if generated.is_dir() and generated.name != "__pycache__":
            shutil.copytree(generated, root / "toolcall_spec" / generated.name, ignore=skip)
    return root


def lint_imports(root: Path, *options: str) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.is_file():
        pytest.fail(f"{LINT_IMPORTS} is missing: pip install -e '.[test]'")
    return subprocess.run(
        [str(LINT_IMPORTS), str(REPO / "pyproject.toml"), "--no-cache", *options],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_every_contract_holds_for_the_package_as_it_is(package_copy: Path) -> None:
    result = lint_imports(package_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(("module", "line", "contract"), PLANTS)
def test_a_planted_import_breaks_its_contract(
    package_copy: Path, tmp_path: Path, module: str, line: str, contract: str
) -> None:
    planted = tmp_path / "planted"
    shutil.copytree(package_copy, planted)
    target = planted / "toolcall_spec" / module
    before = target.read_text(encoding="utf-8") if target.exists() else ""
    target.write_text(f"{before}\n{line}  # planted by the test\n", encoding="utf-8")
    result = lint_imports(planted, "--contract", contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "0 kept, 1 broken" in result.stdout, result.stdout
