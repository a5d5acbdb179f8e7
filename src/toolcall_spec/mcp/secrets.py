"""Secrets kept out of recordings, and recordings that still match the calls that held them.

``toolcall-spec record`` writes ``redact_secrets`` of every recorded call's arguments and answer
unless told ``--keep-secrets``:

- a value under a secret's name (``password``, ``apiKey``, ``X-Api-Key``, ``client_secret``,
  ``access_token``, ``Authorization``, ``cookie`` ... in any naming style, at any depth) becomes
  ``SECRET_TOKEN``, whatever it is (a string, a number, an object), but for ``null``, booleans
  and ``""``, which hide nothing;
- every other string loses the secrets it spells out (``Bearer ...``, ``sk-...``, ``ghp_...``,
  JWTs, cloud key ids, ``user:pass@`` in a URL: ``analytics.pii.strip_secrets``).

A recorded call then holds ``{"apiKey": "[SECRET_REDACTED]"}``. At replay, ``serve_matching``
first matches the live call's arguments as they are (a suite recorded with ``--keep-secrets``,
or written by hand), then, on a miss, the same arguments through ``redact_secrets``: a live
``{"apiKey": "sk-live-..."}`` becomes the recorded value, whichever key the agent holds that day.

Names, not values, decide most of it, since a password looks like any other word. A name is cut
into words (``x-api-key``, ``apiKey``, ``API_KEY`` -> api, key); it names a secret when one word
is a secret's (``token``, ``password`` ...) or two are (``api key``, ``private key``), unless the
next word says the value only describes one (``token_count``, ``password_hint``) or the word
before makes it a cursor (``page_token``, ``next_page_token``). ``max_tokens`` is a count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolcall_spec.analytics.pii import SECRET_TOKEN, strip_secrets
from toolcall_spec.replay.fixtures import FixtureServer, Miss, Served

SECRET_WORDS = frozenset(
    {
        "apikey",
        "apitoken",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "credential",
        "credentials",
        "passphrase",
        "passwd",
        "password",
        "pwd",
        "secret",
        "secrets",
        "token",
    }
)
"""Words that name a secret alone: ``token``, ``access_token``, ``X-Auth-Token``."""

KEY_WORDS = frozenset({"key", "keys"})
KEY_QUALIFIERS = frozenset(
    {"access", "api", "auth", "client", "encryption", "license", "master", "private", "signing"}
)
"""``key`` alone is any key (of a map, a cache); after one of these it is a secret's."""

DESCRIBING_WORDS = frozenset(
    {
        "count",
        "enabled",
        "endpoint",
        "expires",
        "expiry",
        "field",
        "file",
        "hint",
        "id",
        "length",
        "limit",
        "method",
        "mode",
        "name",
        "path",
        "policy",
        "provider",
        "required",
        "ttl",
        "type",
        "uri",
        "url",
    }
)
"""A word after a secret's that makes the value about the secret, not the secret itself."""

CURSOR_WORDS = frozenset({"page", "continuation", "sync", "pagination"})
"""A word before ``token`` that makes it a cursor to the next page, not a credential."""

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """``name`` cut into lower-case words, whatever its style: ``X-Api-Key``, ``apiKey``,
    ``API_KEY``, ``api key`` -> ``["x", "api", "key"]`` / ``["api", "key"]``."""
    return [word.lower() for word in _WORDS.findall(name)]


def is_secret_name(name: str) -> bool:
    """Whether a value named ``name`` is a secret (see the module's docstring)."""
    words = name_words(name)
    for at, word in enumerate(words):
        before = words[at - 1] if at else ""
        after = words[at + 1] if at + 1 < len(words) else ""
        secret = word in SECRET_WORDS or (word in KEY_WORDS and before in KEY_QUALIFIERS)
        if secret and after not in DESCRIBING_WORDS and before not in CURSOR_WORDS:
            return True
    return False


def hidden(value: Any) -> Any:
    """What a secret's value is recorded as: the token, but for values that hide nothing."""
    if value is None or isinstance(value, bool) or value == "":
        return value
    return SECRET_TOKEN


@dataclass
class _Frame:
    """A container being copied: its entries still to read and what they became."""

    source: Mapping[Any, Any] | list[Any]
    key: Any
    entries: Iterator[tuple[Any, Any]]
    built: list[tuple[Any, Any]] = field(default_factory=list)
    changed: bool = False

    @classmethod
    def of(cls, source: Mapping[Any, Any] | list[Any], key: Any = None) -> _Frame:
        entries = iter(source.items() if isinstance(source, Mapping) else enumerate(source))
        return cls(source, key, entries)

    def add(self, key: Any, old: Any, new: Any) -> None:
        self.built.append((key, new))
        self.changed = self.changed or new is not old

    def result(self) -> Any:
        """The copy, or the container itself when nothing in it changed."""
        if not self.changed:
            return self.source
        if isinstance(self.source, Mapping):
            return dict(self.built)
        return [item for _, item in self.built]


def redact_secrets(value: Any) -> Any:
    """A copy of a JSON value with its secrets replaced by ``SECRET_TOKEN``; ``value`` itself
    when it holds none. Idempotent; iterative, so any depth a JSON parser gives is walked."""
    if not isinstance(value, (Mapping, list)):
        return strip_secrets(value) if isinstance(value, str) else value
    stack = [_Frame.of(value)]
    while True:
        frame = stack[-1]
        for key, child in frame.entries:
            if isinstance(frame.source, Mapping) and isinstance(key, str) and is_secret_name(key):
                frame.add(key, child, hidden(child))
            elif isinstance(child, (Mapping, list)):
                stack.append(_Frame.of(child, key))
                break
            else:
                frame.add(key, child, strip_secrets(child) if isinstance(child, str) else child)
        else:
            stack.pop()
            done = frame.result()
            if not stack:
                return done
            stack[-1].add(frame.key, frame.source, done)


def serve_matching(server: FixtureServer, tool: str, args: Any) -> Served | Miss:
    """``server.serve``, and on a miss the same call with its secrets redacted as ``record``
    redacts them, so a recording without secrets still answers the calls that held them."""
    served = server.serve(tool, args)
    if isinstance(served, Miss):
        redacted = redact_secrets(args)
        if redacted is not args:
            return server.serve(tool, redacted)
    return served
