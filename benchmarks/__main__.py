"""Run benchmark modules: ``python -m benchmarks [NAME...] [--option...]``.

Each ``bench_<name>.py`` has ``main(argv)``; options (arguments starting with ``-``) are passed to
every module run, e.g. ``python -m benchmarks ingest --quick``. No name runs them all.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path


def main(argv: list[str]) -> None:
    options = [arg for arg in argv if arg.startswith("-")]
    names = [arg for arg in argv if not arg.startswith("-")] or sorted(
        path.stem.removeprefix("bench_") for path in Path(__file__).parent.glob("bench_*.py")
    )
    for name in names:
        print(f"== {name}", flush=True)
        import_module(f"benchmarks.bench_{name}").main(options)


if __name__ == "__main__":
    main(sys.argv[1:])
