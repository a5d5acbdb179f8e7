"""Self-contained schemas: every ``$ref`` replaced by the schema it names.

For tools that cannot resolve references across files (or offline), ``toolcall-spec schema
--bundle KIND`` prints the result. A reference with sibling keywords keeps them and moves the
target under ``allOf``, which means the same in draft 2020-12.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from toolcall_spec.catalog import SCHEMA_FILES, Kind, all_schemas


class BundleError(ValueError):
    """A reference that names no packaged schema, or that refers to itself."""


def bundle(kind: Kind) -> dict[str, Any]:
    """The schema of ``kind`` with no ``$ref`` left and no ``$defs`` needed."""
    by_id = {schema["$id"]: schema for schema in all_schemas().values()}
    root = all_schemas()[SCHEMA_FILES[kind]]
    inlined = _inline(root, root["$id"], by_id, ())
    bundled = {key: value for key, value in inlined.items() if key not in ("$defs", "$id")}
    return {
        "$schema": root["$schema"],
        "$comment": f"{root['$id']} with every $ref inlined (toolcall-spec schema --bundle)",
        **{key: value for key, value in bundled.items() if key != "$schema"},
    }


def _inline(node: Any, base: str, by_id: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, base, by_id, seen) for item in node]
    if not isinstance(node, dict):
        return node
    base = urljoin(base, node["$id"]) if isinstance(node.get("$id"), str) else base
    out = {
        key: _inline(value, base, by_id, seen)
        for key, value in node.items()
        if key not in ("$ref", "$id", "$schema")
    }
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return out
    target_url = urljoin(base, ref)
    if target_url in seen:
        raise BundleError(f"{target_url} refers to itself; it cannot be inlined")
    document_url, fragment = urldefrag(target_url)
    target = _resolve(by_id, document_url, fragment)
    resolved = _inline(target, document_url, by_id, (*seen, target_url))
    if isinstance(resolved, dict):
        resolved.pop("$defs", None)
    if not out:
        return resolved
    out["allOf"] = [*out.get("allOf", []), resolved]
    return out


def _resolve(by_id: dict[str, Any], document_url: str, fragment: str) -> Any:
    try:
        target = by_id[document_url]
    except KeyError:
        raise BundleError(f"no packaged schema has the $id {document_url}") from None
    for token in (t for t in fragment.split("/")[1:] if fragment):
        key = unquote(token).replace("~1", "/").replace("~0", "~")
        target = target[int(key)] if isinstance(target, list) else target[key]
    return target
