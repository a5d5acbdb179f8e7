"""docs/peers.md shows a measurement, not numbers typed in: its table is the one
``python -m benchmarks.peers --markdown`` makes from the run it cites (docs/data/peers.json), and
the date and versions it names are that run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.repo import REPO

from benchmarks.peers.__main__ import TABLE_BLOCK, markdown, replace_table

PAGE = REPO / "docs" / "peers.md"
MEASURED = REPO / "docs" / "data" / "peers.json"


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _measured() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(MEASURED.read_text(encoding="utf-8"))
    return document


def test_the_table_is_the_one_the_cited_run_makes() -> None:
    match = TABLE_BLOCK.search(_page())
    assert match is not None, "no peers-table block on the page"
    assert match.group(2) == markdown(_measured())


def test_writing_the_table_into_a_page_replaces_only_the_table(tmp_path: Path) -> None:
    page = tmp_path / "peers.md"
    page.write_text("# Peers\n\n<!-- peers-table: x -->\n| old |\n|---|\n\nAfter.\n", "utf-8")
    replace_table(page, "| new |\n|---|")
    assert (
        page.read_text("utf-8") == "# Peers\n\n<!-- peers-table: x -->\n| new |\n|---|\n\nAfter.\n"
    )


def test_the_page_names_the_runs_date_and_every_measured_version() -> None:
    measured = _measured()
    text = " ".join(_page().split())
    assert f"Measured on {measured['date']} with Python {measured['python']}" in text
    for name, version in measured["versions"].items():
        if version is not None and name != "toolcall-spec":
            assert f"`{name}` {version}" in text, name


def test_the_transports_agree_wherever_the_page_says_they_do() -> None:
    # The page says stdio and streamable HTTP gave the same result for every row; a row where
    # they differ is written "stdio: ...; http: ..." by the table maker.
    assert "gave the same result for every row" in " ".join(_page().split())
    assert "stdio: " not in markdown(_measured())
