"""``.ci/run`` cleans up everything it starts or creates, through one exit handler
(``.ci/cleanup.sh``): a second ``trap ... EXIT`` would silently replace the first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from support.repo import REPO

CI = REPO / ".ci"


def test_the_ci_script_sets_no_exit_trap_of_its_own_and_makes_no_unregistered_folder() -> None:
    """Issue 21: the ClickHouse trap replaced the release folder's, which was never removed."""
    script = (CI / "run").read_text("utf-8")
    assert "source .ci/cleanup.sh" in script
    assert re.search(r"^\s*trap\b", script, re.MULTILINE) is None
    assert "mktemp" not in script  # every scratch folder goes through scratch_dir
    started = script.count(" &\n")
    assert started == script.count("stop_on_exit "), "each background process is registered"


def test_the_exit_handler_stops_every_process_and_removes_every_folder(tmp_path: Path) -> None:
    report = tmp_path / "made"
    program = f"""
set -euo pipefail
source {CI / "cleanup.sh"}
scratch_dir first
scratch_dir second
sleep 300 &
stop_on_exit $!
echo "$first $second $!" > {report}
exit 3
"""
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 3, done.stderr  # the script's own exit status is kept
    first, second, pid = report.read_text("utf-8").split()
    assert not Path(first).exists()
    assert not Path(second).exists()
    assert not Path(f"/proc/{pid}").exists()
