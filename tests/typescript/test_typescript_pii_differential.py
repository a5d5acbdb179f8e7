"""The TypeScript PII stripper (typescript/pii.js) gives byte for byte what the Python one
(``toolcall_spec.analytics.pii``) gives: 100,000 messages a run, drawn from the Hypothesis
strategies of the Python PII tests (support.pii_messages, a new seed each run, printed on
failure), stripped by both; the whole error-message path (trim, safe cut at 4,000 characters,
strip, clamp to 500) on long messages too; and linear time on the Python bench's adversarial
inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.node import TYPESCRIPT, tool
from support.pii_messages import generated_messages
from support.repo import REPO

from toolcall_spec.analytics.classify import error_message
from toolcall_spec.analytics.pii import strip_pii

PII = pytest.mark.requirement("toolcall-spec.requirement.analytics.pii-stripped")
STRIPPER = Path(__file__).parent / "strip_pii.mjs"
MESSAGES_PER_RUN = 100_000
LONG_MESSAGES = 100


def node_stripped(mode: str, texts: list[str]) -> list[str]:
    """``texts`` through strip_pii.mjs (``mode`` ``strip`` or ``message``)."""
    lines = "".join(json.dumps(text) + "\n" for text in texts)
    done = subprocess.run(
        [tool("node"), str(STRIPPER), mode],
        input=lines,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Not splitlines(): JSON leaves U+2028 and friends as they are, and they are line breaks to it.
    return [json.loads(line) for line in done.stdout.split("\n") if line]


def first_differences(
    texts: list[str], ours: Sequence[object], theirs: Sequence[object]
) -> list[str]:
    return [
        f"{text!r}\n  python     {a!r}\n  typescript {b!r}"
        for text, a, b in zip(texts, ours, theirs, strict=True)
        if a != b
    ][:5]


def test_the_unicode_classes_are_pythons() -> None:
    """typescript/unicode.js (the letters and digits the port reads) is what this Python's
    ``re`` makes; a Python of another Unicode version reads some new letters otherwise."""
    script = TYPESCRIPT / "scripts" / "unicode_classes.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


@PII
def test_the_typescript_stripper_agrees_with_python_on_every_generated_message() -> None:
    """Slow on purpose (about 30 s on two busy cores): 100,000 messages through both."""
    seed = int.from_bytes(os.urandom(4), "big")
    texts = list(generated_messages(MESSAGES_PER_RUN, seed))
    theirs = node_stripped("strip", texts)
    ours = [strip_pii(text) for text in texts]
    assert len(theirs) == len(texts)
    differences = first_differences(texts, ours, theirs)
    assert not differences, f"seed {seed}:\n" + "\n".join(differences)


@PII
def test_the_error_message_path_agrees_on_long_messages() -> None:
    """Messages past the 4,000-character safety cut and the 500-character clamp, cut anywhere
    (inside an address, a number, a secret, an astral character)."""
    seed = int.from_bytes(os.urandom(4), "big")
    pieces = list(generated_messages(LONG_MESSAGES * 70, seed))
    texts = [" ".join(pieces[i * 70 : (i + 1) * 70]) for i in range(LONG_MESSAGES)]
    texts += [
        text[: 3990 + i % 20] + "max@example.com 4111 1111 1111 1111"
        for i, text in enumerate(texts)
    ]
    theirs = node_stripped("message", texts)
    ours = [error_message(text) for text in texts]
    differences = first_differences(texts, ours, theirs)
    assert not differences, f"seed {seed}:\n" + "\n".join(differences)


def growth_times(units: list[str]) -> list[tuple[str, list[float]]]:
    """CPU milliseconds of the TypeScript stripper on each unit repeated to 128, 256, 512 KB."""
    done = subprocess.run(
        [tool("node"), str(STRIPPER), "growth", json.dumps(units)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [(row["unit"], row["times"]) for row in json.loads(done.stdout)]


def growth(times: list[float]) -> float:
    """Four times the input (128 to 512 KB): about 4 when linear, 16 when quadratic."""
    return times[2] / max(times[0], 0.05)


@PII
def test_the_typescript_stripper_is_linear_on_the_benchs_adversarial_inputs() -> None:
    """Slow on purpose (the bench's twelve adversarial inputs at three sizes). A unit whose
    growth looks superlinear is measured twice more and judged by its best run: on two cores
    shared with other work even CPU time is noisy, while a quadratic pass fails every run."""
    sys.path.insert(0, str(REPO))
    from benchmarks.bench_pii import ADVERSARIAL

    for unit, times in growth_times(list(ADVERSARIAL)):
        runs = [times]
        while growth(runs[-1]) >= 8.0 and runs[-1][2] >= 30 and len(runs) < 3:
            runs += [times for _, times in growth_times([unit])]
        best = min(runs, key=growth)
        assert growth(best) < 8.0 or best[2] < 30, (unit, runs)
        sizes = " ".join(f"{ms:7.1f}" for ms in best)
        print(f"{unit[:10]!r:<12} {sizes} ms  x{growth(best):.2f}")
