"""Hostile documents: repeated member names, nesting past the limit, integers beyond 64 bits, and
standard input far over the size limit. Each gets a clear refusal with a path, never a crash."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli import CLI, run_cli

from toolcall_spec.analytics.ingest import ingest_body, ingest_jsonl
from toolcall_spec.host import ReferenceHost, RunRefused
from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.json_paths import format_path
from toolcall_spec.loading import DocumentError, iter_jsonl, parse_json
from toolcall_spec.validation import (
    MAX_DEPTH,
    structure_problems,
    validate,
    within_structure_limits,
)

REPEATS = pytest.mark.requirement("toolcall-spec.requirement.input.no-repeated-members")
DEPTH = pytest.mark.requirement("toolcall-spec.requirement.input.max-depth")
INTEGERS = pytest.mark.requirement("toolcall-spec.requirement.input.integer-range")
BOUNDED = pytest.mark.requirement("toolcall-spec.requirement.input.bounded-read")

FLIPPED = b'{"content": [], "isError": false, "isError": true}'
"""The attack of issue 14: last-wins readers see an error, first-wins readers a success."""


def suite_with_repeat() -> bytes:
    text = json.dumps(load_fixture("conformance-eval-fixture-error"))
    marker = '"isError": true, "response"'
    assert marker in text
    return text.replace(marker, '"isError": false, "isError": true, "response"', 1).encode()


# --- repeated member names ----------------------------------------------------------------------


def first_repeat(pairs_tree: bytes) -> bool:
    """The stdlib reader as the independent judge: does any object list a name twice?"""
    found = False

    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal found
        names = [name for name, _ in pairs]
        found = found or len(names) != len(set(names))
        return dict(pairs)

    json.loads(pairs_tree, object_pairs_hook=hook)
    return found


scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.text(max_size=6))
names = st.sampled_from(["a", "b", "isError", '":', "\\", "é", 'a"b'])
Pairs = Any
trees: st.SearchStrategy[Pairs] = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: ("array", items)),
        st.lists(st.tuples(names, inner), max_size=4).map(lambda pairs: ("object", pairs)),
    ),
    max_leaves=20,
)


def render(tree: Pairs, *, space: str, ascii_only: bool) -> str:
    """JSON text that keeps every pair as written (repeats included), in varied spellings."""
    if isinstance(tree, tuple) and tree[0] == "array":
        return (
            "["
            + f",{space}".join(render(v, space=space, ascii_only=ascii_only) for v in tree[1])
            + "]"
        )
    if isinstance(tree, tuple):
        members = (
            f"{json.dumps(k, ensure_ascii=ascii_only)}{space}:{space}"
            + render(v, space=space, ascii_only=ascii_only)
            for k, v in tree[1]
        )
        return "{" + f",{space}".join(members) + "}"
    return json.dumps(tree, ensure_ascii=ascii_only)


@REPEATS
@settings(max_examples=400, deadline=None)
@given(trees, st.sampled_from(["", " ", "\n\t"]), st.booleans())
def test_a_text_is_refused_exactly_when_an_object_repeats_a_name(
    tree: Pairs, space: str, ascii_only: bool
) -> None:
    raw = render(tree, space=space, ascii_only=ascii_only).encode()
    repeated = first_repeat(raw)
    if repeated:
        with pytest.raises(DocumentError, match="appears more than once"):
            parse_json(raw)
    else:
        assert parse_json(raw) == json.loads(raw), raw
    lines = list(iter_jsonl(io.BytesIO(raw.replace(b"\n", b" ") + b"\n")))
    assert (lines[0][2] is not None) == repeated


@REPEATS
def test_the_message_names_the_member_and_its_path() -> None:
    with pytest.raises(DocumentError) as caught:
        parse_json(suite_with_repeat())
    assert str(caught.value).startswith("tasks[0].fixtures.toolResponses[0].isError: the member")
    with pytest.raises(DocumentError, match=r'^\[1\]\.b: the member "b"'):
        parse_json(b'[1, {"a": 1, "b": 2, "\\u0062": 3}]')  # the same name, spelled with an escape


@REPEATS
def test_strings_that_look_like_names_are_not_repeats() -> None:
    assert parse_json(b'{"a": "\\":", "b": ["\\" :", {"a": 1}]}') == {
        "a": '":',
        "b": ['" :', {"a": 1}],
    }


@REPEATS
def test_every_reader_refuses_a_repeat(tmp_path: Any) -> None:
    suite = tmp_path / "suite.json"
    suite.write_bytes(suite_with_repeat())
    for command in (["validate", suite], ["replay", suite]):
        done = run_cli(*command)
        assert done.returncode == 2, done
        assert "tasks[0].fixtures.toolResponses[0].isError" in done.stderr
    classify = run_cli("classify", "-", stdin=FLIPPED)
    assert classify.returncode == 2
    assert 'the member "isError" appears more than once' in classify.stderr
    batch = ingest_body(b'{"events": [{"event_id": "x", "event_id": "y"}]}')
    assert batch["status"] == 400
    assert "events[0].event_id" in batch["error"]["message"]
    answer = ingest_jsonl(io.BytesIO(b'{"status": "success", "status": "error"}\n'))
    assert answer["rejected"] == 1
    assert "status: the member" in answer["errors"][0]["issues"][0]


# --- depth and integers -------------------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"n": value}
    return value


def suite_with_response(response: Any) -> dict[str, Any]:
    suite = load_fixture("conformance-eval-fixture-error")
    suite["tasks"][0]["fixtures"]["toolResponses"][0] = {"tool": "lookup", "response": response}
    return suite


@DEPTH
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 600, 50_000])
def test_too_deep_is_a_problem_with_a_path_and_a_refusal_at_run_create(depth: int) -> None:
    suite = suite_with_response(nested(depth))
    problems = validate(suite, "suite")
    assert len(problems) == 1
    assert problems[0].message == f"nested deeper than {MAX_DEPTH} levels, this package's limit"
    assert problems[0].path.startswith("tasks[0].fixtures.toolResponses[0].response.n.n")
    with pytest.raises(RunRefused) as refused:
        ReferenceHost().create_run(suite)
    assert refused.value.status == 400
    assert "nested deeper than" in refused.value.message


@DEPTH
def test_the_deepest_accepted_suite_replays_and_its_events_serialize() -> None:
    depth = MAX_DEPTH - 6  # the entry sits 6 levels down the suite
    suite = suite_with_response(nested(depth))
    assert validate(suite, "suite") == []
    host = ReferenceHost()
    run_id = host.create_run(suite)
    assert host.summary(run_id)["tasks"] if host.summary(run_id) else True
    assert json.loads(json.dumps(host.events(run_id)))  # a full log, every event writable


@DEPTH
def test_the_cli_refuses_a_deep_suite_as_invalid(tmp_path: Any) -> None:
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(suite_with_response(nested(500))))
    done = run_cli("validate", path)
    assert done.returncode == 1
    assert "nested deeper than 128 levels" in done.stdout
    replay = run_cli("replay", path)
    assert replay.returncode == 1
    assert json.loads(replay.stdout)["error"] == "validation_error"


@INTEGERS
def test_integers_beyond_64_bits_from_the_python_api_are_refused_with_a_path() -> None:
    suite = suite_with_response({"content": [{"type": "text", "text": "x"}], "n": 2**64})
    problems = validate(suite, "suite")
    assert [p.path for p in problems] == ["tasks[0].fixtures.toolResponses[0].response.n"]
    assert "beyond 64 bits" in problems[0].message
    with pytest.raises(RunRefused, match="beyond 64 bits"):
        ReferenceHost().create_run(suite)
    edge = suite_with_response({"content": [], "low": -(2**63), "high": 2**64 - 1})
    assert validate(edge, "suite") == []


_edge_integers = st.sampled_from([0, -(2**63), 2**64 - 1, -(2**63) - 1, 2**64, 10**80, True])
_nested = st.recursive(
    st.one_of(st.none(), st.floats(allow_nan=False), st.text(max_size=3), _edge_integers),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
)


@DEPTH
@INTEGERS
@settings(max_examples=400)
@given(_nested, st.integers(min_value=0, max_value=4))
def test_the_quick_structure_walk_agrees_with_the_located_one(document: Any, limit: int) -> None:
    """``within_structure_limits`` (no paths, every ingested event pays for it) says yes exactly
    when the walk that names the first problem finds none, at every limit from 0 to 4 levels.
    Caught mutations: a limit off by one, a narrower integer range, list items not walked."""
    expected = _located_problems(document, limit)
    assert within_structure_limits(document, limit) == (not expected)
    problems = structure_problems(document, limit)
    assert [problem.path for problem in problems] == [
        format_path(expected[0]) for _ in expected[:1]
    ]


def _located_problems(document: Any, limit: int) -> list[tuple[str | int, ...]]:
    """The plain recursive reading of the limits, with paths: the reference for the quick walk."""

    def walk(node: Any, depth: int, path: tuple[str | int, ...]) -> list[tuple[str | int, ...]]:
        if type(node) is int and not -(2**63) <= node < 2**64:
            return [path]
        if not isinstance(node, (dict, list)):
            return []
        if depth == limit:
            return [path]
        items = node.items() if isinstance(node, dict) else enumerate(node)
        return [found for key, child in items for found in walk(child, depth + 1, (*path, key))]

    return walk(document, 0, ())


# --- standard input -----------------------------------------------------------------------------


PEAK_OF_CHILD = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
    "sys.stderr.buffer.write(done.stderr); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)
"""Runs a command and prints its exit code and peak RSS (KiB on Linux). A small parent of its
own, so the figure is the command's, not inherited from this test process."""


@BOUNDED
def test_standard_input_is_limited_while_it_is_read() -> None:
    """300 MB piped in: refused once 16 MiB are read, with peak memory far below the input."""
    process = subprocess.Popen(
        [sys.executable, "-c", PEAK_OF_CHILD, *CLI, "validate", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    chunk = b"[" + b" " * (1 << 20)
    with contextlib.suppress(BrokenPipeError):
        for _ in range(300):
            process.stdin.write(chunk)
        process.stdin.close()
    out, err = process.communicate(timeout=120)
    code, peak_kib = map(int, out.split())
    assert code == 2
    assert "over the limit of 16,777,216 bytes" in err.decode()
    assert "Traceback" not in err.decode()
    assert peak_kib / 1024 < 120, f"peak RSS {peak_kib / 1024:.0f} MiB for 300 MB of input"


def deep_text(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


@DEPTH
@pytest.mark.parametrize(
    ("command", "name", "text"),
    [
        (
            "promote",
            "log.jsonl",
            '{"type": "agent.tool-returned", "runId": "local/a", "sequence": 1, '
            '"timestamp": "2026-01-01T00:00:00Z", "payload": {"outcome": %s}}\n',
        ),
        ("ingest", "events.jsonl", '{"event_id": "x", "input_values": %s}\n'),
        ("ingest", "batch.json", '{"events": [{"event_id": "x", "input_values": %s}]}'),
        ("validate", "result.json", '{"content": %s, "isError": true}'),
    ],
)
def test_every_command_answers_a_deep_document_without_a_traceback(
    tmp_path: Any, command: str, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text % deep_text(1000))
    done = run_cli(command, path)  # run_cli fails the test on any traceback
    assert done.returncode == 1
    assert f"nested deeper than {MAX_DEPTH} levels" in done.stdout + done.stderr
