"""evalSuiteRef resolution: fixture ids, data: URIs, and file: URIs confined to one directory."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolcall_spec.host.fixtures import load_fixture
from toolcall_spec.http.errors import ApiError
from toolcall_spec.http.suite_refs import SuiteSources, conformance_fixtures, resolve_suite_ref

INSIDE = {"where": "inside"}
SECRET = {"where": "outside", "secret": True}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """allowed/ (with suite.json, sub/nested.json, links out) next to outside/secret.json."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    (allowed / "sub").mkdir(parents=True)
    outside.mkdir()
    (allowed / "suite.json").write_bytes(orjson.dumps(INSIDE))
    (allowed / "sub" / "nested.json").write_bytes(orjson.dumps(INSIDE))
    (outside / "secret.json").write_bytes(orjson.dumps(SECRET))
    (allowed / "link-to-secret.json").symlink_to(outside / "secret.json")
    (allowed / "link-to-outside").symlink_to(outside, target_is_directory=True)
    (allowed / "link-to-suite.json").symlink_to(allowed / "suite.json")
    return tmp_path


def sources(tree: Path | None = None) -> SuiteSources:
    allowed = None if tree is None else tree / "allowed"
    return SuiteSources(conformance_fixtures(), allowed_dir=allowed)


def refused(ref: str, source: SuiteSources) -> ApiError:
    with pytest.raises(ApiError) as caught:
        resolve_suite_ref(ref, source)
    assert caught.value.details.get("field") == "evalSuiteRef"
    assert "evalSuiteRef" in caught.value.message
    return caught.value


def test_a_fixture_id_resolves_to_the_packaged_fixture_suite() -> None:
    suite = resolve_suite_ref("conformance-eval-fixture-error", sources())
    assert suite == load_fixture("conformance-eval-fixture-error")
    entries = suite["tasks"][0]["fixtures"]["toolResponses"]
    assert entries[0]["isError"] is True


def test_each_resolution_is_a_fresh_copy() -> None:
    first = resolve_suite_ref("conformance-eval-fixture-error", sources())
    first["tasks"].clear()
    assert resolve_suite_ref("conformance-eval-fixture-error", sources())["tasks"]


@pytest.mark.parametrize(
    "ref",
    [
        "data:application/json;base64," + base64.b64encode(b'{"a": [1, true]}').decode(),
        "data:application/json," + quote('{"a": [1, true]}'),
        "data:application/json;charset=utf-8," + quote('{"a": [1, true]}'),
        "DATA:Application/JSON;BASE64," + base64.b64encode(b'{"a": [1, true]}').decode(),
    ],
)
def test_data_uris_decode_base64_and_percent_encoded(ref: str) -> None:
    assert resolve_suite_ref(ref, sources()) == {"a": [1, True]}


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        ("data:text/plain," + quote("{}"), "application/json"),
        ("data:," + quote("{}"), "application/json"),
        ("data:application/json;base64,not base64!", "base64"),
        ("data:application/json", "comma"),
        ("data:application/json," + quote("[1, 2]"), "not a JSON object"),
        ("data:application/json," + quote("{broken"), "not JSON"),
        ("https://example.com/suite.json", "network"),
        ("http://127.0.0.1/suite.json", "network"),
        ("//example.com/suite.json", "network"),
        ("no-such-fixture", "conformance-eval-fixture-error"),
    ],
)
def test_unusable_references_are_400_naming_the_field(ref: str, words: str) -> None:
    error = refused(ref, sources())
    assert (error.status, error.code) == (400, "validation_error")
    assert words in error.message


def test_a_suite_over_the_size_limit_is_413() -> None:
    big = "data:application/json," + quote(orjson.dumps({"pad": "x" * 2000}).decode())
    with pytest.raises(ApiError) as caught:
        resolve_suite_ref(big, sources(), max_bytes=1000)
    error = caught.value
    assert (error.status, error.code) == (413, "payload_too_large")


def test_file_references_are_refused_unless_a_directory_is_allowed(tree: Path) -> None:
    ref = (tree / "allowed" / "suite.json").as_uri()
    error = refused(ref, sources())
    assert (error.status, error.code) == (403, "forbidden")
    assert "--allow-suite-dir" in error.message


def test_files_inside_the_allowed_directory_are_read(tree: Path) -> None:
    source = sources(tree)
    for name in ("suite.json", "sub/nested.json", "link-to-suite.json", "sub/../suite.json"):
        ref = f"file://{tree / 'allowed'}/{name}"
        assert resolve_suite_ref(ref, source) == INSIDE, name
    assert resolve_suite_ref(f"file:{tree / 'allowed' / 'suite.json'}", source) == INSIDE


@pytest.mark.parametrize(
    "relative",
    [
        "../outside/secret.json",
        "sub/../../outside/secret.json",
        "%2e%2e/outside/secret.json",
        "link-to-secret.json",
        "link-to-outside/secret.json",
        "no-such-file.json",
    ],
)
def test_no_path_outside_the_allowed_directory_is_read(tree: Path, relative: str) -> None:
    error = refused(f"file://{tree / 'allowed'}/{relative}", sources(tree))
    assert (error.status, error.code) == (403, "forbidden")
    assert "secret" not in error.message


def test_absolute_paths_elsewhere_are_refused(tree: Path) -> None:
    for ref in (
        (tree / "outside" / "secret.json").as_uri(),
        "file:///etc/passwd",
        "file://otherhost/etc/passwd",
        "file:relative/suite.json",
        f"file://{tree / 'allowed'}/suite.json%00.txt",
    ):
        error = refused(ref, sources(tree))
        assert error.status in (400, 403), ref


def test_a_directory_or_special_file_inside_is_not_read(tree: Path) -> None:
    assert refused(f"file://{tree / 'allowed'}/sub", sources(tree)).status == 400
    os.mkfifo(tree / "allowed" / "pipe.json")
    assert refused(f"file://{tree / 'allowed'}/pipe.json", sources(tree)).status == 400


def test_the_allowed_directory_must_exist(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError, match="missing"):
        SuiteSources({}, allowed_dir=tmp_path / "missing")
    (tmp_path / "file").write_text("{}")
    with pytest.raises(NotADirectoryError):
        SuiteSources({}, allowed_dir=tmp_path / "file")


COMPONENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "sub",
        "suite.json",
        "nested.json",
        "secret.json",
        "outside",
        "allowed",
        "link-to-secret.json",
        "link-to-outside",
        "link-to-suite.json",
        "%2e%2e",
        "%2F",
        "..%2F",
    ]
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(COMPONENTS, min_size=1, max_size=6), absolute=st.booleans())
def test_whatever_the_path_only_inside_content_is_ever_returned(
    tree: Path, parts: list[str], absolute: bool
) -> None:
    """Property: built from traversal pieces, links and encodings, a file: reference either is
    refused or yields a file inside the allowed directory, never the secret next to it. (With
    the containment check removed from suite_refs, this finds the secret in a few examples.)"""
    base = tree / "allowed" if not absolute else tree
    ref = f"file://{base}/{'/'.join(parts)}"
    try:
        document = resolve_suite_ref(ref, sources(tree))
    except ApiError as error:
        status = error.status
    else:
        assert document == INSIDE
        return
    assert status in (400, 403, 413)
