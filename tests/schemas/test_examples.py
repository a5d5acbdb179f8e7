"""Every example in examples/index.json validates as the index declares: valid or invalid, the
declared ``errorPaths`` among the reported error paths, the declared ``warningPaths`` among the
warnings, and the kind inferred from the document itself. For a ``.jsonl`` example each line is
a document and its paths read ``LINE:path``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.repo import EXAMPLES

from toolcall_spec import validate
from toolcall_spec.catalog import infer_kind, is_kind
from toolcall_spec.loading import is_jsonl_path, iter_jsonl, read_json_file
from toolcall_spec.problems import Problem

INDEX: list[dict[str, Any]] = json.loads((EXAMPLES / "index.json").read_text("utf-8"))["examples"]


def documents(path: Path) -> list[tuple[str, Any]]:
    """``(prefix, document)`` pairs: ``("", doc)`` for JSON, ``("3:", doc)`` for JSONL line 3."""
    if not is_jsonl_path(path):
        return [("", read_json_file(path))]
    with path.open("rb") as handle:
        lines = list(iter_jsonl(handle))
    assert all(error is None for _, _, error in lines), "an example line does not parse"
    return [(f"{number}:", value) for number, value, _ in lines]


def reported(example: dict[str, Any]) -> tuple[list[Problem], set[str], set[str]]:
    problems: list[Problem] = []
    error_paths: set[str] = set()
    warning_paths: set[str] = set()
    for prefix, document in documents(EXAMPLES / example["file"]):
        for problem in validate(document, example["kind"]):
            problems.append(problem)
            target = error_paths if problem.severity == "error" else warning_paths
            target.add(prefix + problem.path)
    return problems, error_paths, warning_paths


@pytest.mark.parametrize("example", INDEX, ids=[e["file"] for e in INDEX])
def test_the_example_validates_as_declared(example: dict[str, Any]) -> None:
    assert is_kind(example["kind"])
    problems, error_paths, warning_paths = reported(example)
    assert (not error_paths) is example["valid"], problems
    assert set(example.get("errorPaths", [])) <= error_paths
    assert set(example.get("warningPaths", [])) <= warning_paths
    if not example["valid"]:
        assert example.get("errorPaths"), "an invalid example names the paths it fails at"


@pytest.mark.parametrize("example", INDEX, ids=[e["file"] for e in INDEX])
def test_the_kind_of_the_example_is_inferred(example: dict[str, Any]) -> None:
    for prefix, document in documents(EXAMPLES / example["file"]):
        assert infer_kind(document) == example["kind"], f"{example['file']}:{prefix}"
    # Validating without a kind gives the same verdict as naming it.
    inferred = [validate(doc) for _, doc in documents(EXAMPLES / example["file"])]
    named = [validate(doc, example["kind"]) for _, doc in documents(EXAMPLES / example["file"])]
    assert inferred == named


def test_the_index_lists_every_example_once() -> None:
    listed = [entry["file"] for entry in INDEX]
    on_disk = sorted(
        p.relative_to(EXAMPLES).as_posix()
        for p in EXAMPLES.rglob("*")
        if p.is_file() and p.name != "index.json"
    )
    assert sorted(listed) == on_disk
    assert len(set(listed)) == len(listed)


def test_the_examples_cover_every_rfc_0245_case() -> None:
    files = {entry["file"]: entry for entry in INDEX}
    assert files["suites/rfc0245-fail-then-succeed.json"]["valid"] is True
    assert files["suites/rfc0245-string-iserror.json"]["valid"] is False
    assert files["capabilities/host-without-fixture-errors.json"]["kind"] == "capabilities"
