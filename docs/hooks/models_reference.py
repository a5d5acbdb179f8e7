"""MkDocs hook: the reference page of the generated Pydantic models (``toolcall_spec.models``),
built from the models themselves every time the site is built: one section per schema file, one
table per model (member, JSON name, type, required, description)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from markdown_text import cell, code
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from pydantic import BaseModel

MODELS_URI = "reference/models.md"

_QUALIFIED = re.compile(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_])")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    from toolcall_spec import models  # noqa: PLC0415  (pydantic: only when building)

    classes = [getattr(models, name) for name in models.__all__]
    page = models_page(c for c in classes if isinstance(c, type) and issubclass(c, BaseModel))
    files.append(File.generated(config, MODELS_URI, content=page))
    return files


def models_page(classes: Iterable[type[BaseModel]]) -> str:
    by_module: dict[str, list[type[BaseModel]]] = {}
    for model in classes:
        by_module.setdefault(model.__module__, []).append(model)
    lines = [
        "# Generated models",
        "",
        "`toolcall_spec.models` holds one Pydantic v2 model per schema definition, generated "
        "from `schemas/` by datamodel-code-generator (never edited by hand) and strict like the "
        "schemas: no lax booleans, numbers or strings, no `null` where the schema has none. "
        "Import them from the package: `from toolcall_spec.models import CallToolResult`. "
        "The [schema reference](schemas/index.md) explains every member and rule in words.",
        "",
        "```python",
        "from toolcall_spec.models import CallToolResult",
        "",
        'result = CallToolResult.model_validate_json(\'{"content": [], "isError": true}\')',
        "assert result.isError is True",
        "```",
        "",
    ]
    for module, models in sorted(by_module.items()):
        lines += [f"## {code(module)}", ""]
        for model in sorted(models, key=lambda m: m.__name__):
            lines += _model_section(model)
    return "\n".join(lines)


def _model_section(model: type[BaseModel]) -> list[str]:
    doc = " ".join((model.__doc__ or "").split())
    lines = [f"### {model.__name__}", "", doc, ""] if doc else [f"### {model.__name__}", ""]
    if not model.model_fields:
        return [*lines, f"A value of the form {code(_type_name(model))}.", ""]
    lines += ["| Member | Type | Required | Description |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        member = field.alias or name
        lines.append(
            f"| {code(member)} | {cell(code(_type_name(field.annotation)))} | "
            f"{'yes' if field.is_required() else 'no'} | {cell(field.description or '')} |"
        )
    return [*lines, ""]


def _type_name(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = _QUALIFIED.sub("", text).replace("NoneType", "None")
    return re.sub(r"Union\[(.+), MISSING\]", r"\1", text)
