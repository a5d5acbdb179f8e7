"""docs/record-replay.md compares the MCP cassette recorders by a measurement, not by hand: its
table is the one ``python -m benchmarks.record_peers --markdown`` makes from the run it cites
(docs/data/record_peers.json, what ``nox -s record_peers`` wrote), and the date and versions it
names are that run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.repo import REPO

from benchmarks.record_peers.__main__ import TABLE_BLOCK, markdown, replace_table

PAGE = REPO / "docs" / "record-replay.md"
MEASURED = REPO / "docs" / "data" / "record_peers.json"


def _measured() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(MEASURED.read_text(encoding="utf-8"))
    return document


def test_the_table_is_the_one_the_cited_run_makes() -> None:
    match = TABLE_BLOCK.search(PAGE.read_text(encoding="utf-8"))
    assert match is not None, "no record-peers-table block on the page"
    assert match.group(2) == markdown(_measured())


def test_the_page_names_the_runs_date_and_every_measured_version() -> None:
    measured = _measured()
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f"Measured by `nox -s record_peers` on {measured['date']}" in text
    assert f"Python {measured['python']}" in text
    for name, version in measured["versions"].items():
        if version is not None and name != "toolcall-spec":
            assert f"`{name}` {version}" in text, name


def test_writing_the_table_into_a_page_replaces_only_the_table(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# P\n\n<!-- record-peers-table: x -->\n| old |\n|---|\n\nAfter.\n", "utf-8")
    replace_table(page, "| new |\n|---|")
    expected = "# P\n\n<!-- record-peers-table: x -->\n| new |\n|---|\n\nAfter.\n"
    assert page.read_text("utf-8") == expected
