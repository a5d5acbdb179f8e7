"""The Python examples of the replay guide (docs/replay.md) run as written."""

from __future__ import annotations

import re

import pytest
from support.repo import REPO


def test_the_guide_python_blocks_run(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (REPO / "docs" / "replay.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= 3
    monkeypatch.chdir(REPO)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "docs/replay.md", "exec"), namespace)
    promotion = namespace["promotion"]
    assert getattr(promotion, "suite", None) is not None
    assert getattr(promotion, "problems", None) == []
