"""Run every benchmark module (``python -m benchmarks [NAME...]``): ``bench_<name>.py`` each."""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path


def main(argv: list[str]) -> None:
    names = argv or sorted(
        p.stem[len("bench_") :] for p in Path(__file__).parent.glob("bench_*.py")
    )
    for name in names:
        print(f"== {name}", flush=True)
        import_module(f"benchmarks.bench_{name}").main([])


if __name__ == "__main__":
    main(sys.argv[1:])
