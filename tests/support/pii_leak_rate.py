"""Leaks per 10,000 generated items:
``PYTHONPATH=src:tests python -m support.pii_leak_rate [N] [--show K]``.

Draws ``N`` (10,000 unless given) single-item messages and ``N`` joined pairs (two messages and a
separator of each class) from ``support.strategies.pii_items`` and counts the items a part of
which survives ``strip_pii``, per kind and per separator class. The figures issue 29 asks for,
before and after a change to the stripper. ``--show K`` prints the first ``K`` leaking texts
with what the stripper made of them.
"""

from __future__ import annotations

import sys
from collections import Counter

from hypothesis import HealthCheck, Phase, given, settings

from support.strategies.pii_items import Message, leaks, messages, separators
from toolcall_spec.analytics.pii import strip_pii


def _run(count: int, show: int = 0) -> None:
    alone: Counter[str] = Counter()
    alone_leaks: Counter[str] = Counter()
    joined: Counter[str] = Counter()
    joined_leaks: Counter[str] = Counter()
    examples: dict[str, str] = {}
    shown: list[tuple[str, str]] = []
    run = settings(
        max_examples=count,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )

    @run
    @given(messages())
    def single(message: Message) -> None:
        item = message.items[0]
        alone[item.kind] += 1
        if leaks(message, strip_pii(message.text)):
            alone_leaks[item.kind] += 1
            examples.setdefault(item.kind, message.text)
            shown.append((item.kind, message.text))

    @run
    @given(messages(), separators(), messages())
    def pair(first: Message, separator: tuple[str, Message], second: Message) -> None:
        kind, joint = separator
        whole = first + joint + second
        joined[kind] += len(whole.items)
        leaked = leaks(whole, strip_pii(whole.text))
        if leaked:
            joined_leaks[kind] += len(leaked)
            examples.setdefault("joined by " + kind, whole.text)
            shown.append(("joined by " + kind, whole.text))

    single()
    pair()
    _report("items alone", alone, alone_leaks)
    _report("two messages joined, by separator", joined, joined_leaks)
    for name, text in sorted(examples.items()):
        print(f"  e.g. {name}: {text!r} -> {strip_pii(text)!r}")
    for name, text in shown[:show]:
        print(f"  {name}: {text!r} -> {strip_pii(text)!r}")


def _report(title: str, total: Counter[str], leaked: Counter[str]) -> None:
    print(
        f"{title}: {sum(leaked.values())} leaks in {sum(total.values())} items, "
        f"{1e4 * sum(leaked.values()) / max(sum(total.values()), 1):.0f} per 10,000"
    )
    for kind in sorted(total):
        print(
            f"  {kind:<24}{leaked[kind]:>6} / {total[kind]:<6}"
            f"{1e4 * leaked[kind] / total[kind]:>8.0f} per 10,000"
        )


def _main(argv: list[str]) -> None:
    show = 0
    if "--show" in argv:
        at = argv.index("--show")
        show = int(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    _run(int(argv[0]) if argv else 10_000, show)


if __name__ == "__main__":
    _main(sys.argv[1:])
