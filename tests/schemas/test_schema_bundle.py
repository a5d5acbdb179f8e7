"""``toolcall-spec schema --bundle KIND`` against a real peer: check-jsonschema (PyPI), given only
the bundled file and no other flag, reaches the package's verdict on every example of
examples/index.json. Every ``$id`` is a URL under the docs site, which serves the raw files."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from support.checks import oracle
from support.cli import run_cli
from support.repo import EXAMPLES, REPO
from support.strategies import near_miss, valid_documents

from toolcall_spec.bundling import bundle
from toolcall_spec.catalog import KINDS, SCHEMA_FILES, Kind, all_schemas

INDEX: list[dict[str, Any]] = json.loads((EXAMPLES / "index.json").read_text("utf-8"))["examples"]
CHECK_JSONSCHEMA = [sys.executable, "-m", "check_jsonschema"]


def site_url() -> str:
    for line in (REPO / "mkdocs.yml").read_text("utf-8").splitlines():
        if line.startswith("site_url:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("mkdocs.yml sets no site_url")


def test_every_id_is_its_file_under_the_docs_site() -> None:
    for path, schema in all_schemas().items():
        assert schema["$id"] == f"{site_url()}schemas/{path}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_bundle_has_no_reference_left(kind: Kind) -> None:
    run = run_cli("schema", "--bundle", kind)
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert '"$ref"' not in text
    assert '"$id"' not in text
    assert json.loads(text)["title"] == all_schemas()[SCHEMA_FILES[kind]]["title"]


def test_an_unknown_bundle_kind_lists_every_kind() -> None:
    run = run_cli("schema", "--bundle", "suites")
    assert run.returncode == 2
    assert all(kind in run.stderr for kind in KINDS)


def documents_by_kind(tmp: Path) -> dict[str, list[tuple[Path, str]]]:
    """Every example document as its own file (one per JSONL line), with the example's name."""
    found: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    for number, example in enumerate(INDEX):
        source = EXAMPLES / example["file"]
        if source.suffix == ".jsonl":
            lines = [line for line in source.read_text("utf-8").splitlines() if line.strip()]
        else:
            lines = [source.read_text("utf-8")]
        for line_number, text in enumerate(lines, start=1):
            target = tmp / f"{number}-{line_number}.json"
            target.write_text(text, encoding="utf-8")
            found[example["kind"]].append((target, example["file"]))
    return found


def test_check_jsonschema_reaches_the_package_verdict_on_every_example(tmp_path: Path) -> None:
    """Slow on purpose (over 10 s): one check-jsonschema process per example, the real peer."""
    failing_files: set[str] = set()
    for kind, documents in documents_by_kind(tmp_path).items():
        schema = tmp_path / f"{kind}.bundle.json"
        schema.write_text(run_cli("schema", "--bundle", kind).stdout, encoding="utf-8")
        run = subprocess.run(
            [*CHECK_JSONSCHEMA, "--output-format", "JSON", "--schemafile", str(schema)]
            + [str(path) for path, _ in documents],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        report = json.loads(run.stdout)
        assert report.get("parse_errors", []) == [], report
        failed = {Path(error["filename"]).name for error in report["errors"]}
        failing_files |= {example for path, example in documents if path.name in failed}
        assert run.returncode == (1 if failed else 0), run.stdout
    expected_failing = {example["file"] for example in INDEX if not example["valid"]}
    assert failing_files == expected_failing


@cache
def bundled_oracle(kind: Kind) -> Draft202012Validator:
    """The pure-Python oracle over the bundle alone: no registry, so a reference left in would
    fail to resolve."""
    return Draft202012Validator(bundle(kind), format_checker=Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_bundle_judges_like_the_schemas_it_came_from(kind: Kind, data: st.DataObject) -> None:
    document = data.draw(st.one_of(valid_documents(kind), near_miss(kind)))
    assert bundled_oracle(kind).is_valid(document) == oracle(kind)(document)
