"""MCP ``CallToolResult`` documents."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from support.strategies.values import (
    Draw,
    free_text,
    json_integers,
    json_numbers,
    json_objects,
    json_values,
    objects_of,
)

# --- MCP CallToolResult -------------------------------------------------------------------------

_annotations = objects_of(
    {},
    {
        "audience": st.lists(st.sampled_from(["user", "assistant"]), max_size=2),
        "priority": json_numbers(0, 1),
        "lastModified": free_text(),
    },
    open_values=json_values(1),
)


def _block(kind: str, required: Mapping[str, st.SearchStrategy[Any]], **optional: Any) -> Any:
    return objects_of(
        {"type": st.just(kind), **required},
        {"annotations": _annotations, "_meta": json_objects, **optional},
        open_values=json_values(1),
    )


_resource_members = objects_of(
    {"uri": free_text(1)}, {"mimeType": free_text(), "_meta": json_objects}
)


@st.composite
def _resource_contents(draw: Draw) -> dict[str, Any]:
    """Resource contents hold exactly one of ``text`` and ``blob``."""
    contents = draw(_resource_members)
    contents[draw(st.sampled_from(["text", "blob"]))] = draw(free_text())
    return contents


content_blocks = st.one_of(
    _block("text", {"text": free_text()}),
    _block("image", {"data": free_text(), "mimeType": free_text(1)}),
    _block("audio", {"data": free_text(), "mimeType": free_text(1)}),
    _block(
        "resource_link",
        {"uri": free_text(1), "name": free_text(1)},
        title=free_text(),
        description=free_text(),
        mimeType=free_text(),
        size=json_integers(0),
    ),
    _block("resource", {"resource": _resource_contents()}),
)

call_tool_results = objects_of(
    {"content": st.lists(content_blocks, max_size=2)},
    {"structuredContent": json_objects, "_meta": json_objects, "isError": st.booleans()},
    open_values=json_values(1),
)
