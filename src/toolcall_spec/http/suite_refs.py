"""Resolving a run's ``evalSuiteRef`` to a suite document.

OpenWOP fetches eval suites by reference; this host accepts three kinds, and never the network:

- a conformance fixture id the host lists in discovery ``fixtures`` (e.g.
  ``conformance-eval-fixture-error``);
- a ``data:application/json`` URI, base64 (``;base64,``) or percent-encoded;
- a ``file:`` URI, only when the operator allowed one directory, and only inside it: the path is
  resolved (symlinks, ``..``) before the check, then opened component by component without
  following links, so nothing outside the directory can be read even if the tree changes meanwhile.

Every refusal is an ``ApiError`` naming ``evalSuiteRef``.
"""

from __future__ import annotations

import base64
import binascii
import errno
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, unquote_to_bytes, urlsplit

import orjson

from toolcall_spec.host.fixtures import FIXTURE_FILES, load_fixture
from toolcall_spec.http.errors import ApiError, invalid
from toolcall_spec.loading import DocumentError, parse_json

FIELD = "evalSuiteRef"

SuiteLoader = Callable[[], Any]
"""Loads one fixture suite; called per run, so each run gets its own copy."""

DEFAULT_MAX_SUITE_BYTES = 512 * 1024

NETWORK_SCHEMES = frozenset({"http", "https", "ftp", "ftps", "ws", "wss", "sftp", "smb"})


@dataclass(frozen=True)
class SuiteSources:
    """Where suites may come from: the seeded fixtures and at most one operator-allowed folder."""

    fixtures: Mapping[str, SuiteLoader] = field(default_factory=dict)
    allowed_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.allowed_dir is not None:
            root = Path(self.allowed_dir).resolve()
            if not root.is_dir():
                raise NotADirectoryError(
                    f"the suite directory {self.allowed_dir} is not an existing directory"
                )
            object.__setattr__(self, "allowed_dir", root)


def resolve_suite_ref(
    ref: str, sources: SuiteSources, *, max_bytes: int = DEFAULT_MAX_SUITE_BYTES
) -> dict[str, Any]:
    """The suite ``ref`` names, as a JSON object of at most ``max_bytes``; ``ApiError``
    when it cannot be used."""
    if ref in sources.fixtures:
        return _as_suite(sources.fixtures[ref]())
    scheme = urlsplit(ref).scheme.lower() if ":" in ref else ""
    if scheme == "data":
        return _as_suite(_parse(_data_uri_bytes(ref), max_bytes))
    if scheme == "file":
        return _as_suite(_parse(_read_allowed_file(ref, sources, max_bytes), max_bytes))
    if scheme in NETWORK_SCHEMES or ref.startswith("//"):
        raise invalid(
            FIELD,
            "this host never fetches suites over the network; "
            "send the suite as a data:application/json URI",
            scheme=scheme,
        )
    listed = ", ".join(sorted(sources.fixtures)) or "none"
    raise invalid(
        FIELD,
        f"not a fixture id this host lists (fixtures: {listed}) nor a data:application/json URI",
    )


def _as_suite(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise invalid(FIELD, "the referenced document is not a JSON object")
    return document


def _parse(raw: bytes, max_bytes: int) -> Any:
    if len(raw) > max_bytes:
        raise ApiError(
            413,
            "payload_too_large",
            f"{FIELD}: the suite is {len(raw):,} bytes, over this host's limit of "
            f"{max_bytes:,} bytes",
            {"field": FIELD, "limit": max_bytes},
        )
    try:
        return parse_json(raw)
    except DocumentError as exc:
        raise invalid(FIELD, f"the referenced suite is not JSON: {exc}") from None


def _data_uri_bytes(ref: str) -> bytes:
    """The payload of ``data:[<media type>][;base64],<data>`` (RFC 2397); the media type must be
    ``application/json`` (parameters such as ``charset`` allowed)."""
    header, comma, payload = ref[len("data:") :].partition(",")
    if not comma:
        raise invalid(FIELD, "a data: URI needs a comma before its payload")
    params = [p.strip().lower() for p in header.split(";")]
    is_base64 = params[-1] == "base64"
    media_type = params[0] if params and params[0] else "text/plain"
    if media_type != "application/json":
        raise invalid(
            FIELD, f"a data: URI must have the media type application/json, not {media_type}"
        )
    if not is_base64:
        return unquote_to_bytes(payload)
    try:
        return base64.b64decode(unquote(payload), validate=True)
    except (binascii.Error, ValueError):
        raise invalid(
            FIELD, "the data: URI says base64 but its payload is not valid base64"
        ) from None


def _read_allowed_file(ref: str, sources: SuiteSources, max_bytes: int) -> bytes:
    root = sources.allowed_dir
    if root is None:
        raise ApiError(
            403,
            "forbidden",
            f"{FIELD}: file: references are disabled on this host "
            "(the operator allows one directory with --allow-suite-dir)",
            {"field": FIELD},
        )
    target = _resolved_target(ref, root)
    relative = target.relative_to(root)
    try:
        return _read_beneath(root, relative.parts, max_bytes)
    except OSError as exc:
        raise invalid(FIELD, f"cannot read the suite file: {exc.strerror or exc}") from None


def _resolved_target(ref: str, root: Path) -> Path:
    """The absolute, link-free path a ``file:`` URI names; 403 unless it lies inside ``root``."""
    parts = urlsplit(ref)
    if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        raise invalid(
            FIELD, "a file: URI must be file:///absolute/path, without host, query or fragment"
        )
    path = unquote(parts.path)
    if "\x00" in path or not path.startswith("/"):
        raise invalid(FIELD, "a file: URI must name an absolute path")
    try:
        resolved = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        resolved = None
    if resolved is None or not resolved.is_relative_to(root):
        # One answer for "missing" and "outside": a client cannot probe the file system.
        raise ApiError(
            403,
            "forbidden",
            f"{FIELD}: the path names no readable file inside the one directory this host allows",
            {"field": FIELD},
        )
    if not resolved.is_file():
        raise invalid(FIELD, "the suite path is not a regular file")
    return resolved


def _read_beneath(root: Path, parts: tuple[str, ...], max_bytes: int) -> bytes:
    """Open ``root/parts...`` one component at a time, refusing symbolic links, so a link swapped
    in after the check cannot lead outside ``root``; read at most ``max_bytes + 1`` bytes."""
    if os.open not in os.supports_dir_fd or not hasattr(os, "O_NOFOLLOW"):  # pragma: no cover
        with (root.joinpath(*parts)).open("rb") as handle:
            return handle.read(max_bytes + 1)
    directory_flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_DIRECTORY", 0)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, directory_flags, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        # O_NONBLOCK: a FIFO swapped in cannot hang the open; fstat then refuses it.
        file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(file_fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        return handle.read(max_bytes + 1)


def conformance_fixtures() -> dict[str, SuiteLoader]:
    """Every conformance fixture this package ships, each a fresh copy per run of the same
    package data the conformance legs use (``toolcall_spec.host.fixtures``)."""
    return {fixture_id: partial(_fresh_fixture, fixture_id) for fixture_id in FIXTURE_FILES}


@cache
def _checked_fixture(fixture_id: str) -> bytes:
    """The fixture read once through the checked reader (``load_fixture``), as JSON text."""
    return orjson.dumps(load_fixture(fixture_id))


def _fresh_fixture(fixture_id: str) -> Any:
    """A copy for one run, parsed from text already checked: no second scan for repeats."""
    return orjson.loads(_checked_fixture(fixture_id))
