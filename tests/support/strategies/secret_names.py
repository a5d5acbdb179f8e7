"""Names of secrets in every naming style a tool's arguments or an answer use, and names that
only look like them: the classes ``mcp.secrets.is_secret_name`` must tell apart."""

from __future__ import annotations

from hypothesis import strategies as st

SECRET_STEMS = (
    ("password",),
    ("passwd",),
    ("pwd",),
    ("passphrase",),
    ("secret",),
    ("token",),
    ("api", "key"),
    ("api", "token"),
    ("access", "key"),
    ("access", "token"),
    ("refresh", "token"),
    ("private", "key"),
    ("client", "secret"),
    ("auth", "token"),
    ("authorization",),
    ("cookie",),
    ("credentials",),
    ("bearer",),
    ("signing", "key"),
)
"""Words that name a secret, split as a name's words are."""

PREFIXES = ("", "x", "github", "db", "my", "user", "aws", "session", "new", "old")
"""Words a name may start with before its secret's (``X-Api-Key``, ``github_token``)."""

NOT_SECRET_NAMES = (
    "max_tokens",
    "maxTokens",
    "page_token",
    "pageToken",
    "next_page_token",
    "nextPageToken",
    "token_count",
    "tokenCount",
    "password_hint",
    "secret_name",
    "secretName",
    "auth_type",
    "authMethod",
    "key",
    "cache_key",
    "sortKey",
    "author",
    "oauth",
    "tokens",
    "query",
    "path",
    "id",
    "limit",
    "cursor",
    "user",
    "url",
    "Accept",
    "Content-Type",
)
"""Names of parameters that describe or count secrets, or merely contain their letters."""


def _styled(words: list[str], style: str) -> str:
    if style == "snake":
        return "_".join(words)
    if style == "upper":
        return "_".join(words).upper()
    if style == "kebab":
        return "-".join(words)
    if style == "header":
        return "-".join(word.capitalize() for word in words)
    if style == "pascal":
        return "".join(word.capitalize() for word in words)
    if style == "spaced":
        return " ".join(words)
    return words[0] + "".join(word.capitalize() for word in words[1:])  # camel


STYLES = ("snake", "upper", "kebab", "header", "pascal", "camel", "spaced")


@st.composite
def secret_names(draw: st.DrawFn) -> str:
    """A secret's name: an optional prefix word, the secret's words, in one naming style."""
    prefix = draw(st.sampled_from(PREFIXES))
    words = [prefix] if prefix else []
    words += draw(st.sampled_from(SECRET_STEMS))
    return _styled(words, draw(st.sampled_from(STYLES)))


def not_secret_names() -> st.SearchStrategy[str]:
    return st.sampled_from(NOT_SECRET_NAMES)


def secret_values() -> st.SearchStrategy[str | int]:
    """A value no other part of a generated document holds: ``S3cret`` and a random tail, or a
    PIN-like number of 6 to 12 digits."""
    tail = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=8, max_size=16)
    pin = st.integers(10**6, 10**12)
    return st.one_of(tail.map(lambda text: f"S3cret-{text}"), pin)
