"""Real faults beside the injected ones: the log on a small tmpfs this test mounts, filled by the
log itself, once to its last block (ENOSPC) and once to its last inode. The engine is a DuckDB
file on another disk. Appends are refused, never acknowledged, while the disk is full; nothing
acknowledged is lost; once the loader catches up (its checkpoint written through its reserve,
then the loaded segments deleted), the log drains and takes appends again.

Mounting needs root (``CAP_SYS_ADMIN``): without it the test is skipped with the reason, except
under ``CI=true``, where it must run."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.store import tool_call

from toolcall_spec.analytics.store import open_store
from toolcall_spec.analytics.store.wal import (
    LogLoader,
    LogWriteError,
    WriteAheadLog,
    encode_record,
    segment_numbers,
)

pytest.importorskip("duckdb", reason="the store extra (duckdb) is not installed")

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.fixture
def mount_tmpfs(tmp_path: Path) -> Iterator[object]:
    mounted: list[Path] = []

    def mount(size: str, inodes: int) -> Path:
        folder = tmp_path / f"tmpfs-{len(mounted)}"
        folder.mkdir()
        options = f"size={size},nr_inodes={inodes}"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            reason = f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.requirement("toolcall-spec.requirement.store.log-disk-full")
@pytest.mark.parametrize(
    ("size", "inodes", "segment_bytes"),
    [("256k", 64, 48 * 1024), ("4m", 12, 4 * 1024)],
    ids=["no-block-left", "no-inode-left"],
)
@pytest.mark.requirement("toolcall-spec.requirement.store.log-faults")
def test_a_log_that_fills_its_disk_refuses_then_drains_and_loses_nothing(
    mount_tmpfs: object, tmp_path: Path, size: str, inodes: int, segment_bytes: int
) -> None:
    mount = mount_tmpfs
    assert callable(mount)
    directory = mount(size, inodes) / "log"
    log = WriteAheadLog.open(directory, segment_bytes=segment_bytes, max_backlog_bytes=2**40)
    acknowledged: list[str] = []
    refused: list[bool] = []
    with open_store(str(tmp_path / "events.duckdb")) as store:
        loader = LogLoader(directory, store)  # the engine is behind: nothing is loaded yet
        for index in range(400):
            events = [tool_call(10 * index + i, error_message="x" * 200) for i in range(5)]
            try:
                log.append([encode_record("p", NOW, events)])
            except LogWriteError as exc:
                refused.append(exc.disk_full)
                if len(refused) >= 3:
                    break
                continue
            acknowledged += [event["event_id"] for event in events]
        assert all(refused)  # each a 507 (disk full), not a 500
        if inodes >= 64:
            assert len(refused) == 3  # the disk stays full until the loader frees it
        else:  # rotations failed for want of an inode: the segments grew instead
            assert os.statvfs(directory).f_ffree == 0
        for _ in range(1000):  # the engine catches up
            if not loader.load_once() and not loader.pending():
                break
        stored = {str(row[0]) for row in store.query("SELECT event_id FROM {events}", {})}
        assert stored == set(acknowledged)
        assert loader.checkpoint.last_checkpoint_error is None
        assert len(segment_numbers(directory)) == 1  # drained
        more = [tool_call(9999)]
        log.append([encode_record("p", NOW, more)])  # room again
        for _ in range(10):
            loader.load_once()
        assert store.count() == len(acknowledged) + 1
    log._checked_at = 0.0
    assert log.stats()["backlog_events"] == 0
    loader.close()
    log.close()
