"""``die_with_parent`` says whether the parent it was given is still the parent: by its id, so a
process whose parent is process 1 (in a container) is not taken for an orphan."""

from __future__ import annotations

import os

from toolcall_spec.processes import die_with_parent

NO_SIGNAL = 0
"""``PR_SET_PDEATHSIG`` with 0 asks for no signal: the test process's own setting is cleared."""


def test_the_parent_is_known_by_its_id() -> None:
    assert die_with_parent(NO_SIGNAL, os.getppid()) is True
    assert die_with_parent(NO_SIGNAL, os.getppid() + 1) is False
