"""The node judge, shared by the tests of one worker: one process for thousands of documents."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.node import NodeJudge


@pytest.fixture(scope="session")
def node_judge() -> Iterator[NodeJudge]:
    judge = NodeJudge()
    yield judge
    judge.close()
