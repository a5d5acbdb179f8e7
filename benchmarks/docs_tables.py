"""A docs page's table kept as a run measured it: the lines after a ``<!-- NAME: ... -->`` comment,
up to a blank line, replaced by the table a run's JSON renders (``nox -s peers`` and
``nox -s record_peers`` write docs/peers.md and docs/record-replay.md this way)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


def table_block(name: str) -> re.Pattern[str]:
    """The comment named ``name`` and the table after it, up to a blank line."""
    return re.compile(rf"(<!-- {re.escape(name)}: [^>]*-->\n)(.*?)\n\n", re.DOTALL)


def replace_table(page: Path, table: str, block: re.Pattern[str], name: str) -> None:
    text = page.read_text(encoding="utf-8")
    if block.search(text) is None:
        raise SystemExit(f"{page}: no <!-- {name}: ... --> comment followed by a table")
    page.write_text(block.sub(lambda m: m.group(1) + table + "\n\n", text, count=1), "utf-8")


def print_or_write(
    run_json: str,
    page: str | None,
    render: Callable[[dict[str, Any]], str],
    write: Callable[[Path, str], None],
) -> None:
    """``--markdown RUN.json [--page PAGE]``: the table ``render`` makes of a run, printed, or
    written into ``page`` by ``write``."""
    table = render(json.loads(Path(run_json).read_text(encoding="utf-8")))
    if page is None:
        print(table)
    else:
        write(Path(page), table)
