"""OpenWOP v2 identifiers (the packaged schemas/common/ids.schema.json)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from support.strategies.mcp import call_tool_results
from support.strategies.values import DIGITS, LOWER, Draw, json_values, objects_of

# --- OpenWOP v2 identifiers (the packaged schemas/common/ids.schema.json) ----------------------

ID_CHARS = LOWER + LOWER.upper() + DIGITS + "._~-"
_opaque_ids = st.text(ID_CHARS, min_size=16, max_size=24)
event_ids = _opaque_ids
run_ids = st.builds("{}/{}".format, st.text(ID_CHARS, min_size=1, max_size=8), _opaque_ids)
author_ids = st.text(ID_CHARS + ":", min_size=1, max_size=12)
"""agentId, workflowId, nodeId: author-chosen, 1 to 128 of ``A-Z a-z 0-9 . _ ~ : -``."""
tenant_ids = st.builds(
    str.__add__, st.sampled_from(["", "anon:"]), st.text(ID_CHARS, min_size=1, max_size=8)
)
_subject_ids = st.text(LOWER + DIGITS + "@:|._-", min_size=1, max_size=12)
_LANES = ("api-key", "oauth2", "oidc", "mtls", "saml", "scim", "ldap", "workload", "session")


@st.composite
def _subjects(draw: Draw, depth: int = 0) -> dict[str, Any]:
    """A run owner's subject: anonymous exactly on the anonymous lane, ``keyClass`` exactly on the
    saml and scim lanes, and an actor chain at most four deep."""
    anonymous = draw(st.booleans())
    lane = "anonymous" if anonymous else draw(st.sampled_from(_LANES))
    kind = "anonymous" if anonymous else draw(st.sampled_from(["user", "agent", "workload"]))
    subject: dict[str, Any] = {
        "issuer": draw(st.text(LOWER + DIGITS + ":/.", min_size=1, max_size=12)),
        "subjectId": draw(_subject_ids),
        "tenant": draw(tenant_ids),
        "lane": lane,
        "kind": kind,
    }
    if lane in ("saml", "scim"):
        subject["keyClass"] = draw(st.sampled_from(["opaque-idp", "configured-immutable"]))
    if depth < 4 and draw(st.integers(0, 3)) == 0:
        subject["actor"] = draw(_subjects(depth + 1))
    return subject


owners = objects_of(
    {"tenant": tenant_ids, "subject": _subjects()},
    {"workspace": st.text(ID_CHARS, min_size=1, max_size=8)},
)

opaque_values = json_values() | call_tool_results
"""Opaque payloads (a fixture response, an outcome): any JSON, often an MCP result."""
