"""One reader of package data for a source checkout and an installed wheel alike. In a checkout
(an editable install) it reads the repository's top-level folders, so an edit shows without a
reinstall, and no symlink is needed; tests/packaging/test_installed_package.py covers the wheel."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.repo import REPO

import toolcall_spec
from toolcall_spec import package_data


@pytest.mark.parametrize("folder", ["schemas", "spec", "examples"])
def test_a_checkout_reads_the_top_level_folders(folder: str) -> None:
    assert Path(str(package_data.data_folder(folder))) == REPO / folder


def test_runtime_data_lives_inside_the_package() -> None:
    package = Path(toolcall_spec.__file__).parent
    assert Path(str(package_data.data_folder("data"))) == package / "data"


RUNTIME_DATA_COPIES = {
    "data/reference-host.json": "capabilities/reference-host.json",
    "data/fixtures/conformance-eval-fixture-error.json": (
        "suites/conformance-eval-fixture-error.json"
    ),
    "data/templates/suite.json": "templates/suite.json",
}
"""Runtime data the docs also show as examples: each examples/ copy and its source in data/."""


@pytest.mark.parametrize(("runtime", "example"), RUNTIME_DATA_COPIES.items())
def test_each_example_copy_of_runtime_data_is_identical(runtime: str, example: str) -> None:
    assert (REPO / "examples" / example).read_bytes() == package_data.data_file(
        runtime
    ).read_bytes()


def test_every_file_of_the_runtime_data_folder_is_known() -> None:
    folder = Path(str(package_data.data_folder("data")))
    found = {f"data/{p.relative_to(folder).as_posix()}" for p in folder.rglob("*") if p.is_file()}
    assert found == set(RUNTIME_DATA_COPIES)


def test_nothing_in_the_package_reads_examples_at_run_time() -> None:
    sources = Path(toolcall_spec.__file__).parent.rglob("*.py")
    readers = [p.name for p in sources if '"examples/' in p.read_text("utf-8")]
    assert readers == []


def test_the_models_of_a_checkout_are_generated_models() -> None:
    from toolcall_spec import models

    assert Path(models.__file__).parent == REPO / "generated/models"


def test_the_typed_dicts_of_a_checkout_are_generated_typed() -> None:
    from toolcall_spec import typed

    assert Path(typed.__file__).parent == REPO / "generated/typed"


def test_no_data_folder_is_a_link_inside_the_package() -> None:
    package = Path(toolcall_spec.__file__).parent
    assert [p.name for p in package.iterdir() if p.is_symlink()] == []


def test_read_text_names_a_file_by_its_folder() -> None:
    text = package_data.read_text("spec/requirements.json")
    assert text == (REPO / "spec/requirements.json").read_text("utf-8")


def test_an_unknown_folder_is_a_clear_error() -> None:
    with pytest.raises(package_data.MissingPackageDataError, match="schemas, spec, examples, data"):
        package_data.data_folder("nothing-here")
