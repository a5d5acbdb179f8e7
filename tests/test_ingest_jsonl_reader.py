"""The fast block reader for analytics JSONL reads exactly what ``loading.iter_jsonl`` reads:
same line numbers, values and messages, wherever the block boundaries fall."""

from __future__ import annotations

import io

import orjson
from hypothesis import given
from hypothesis import strategies as st

from toolcall_spec.analytics.jsonl import iter_json_lines
from toolcall_spec.loading import iter_jsonl

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
    st.binary(max_size=20),
    # Far over the limit (the two readers draw the limit's edge one byte apart).
    st.integers(LIMIT + 2, 4 * LIMIT).map(lambda n: b"[" + b"1," * (n // 2) + b"1]"),
)


def _away_from_the_edge(line: bytes) -> bool:
    """``iter_jsonl`` counts a line's newline against the limit, this reader does not: they
    draw the limit one byte apart, so lines of exactly that length are left out."""
    return b"\n" not in line and len(line) not in (LIMIT, LIMIT + 1)


@given(
    lines=st.lists(_line.filter(_away_from_the_edge), max_size=12),
    final_newline=st.booleans(),
    block=st.integers(1, 40),
)
def test_the_block_reader_agrees_with_iter_jsonl(
    lines: list[bytes], final_newline: bool, block: int
) -> None:
    body = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    expected = [
        (line.number, line.value, line.error)
        for line in iter_jsonl(io.BytesIO(body), max_line_bytes=LIMIT)
    ]
    actual = list(iter_json_lines(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=block))
    assert actual == expected


def test_an_oversize_line_is_reported_and_the_next_line_still_read() -> None:
    body = b"1\n" + b"[" + b"0," * 100 + b"0]\n" + b"2\n" + b"3"
    assert list(iter_json_lines(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=16)) == [
        (1, 1, None),
        (2, None, f"line is over the limit of {LIMIT:,} bytes"),
        (3, 2, None),
        (4, 3, None),
    ]


def test_an_oversize_last_line_without_a_newline() -> None:
    body = b"1\n" + b"9" * (3 * LIMIT)
    parsed = list(iter_json_lines(io.BytesIO(body), max_line_bytes=LIMIT, block_bytes=10))
    assert parsed == [(1, 1, None), (2, None, f"line is over the limit of {LIMIT:,} bytes")]
