"""PII stripping against one e-mail ``re.sub``, measured in the same run.

1. 200-character messages (plain prose, prose with digits, prose with PII): our ``strip_pii``
   per message over the cost of one ``re.sub`` with Yavio's e-mail pattern
   (packages/sdk/src/core/pii.ts at 4099786b). Goal: at most 3x.
2. Adversarial input of 128, 256 and 512 KB: the time per doubling (linear: about 2).

Every goal line starts with ``RATIO`` (``... | grep RATIO``).
"""

from __future__ import annotations

import itertools
import re
import statistics
import time
from collections.abc import Callable

from toolcall_spec.analytics.pii import strip_pii

_EMAIL = re.compile(r"[a-zA-Z0-9._%+-]{1,64}@[a-zA-Z0-9.-]{1,255}\.[a-zA-Z]{2,24}")
MESSAGES = {
    "prose": (
        "The upstream booking service did not answer in time; the request was cancelled "
        "and nothing was charged. Please try again later or contact support via the app. "
    )[:200],
    "digits": (
        "Order 48213 failed at step 3 of 7 after 2,500 ms on 2026-11-30 12:04:55; retry "
        "budget 0 of 5 left, version 1.4.2, node 17, queue depth 311, code E1042 x. "
    )[:200],
    "pii": (
        "Card 4111 1111 1111 1111 for max@example.com declined; call +44 20 7946 0958 or "
        "(555) 123-4567, ssn 123-45-6789, from 192.168.1.10, key AKIAIOSFODNN7EXAMPLE ok. "
    )[:200],
}
ADVERSARIAL = (
    "a" * 63 + "@",
    "1 " * 31 + "x",
    "+1" * 40 + " ",
    "@." * 40,
    "DE89 " * 20 + "x",
    "eyJ" + "a" * 10 + ".",
    "Bearer " * 8,
    '"@[' * 10,
    "4111 / " * 10,  # the looser forms (issue 22): loose groups, dates, local-part specials
    "0044 / 1" * 10,
    "01/12/2026 " * 5,
    "a'&{=}@" * 10,
)
GOAL_VS_EMAIL_SUB = 3.0
SIZES_KB = (128, 256, 512)  # all past the sizes where a string still sits in cache or the heap


def _batch(function: Callable[[str], object], text: str, repeat: int) -> float:
    """CPU time per call (this thread's): time the machine's other processes take is not
    counted, as it would be by a wall clock on a shared machine."""
    start = time.thread_time()
    for _ in range(repeat):
        function(text)
    return (time.thread_time() - start) / repeat


def _interleaved(
    functions: tuple[Callable[[str], object], ...], texts: tuple[str, ...], repeat: int, rounds: int
) -> list[list[float]]:
    """Per round, one batch of each (function, text) pair back to back, so a change in the load
    of a shared machine hits all of them alike; the times of every round."""
    return [
        [_batch(function, text, repeat) for function, text in zip(functions, texts, strict=True)]
        for _ in range(rounds)
    ]


def _email_sub(text: str) -> str:
    return _EMAIL.sub("[EMAIL_REDACTED]", text)


def bench_messages(repeat: int, rounds: int) -> None:
    print(f"{'message':<10}{'e-mail re.sub':>16}{'strip_pii':>14}{'ratio (median of rounds)':>27}")
    ratios: dict[str, float] = {}
    for name, text in MESSAGES.items():
        times = _interleaved((_email_sub, strip_pii), (text, text), repeat, rounds)
        ratios[name] = statistics.median(ours / baseline for baseline, ours in times)
        baseline = min(t[0] for t in times)
        ours = min(t[1] for t in times)
        print(f"{name:<10}{baseline * 1e6:>13.2f} us{ours * 1e6:>11.2f} us{ratios[name]:>26.2f}x")
    for name, ratio in ratios.items():
        verdict = "ok" if ratio <= GOAL_VS_EMAIL_SUB else "OVER GOAL"
        print(
            f"RATIO strip_pii {name} / e-mail re.sub: {ratio:.2f}x "
            f"(goal <= {GOAL_VS_EMAIL_SUB:g}) {verdict}"
        )


def bench_growth(rounds: int) -> None:
    print("adversarial" + "".join(f"{kb:>9} KB" for kb in SIZES_KB) + "   growth per doubling")
    for unit in ADVERSARIAL:
        texts = tuple(unit * (kb * 1024 // len(unit)) for kb in SIZES_KB)
        times = _interleaved((strip_pii,) * len(texts), texts, 1, rounds)
        growth = statistics.median(
            b / a for round_times in times for a, b in itertools.pairwise(round_times)
        )
        best = [min(t[i] for t in times) for i in range(len(texts))]
        cells = "".join(f"{t * 1e3:>9.1f} ms" for t in best)
        print(f"{unit[:10]!r:<11}{cells}   {growth:.2f}")


def main(options: list[str]) -> None:
    quick = "--quick" in options
    bench_messages(200 if quick else 1_000, 5 if quick else 15)
    bench_growth(2 if quick else 3)
