"""Benchmarks run by ``nox -s bench``. Each ``bench_*.py`` module has ``main(argv) -> None`` and
prints its figures as ratios against peers measured in the same run."""
