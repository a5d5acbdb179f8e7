"""The file-system seam: every durable call goes through it, a plan fails exactly the call it
names (once or from then on) or crashes there, a child process picks its plan up by role, and
``write_file_atomically`` leaves the old file or the new one whole at every fault point."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.fault_sweep import record_sweep, sweep

from toolcall_spec import filesystem as fs
from toolcall_spec.filesystem import FAULTS_VARIABLE, Crashed, FaultPlan, intercepted


def _three_calls(path: Path) -> None:
    fd = fs.open_fd(path, os.O_WRONLY | os.O_CREAT)
    try:
        fs.write_all(fd, b"abc")
    finally:
        fs.close(fd)


def test_a_plan_counts_every_call_and_fails_only_the_one_it_names(tmp_path: Path) -> None:
    counting = FaultPlan()
    with intercepted(counting):
        _three_calls(tmp_path / "a")
    assert [call.op for call in counting.trace] == ["open", "write", "close"]
    assert counting.trace[1].path == str(tmp_path / "a")  # an fd's path is known
    once = FaultPlan(at=2, errno="EIO")
    with intercepted(once), pytest.raises(OSError, match="injected") as raised:
        _three_calls(tmp_path / "b")
    assert raised.value.errno == errno.EIO
    assert once.injected
    assert once.calls == 3  # the close after it went through
    assert (tmp_path / "b").read_bytes() == b""


def test_a_persistent_fault_fails_every_later_call_and_a_crash_stops_all(tmp_path: Path) -> None:
    full = FaultPlan(at=1, errno="ENOSPC", persistent=True)
    with intercepted(full):
        for _ in range(3):
            with pytest.raises(OSError, match="injected"):
                fs.mkdir(tmp_path / "x")
    assert not (tmp_path / "x").exists()
    crash = FaultPlan(at=2, errno=None)
    with intercepted(crash), pytest.raises(Crashed):
        _three_calls(tmp_path / "c")
    assert crash.injected
    assert crash.calls == 3  # the close was refused too: nothing reaches the disk after a kill
    with intercepted(crash), pytest.raises(Crashed):
        fs.mkdir(tmp_path / "later")


def test_the_ops_filter_counts_only_the_ops_named(tmp_path: Path) -> None:
    plan = FaultPlan(at=1, errno="EIO", ops=frozenset({"fsync"}))
    with intercepted(plan):
        fd = fs.open_fd(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
        fs.write_all(fd, b"x")
        with pytest.raises(OSError, match="injected"):
            fs.fdatasync(fd)
        fs.close(fd)
    assert plan.calls == 1


def test_a_child_process_takes_the_plan_of_its_role_only(tmp_path: Path) -> None:
    script = (
        "import sys, os\n"
        "from toolcall_spec import filesystem as fs\n"
        "fs.declare_role(sys.argv[1])\n"
        "fs.mkdir(sys.argv[2])\n"
        "fs.mkdir(sys.argv[2] + '/b')\n"
    )
    count = tmp_path / "count"
    plan = FaultPlan(at=2, errno=None, role="loader", count_file=str(count))
    env = {**os.environ, FAULTS_VARIABLE: plan.to_environment()}
    child = [sys.executable, "-c", script]
    killed = subprocess.run([*child, "loader", tmp_path / "l"], env=env, check=False)
    assert killed.returncode == -9
    assert (tmp_path / "l").is_dir()
    assert not (tmp_path / "l" / "b").exists()
    assert fs.read_count(count) == 2
    other = subprocess.run([*child, "writer", tmp_path / "w"], env=env, check=False)
    assert other.returncode == 0
    assert (tmp_path / "w" / "b").is_dir()


@pytest.mark.faults
def test_an_atomic_replace_leaves_the_old_file_or_the_new_one_at_every_fault(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    target = tmp_path / "suite.json"
    target.write_bytes(b"old")
    target.chmod(0o640)

    def check(plan: FaultPlan, raised: BaseException | None) -> None:
        assert target.read_bytes() in (b"old", b"new")
        if raised is None:
            assert target.read_bytes() == b"new"
        assert [p.name for p in tmp_path.iterdir()] == ["suite.json"]  # no temporary left
        assert target.stat().st_mode & 0o777 == 0o640
        ops = [call.op for call in plan.trace]
        if raised is None:  # durable: fsync before the rename, the directory after it
            assert ops.index("fsync") < ops.index("rename") < ops.index("dirsync")
        target.write_bytes(b"old")

    report = sweep(lambda: fs.write_file_atomically(target, b"new"), check)
    assert report.points == 6  # open, write, fsync, close, rename, dirsync: nothing else
    record_sweep(record_property, "filesystem.write_file_atomically", report)
