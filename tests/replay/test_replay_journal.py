"""The journal format of a recording (``toolcall_spec.replay.journal``): a journal cut at any
byte (a writer killed mid-line) reads back as exactly the lines written whole before the cut,
the torn rest ignored and said so; the suite it rebuilds is the one the in-memory recording
built from the same records, calls in send order whatever order they were appended in."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_spec.loading import DocumentError
from toolcall_spec.replay.journal import (
    JournalWriter,
    Recording,
    encode_line,
    header,
    read_journal,
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
CALL = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(["lookup", "billing:charge"]),
        "args": st.none() | st.dictionaries(st.text(max_size=4), JSON, max_size=2),
        "isError": st.booleans(),
        "response": JSON,
    }
)


def records(calls: list[dict[str, Any]], order: list[int]) -> list[dict[str, Any]]:
    """Two sessions' lines: each session named first, then the calls appended in ``order``
    (answer order), each naming its place in send order."""
    lines: list[dict[str, Any]] = [
        {"session": 0, "label": "first"},
        {"session": 1, "label": "second"},
    ]
    for index in order:
        lines.append({"session": index % 2, "call": index // 2, **calls[index]})
    return lines


@settings(max_examples=25, deadline=None)
@given(calls=st.lists(CALL, min_size=1, max_size=6), data=st.data())
def test_a_journal_cut_anywhere_reads_back_as_the_lines_written_whole(
    tmp_path_factory: pytest.TempPathFactory, calls: list[dict[str, Any]], data: Any
) -> None:
    """Each example writes a real file through the writer and reads it back whole and cut at
    eight places: about 10 s under load on a shared machine."""
    order = data.draw(st.permutations(range(len(calls))))
    lines = records(calls, order)
    path = tmp_path_factory.mktemp("journal") / "s.json.journal"
    writer = JournalWriter(path, encode_line(header("recorded.evals.x")), mode=0o600)
    for line in lines:
        writer.append(encode_line(line))
    writer.close()
    full = path.read_bytes()
    memory = Recording("recorded.evals.x")
    for line in lines:
        memory.apply(line)
    whole = read_journal(full)
    assert whole.suite == memory.suite()
    assert not whole.torn
    assert not whole.skipped
    ends = [i + 1 for i, byte in enumerate(full) if byte == ord("\n")]
    for cut in data.draw(st.lists(st.integers(0, len(full)), max_size=8)):
        if cut < ends[0]:  # not even the first line is whole: not a journal yet
            with pytest.raises(DocumentError):
                read_journal(full[:cut])
            continue
        whole_lines = sum(end <= cut for end in ends) - 1  # less the first line
        prefix = Recording("recorded.evals.x")
        for line in lines[:whole_lines]:
            prefix.apply(line)
        read = read_journal(full[:cut])
        assert read.suite == prefix.suite()
        assert read.torn == (cut not in ends)
        assert not read.skipped


def test_a_call_line_appended_twice_is_kept_once() -> None:
    call = {"session": 0, "call": 0, "tool": "t", "args": {}, "isError": False, "response": 1}
    data = b"".join(
        encode_line(r) for r in (header("recorded.evals.x"), {"session": 0, "label": "s"})
    )
    read = read_journal(data + encode_line(call) + encode_line({**call, "response": 2}))
    assert [e["response"] for e in read.suite["tasks"][0]["fixtures"]["toolResponses"]] == [1]
