"""One reader of package data for a source checkout and an installed wheel alike. In a checkout
(an editable install) it reads the repository's top-level folders, so an edit shows without a
reinstall, and no symlink is needed; tests/test_installed_package.py covers the wheel."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO

import toolcall_spec
from toolcall_spec import package_data


@pytest.mark.parametrize("folder", ["schemas", "spec", "examples"])
def test_a_checkout_reads_the_top_level_folders(folder: str) -> None:
    assert Path(str(package_data.data_folder(folder))) == REPO / folder


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
    with pytest.raises(package_data.MissingPackageDataError, match="schemas, spec, examples"):
        package_data.data_folder("nothing-here")
