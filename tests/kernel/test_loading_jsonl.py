"""``loading.iter_jsonl`` reads what a plain line-by-line reading gives: the same line numbers,
values and messages, wherever its block boundaries fall, in constant memory."""

from __future__ import annotations

import io
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.loading import DocumentError, iter_jsonl, parse_json

LIMIT = 64

_line = st.one_of(
    st.builds(
        orjson.dumps, st.dictionaries(st.text(max_size=5), st.integers(-(2**53), 2**53), max_size=3)
    ),
    st.sampled_from(
        [
            b"",
            b"  ",
            b"\r",
            b"{nope",
            b"[1,]",
            b"\x00",
            b"\xff\xfe",
            b'"a"\r',
            b"7",
            b"\xef\xbb\xbf[2]",
        ]
    ),
    st.binary(max_size=20).filter(lambda b: b"\n" not in b),
    st.integers(LIMIT - 2, 4 * LIMIT).map(lambda n: b"[" + b"1," * (n // 2) + b"1]"),
)


def reference_reading(body: bytes, limit: int) -> list[tuple[int, Any, str | None]]:
    """The obvious reading: split on newlines, skip blank lines, parse each line on its own."""
    out: list[tuple[int, Any, str | None]] = []
    pieces = body.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()  # a final newline ends the last line; it does not start another
    for number, piece in enumerate(pieces, start=1):
        if len(piece) > limit:
            out.append((number, None, f"line is over the limit of {limit:,} bytes"))
        elif piece.strip():
            try:
                out.append((number, parse_json(piece), None))
            except DocumentError as exc:
                out.append((number, None, str(exc)))
    return out


@given(lines=st.lists(_line, max_size=12), final_newline=st.booleans(), block=st.integers(1, 40))
def test_block_reading_agrees_with_the_reference_reading(
    lines: list[bytes], final_newline: bool, block: int
) -> None:
    body = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    actual = list(iter_jsonl(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=block))
    assert actual == reference_reading(body, LIMIT)


def test_an_oversize_line_is_reported_and_the_next_line_still_read() -> None:
    body = b"1\n" + b"[" + b"0," * 100 + b"0]\n" + b"2\n" + b"3"
    assert list(iter_jsonl(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=16)) == [
        (1, 1, None),
        (2, None, f"line is over the limit of {LIMIT:,} bytes"),
        (3, 2, None),
        (4, 3, None),
    ]


def test_an_oversize_last_line_without_a_newline() -> None:
    body = b"1\n" + b"9" * (3 * LIMIT)
    parsed = list(iter_jsonl(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=10))
    assert parsed == [(1, 1, None), (2, None, f"line is over the limit of {LIMIT:,} bytes")]
