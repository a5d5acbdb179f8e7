"""MCP ``CallToolResult`` documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    Draw,
    _integers,
    _json_objects,
    _numbers,
    _obj,
    _text,
    json_values,
)

# --- MCP CallToolResult -------------------------------------------------------------------------

_annotations = _obj(
    {},
    {
        "audience": st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
        "priority": _numbers(0, 1),
        "lastModified": _text(),
    },
    open_values=json_values(1),
)


def _block(kind: str, required: Mapping[str, st.SearchStrategy[Any]], **optional: Any) -> Any:
    return _obj(
        {"type": st.just(kind), **required},
        {"annotations": _annotations, "_meta": _json_objects, **optional},
        open_values=json_values(1),
    )


_resource_members = _obj({"uri": _text(1)}, {"mimeType": _text(), "_meta": _json_objects})


@st.composite
def _resource_contents(draw: Draw) -> dict[str, Any]:
    """Resource contents hold exactly one of ``text`` and ``blob``."""
    contents = draw(_resource_members)
    contents[draw(st.sampled_from(["text", "blob"]))] = draw(_text())
    return contents


content_blocks = st.one_of(
    _block("text", {"text": _text()}),
    _block("image", {"data": _text(), "mimeType": _text(1)}),
    _block("audio", {"data": _text(), "mimeType": _text(1)}),
    _block(
        "resource_link",
        {"uri": _text(1), "name": _text(1)},
        title=_text(),
        description=_text(),
        mimeType=_text(),
        size=_integers(0),
    ),
    _block("resource", {"resource": _resource_contents()}),
)

call_tool_results = _obj(
    {"content": st.lists(content_blocks, max_size=2)},
    {"structuredContent": _json_objects, "_meta": _json_objects, "isError": st.booleans()},
    open_values=json_values(1),
)
