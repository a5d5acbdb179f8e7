"""CLI start-up: ``toolcall-spec --help`` against ``python -c pass`` measured in the same run.

Target (DESIGN.md): at most 4x. Each figure is the median wall time of a fresh process, the two
commands interleaved so that a busy machine slows both alike. Also shown, for context: one
subcommand's ``--help`` (imports that subcommand's module only) and ``python -c "import
jsonschema_rs"`` (what ``--help`` must not pay for).

    python -m benchmarks cli_startup [--quick]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

TARGET_RATIO = 4.0
SCRIPT = Path(sys.executable).with_name("toolcall-spec")

COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "toolcall-spec --help": [str(SCRIPT), "--help"],
    "toolcall-spec validate --help": [str(SCRIPT), "validate", "--help"],
    "python -c 'import jsonschema_rs'": [sys.executable, "-c", "import jsonschema_rs"],
}


def wall_time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def medians(repeats: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # warm the file cache once
        wall_time(command)
    for _ in range(repeats):
        for name, command in COMMANDS.items():
            samples[name].append(wall_time(command))
    return {name: statistics.median(times) for name, times in samples.items()}


def main(argv: Sequence[str]) -> None:
    repeats = 7 if "--quick" in argv else 31
    figures = medians(repeats)
    floor = figures["python -c pass"]
    print(f"median of {repeats} fresh processes each, interleaved")
    for name, seconds in figures.items():
        print(f"  {name:<36} {seconds * 1000:7.1f} ms  {seconds / floor:5.2f}x python -c pass")
    ratio = figures["toolcall-spec --help"] / floor
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(
        f"toolcall-spec --help: {ratio:.2f}x python -c pass ({verdict} the {TARGET_RATIO}x target)"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
