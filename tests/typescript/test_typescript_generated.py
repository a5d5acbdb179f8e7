"""generated/typescript: every document kind has its type, with its schema's description as the
doc comment; the bundled schemas are `toolcall-spec schema --bundle`'s; and the generator's
``--check`` (run by ``nox -s generate -- --check``) passes on the committed files and fails on
drift."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from support.node import GENERATED, TYPESCRIPT, package_dependencies, run, tool
from support.repo import REPO

from toolcall_spec.bundling import bundle
from toolcall_spec.catalog import KINDS, load_schema

GENERATOR = TYPESCRIPT / "scripts" / "generate.mjs"
CLI = Path(sys.executable).with_name("toolcall-spec")


def manifest() -> dict[str, dict[str, str]]:
    loaded: dict[str, dict[str, str]] = json.loads((GENERATED / "kinds.json").read_text("utf-8"))
    return loaded


def doc_comment_of(type_name: str, source: str) -> str:
    """The text of the /** ... */ comment right before `export interface|type <type_name>`."""
    found = re.search(
        rf"/\*\*\n((?: \*.*\n)+?) \*/\nexport (?:interface|type) {type_name}\b", source
    )
    assert found, f"no documented declaration of {type_name}"
    return " ".join(line.removeprefix(" *").strip() for line in found.group(1).splitlines())


def test_every_kind_has_its_type_with_the_schemas_description() -> None:
    source = (GENERATED / "index.d.ts").read_text(encoding="utf-8")
    assert set(manifest()) == set(KINDS)
    for kind in KINDS:
        entry = manifest()[kind]
        schema = load_schema(kind)
        assert entry["type"] == schema["title"]
        assert doc_comment_of(entry["type"], source) == schema["description"]
        assert re.search(rf'\n  "?{kind}"?: {entry["type"]};', source), f"Documents lacks {kind}"


def test_the_bundled_schemas_are_the_bundlers() -> None:
    for kind in KINDS:
        shipped = json.loads((GENERATED / manifest()[kind]["schema"]).read_text(encoding="utf-8"))
        assert shipped == bundle(kind)


def drift_check(root: Path) -> tuple[int, str]:
    result = run(
        [tool("node"), str(GENERATOR), "--check"],
        cwd=root,
        timeout=300,
        env={"TOOLCALL_SPEC": str(CLI)},
    )
    return result.returncode, result.stdout + result.stderr


def test_the_drift_check_passes_on_the_committed_files_and_fails_on_drift(tmp_path: Path) -> None:
    package_dependencies()  # the generator's json-schema-to-typescript
    shutil.copytree(REPO / "schemas", tmp_path / "schemas")
    shutil.copytree(GENERATED, tmp_path / "generated" / "typescript")
    assert drift_check(tmp_path) == (0, "generated/typescript is up to date\n")

    schema = tmp_path / "schemas" / "mcp" / "call-tool-result.schema.json"
    text = schema.read_text(encoding="utf-8")
    schema.write_text(text.replace("What the model sees.", "What the model reads."), "utf-8")
    status, output = drift_check(tmp_path)
    assert status == 1
    assert "out of date" in output
    assert "index.d.ts" in output
