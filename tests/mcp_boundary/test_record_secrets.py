"""Secrets never reach a recording, and the recording still answers the calls that held them
(issue 30, part 6; ``toolcall_spec.mcp.secrets``).

The properties plant a secret under a generated secret's name (every naming style, any depth)
or spelled out in any string, in a generated JSON document, and read the redacted document's
bytes; the last tests record a real MCP server with the real commands over stdio and replay the
recording to calls that hold other secrets."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import anyio
import mcp
import orjson
from hypothesis import example, given
from hypothesis import strategies as st
from mcp.client.stdio import StdioServerParameters
from support.repo import REPO
from support.strategies.pii_text import secrets
from support.strategies.secret_names import (
    not_secret_names,
    secret_names,
    secret_values,
)

from toolcall_spec.analytics.pii import SECRET_TOKEN
from toolcall_spec.mcp.secrets import is_secret_name, redact_secrets, serve_matching
from toolcall_spec.replay.fixtures import FixtureServer, Served

SECRETS_KEPT_OUT = pytest.mark.requirement("toolcall-spec.requirement.mcp.record-secrets-kept-out")
SECRETS_MATCH = pytest.mark.requirement("toolcall-spec.requirement.mcp.replay-matches-secrets")

PLAIN_KEYS = st.sampled_from(["query", "items", "meta", "page", "path", "user", "limit", "data"])
PLAIN_TEXT = st.text("abcdefghij klm./:-", max_size=12)
plain_json = st.recursive(
    st.none() | st.booleans() | st.integers(0, 1000) | PLAIN_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(PLAIN_KEYS, inner, max_size=3),
    max_leaves=12,
)
"""JSON without secrets: keys that name none, text without any key or credential in it."""


@st.composite
def planted(draw: st.DrawFn, secret: Any) -> dict[str, Any]:
    """A plain document (an object) with ``secret`` under a secret's name somewhere in it."""
    document = draw(plain_json)
    holder: dict[str, Any] = {draw(secret_names()): secret}
    for _ in range(draw(st.integers(0, 6))):
        holder = draw(st.sampled_from([{"data": holder}, [holder], {"items": [0, holder]}]))
    if isinstance(document, dict):
        return {**document, "meta": holder}
    return {"args": document, "meta": holder}


def dumped(value: Any) -> str:
    return orjson.dumps(value).decode()


@SECRETS_KEPT_OUT
@given(secret_names())
@example("X-Api-Key")
@example("passwordConfirmation")
@example("GITHUB_TOKEN")
@example("client-secret")
def test_every_style_of_a_secrets_name_names_a_secret(name: str) -> None:
    assert is_secret_name(name)


@SECRETS_KEPT_OUT
@given(not_secret_names())
def test_names_that_describe_count_or_page_are_not_secrets(name: str) -> None:
    assert not is_secret_name(name)


@SECRETS_KEPT_OUT
@given(st.data(), secret_values())
def test_a_value_under_a_secrets_name_never_survives_at_any_depth(
    data: st.DataObject, secret: str | int
) -> None:
    document = data.draw(planted(secret))
    redacted = redact_secrets(document)
    assert str(secret) not in dumped(redacted)
    assert SECRET_TOKEN in dumped(redacted)
    assert redact_secrets(redacted) == redacted  # idempotent: a replayed call redacts the same


@SECRETS_KEPT_OUT
@given(st.data(), secrets(), st.sampled_from(["{} failed", "use {}", "{}"]))
def test_a_secret_spelled_out_in_any_string_never_survives(
    data: st.DataObject, secret: str, sentence: str
) -> None:
    text = sentence.format(secret)
    document = data.draw(plain_json)
    holder: Any = {"data": [document, {"message": text}]}
    redacted = dumped(redact_secrets(holder))
    assert SECRET_TOKEN in redacted
    assert _sensitive(secret) not in redacted


def _sensitive(secret: str) -> str:
    """The part of a spelled-out secret that must go: a URL's password, a credential after
    ``Bearer``, a key whole."""
    if "://" in secret:
        return secret.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    return secret.removeprefix("Bearer ")


@SECRETS_KEPT_OUT
@given(plain_json, not_secret_names(), plain_json)
def test_a_document_without_secrets_is_returned_as_it_is(
    document: Any, name: str, value: Any
) -> None:
    whole = {"document": document, name: value}
    assert redact_secrets(whole) is whole


@SECRETS_KEPT_OUT
def test_any_depth_a_json_parser_gives_is_walked() -> None:
    deep: Any = {"password": "S3cret-deep"}
    for _ in range(20_000):
        deep = [deep]
    walked = redact_secrets(deep)
    for _ in range(20_000):
        walked = walked[0]
    assert walked == {"password": SECRET_TOKEN}


def _suite_server(tool: str, args: Any) -> FixtureServer:
    """The fixtures ``record`` writes for one call of ``tool`` with ``args``."""
    entry = {"tool": tool, "args": redact_secrets(args), "argsMatch": "exact", "response": {}}
    return FixtureServer.for_task({"taskId": "t", "fixtures": {"toolResponses": [entry]}})


@SECRETS_MATCH
@given(st.data(), secret_values(), secret_values())
def test_a_call_holding_another_secret_matches_the_redacted_recording(
    data: st.DataObject, recorded_secret: str | int, live_secret: str | int
) -> None:
    recorded = data.draw(planted(recorded_secret))
    server = _suite_server("sign_in", recorded)
    live = orjson.loads(dumped(recorded).replace(dumped(recorded_secret), dumped(live_secret)))
    assert isinstance(serve_matching(server, "sign_in", live), Served)


@SECRETS_MATCH
@given(st.data(), secret_values())
def test_a_call_that_differs_in_more_than_its_secrets_still_misses(
    data: st.DataObject, secret: str | int
) -> None:
    recorded = data.draw(planted(secret))
    server = _suite_server("sign_in", recorded)
    assert not isinstance(serve_matching(server, "sign_in", {**recorded, "extra": 1}), Served)


# --- the real commands, a real server -------------------------------------------------------

SECRET_SERVER = REPO / "tests" / "support" / "secret_server.py"


def cli(*args: str | Path) -> StdioServerParameters:
    """The command as a client launches it, with this process's environment (the client's
    default passes only a few variables, and the package may come from PYTHONPATH)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolcall_spec.cli", *map(str, args)],
        env=dict(os.environ),
    )


Call = tuple[str, dict[str, Any]]


def calls_holding(password: str, key: str, bearer: str) -> list[Call]:
    return [
        ("sign_in", {"user": "ada", "password": f"correct {password}", "apiKey": key}),
        ("sign_in", {"user": "ada", "password": f"wrong {password}", "apiKey": key}),
        (
            "fetch",
            {
                "url": f"https://ada:{password}@files.example.com/report",
                "headers": {"Authorization": f"Bearer {bearer}", "Accept": "text/plain"},
            },
        ),
    ]


def session(params: StdioServerParameters, calls: list[Call], journal: Path) -> list[Any]:
    """The calls through ``params``; what the client saw, and the journal's bytes as they were
    after each answer (the journal is what a kill -9 leaves)."""
    seen: list[Any] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with mcp.Client(params, mode="legacy") as client:
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    text = " ".join(getattr(block, "text", "") for block in result.content)
                    journaled = journal.read_text() if journal.exists() else ""
                    seen.append((result.is_error, text, journaled))

    anyio.run(main)
    return seen


PASSWORD, KEY = "horse-battery-9", "sk-live-4f8a2c9d1e7b3a6f5c0d"
BEARER = "eyJhbGciOi.eyJzdWIiOi.sig0"


@SECRETS_KEPT_OUT
@SECRETS_MATCH
def test_record_keeps_secrets_out_and_serve_fixtures_matches_other_secrets(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "signin.json"
    journal = tmp_path / "signin.json.journal"
    recorded = session(
        cli("record", "--out", suite, "--", sys.executable, SECRET_SERVER),
        calls_holding(PASSWORD, KEY, BEARER),
        journal,
    )
    assert [is_error for is_error, _, _ in recorded] == [False, True, False]
    issued = recorded[0][1].rsplit("Bearer ", 1)[1]  # the token the server gave the client
    written = suite.read_text()
    assert all(journaled for _, _, journaled in recorded)  # each answer was journaled first
    for secret in (PASSWORD, KEY, BEARER, issued):
        assert secret not in written
        assert all(secret not in journaled for _, _, journaled in recorded)
    assert written.count(SECRET_TOKEN) >= 6  # two passwords, two keys, a header, a URL, a token
    assert '"user":"ada"' in written.replace(" ", "")  # what is no secret stays
    assert "files.example.com/report" in written

    log = tmp_path / "replay-log.json"
    replayed = session(
        cli("serve-fixtures", suite, "--log", log),
        calls_holding("other-password", "sk-live-0000aaaa1111bbbb2222", "eyJother.eyJother.x"),
        tmp_path / "none",
    )
    assert [e for e, _, _ in replayed] == [e for e, _, _ in recorded]
    entries = orjson.loads(written)["tasks"][0]["fixtures"]["toolResponses"]
    assert [text for _, text, _ in replayed] == [
        entry["response"]["content"][0]["text"] for entry in entries
    ]
    assert f"Bearer {SECRET_TOKEN}" in replayed[0][1]
    summary = orjson.loads(log.read_bytes())["summary"]
    assert summary["fixtureMissCount"] == 0
    assert summary["unconsumedEntries"] == []
    assert "other-password" not in log.read_text()  # nor does the replay's log keep them


@SECRETS_KEPT_OUT
def test_keep_secrets_records_them_as_they_are(tmp_path: Path) -> None:
    suite = tmp_path / "kept.json"
    session(
        cli("record", "--keep-secrets", "--out", suite, "--", sys.executable, SECRET_SERVER),
        calls_holding(PASSWORD, KEY, BEARER)[:1],
        tmp_path / "kept.json.journal",
    )
    written = suite.read_text()
    assert PASSWORD in written
    assert KEY in written
    assert SECRET_TOKEN not in written
