"""Reference pages for the JSON Schemas, rendered at build time from the packaged schema files.

One page per schema file: every member with its type, constraints and description, every
object-level rule (required, dependentRequired, members that never appear together, if/then/else,
oneOf/allOf), and the examples of that kind with what ``toolcall-spec validate`` reports for them.

Nothing is dropped silently: a keyword this renderer has no prose for is shown as raw JSON and
recorded in ``SchemaPage.fallbacks``; the build turns each into a warning (so ``--strict`` fails)
until the renderer learns it.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_runs import run_cli
from markdown_text import cell, code, fenced, json_value

SCHEMA_PAGES_DIR = "reference/schemas"
SCHEMA_SUFFIX = ".schema.json"

FAMILY_TITLES = {
    "analytics": "Analytics",
    "capabilities": "Capabilities",
    "common": "Common",
    "events": "Events",
    "mcp": "MCP",
    "suites": "Suites",
}

ANNOTATIONS = frozenset({"title", "description", "$schema", "$id", "$comment", "examples"})
"""Keywords that carry no constraint; ``description`` and ``title`` are rendered as text."""

Schema = Mapping[str, Any] | bool


@dataclass(frozen=True, slots=True)
class Example:
    """One entry of examples/index.json, with the output of ``toolcall-spec validate`` for it."""

    file: str
    kind: str
    valid: bool
    title: str
    description: str
    text: str
    command: str
    output: str
    exit_code: int
    error_paths: tuple[str, ...] = ()
    warning_paths: tuple[str, ...] = ()


def load_examples(root: Path) -> list[Example]:
    """Every example of ``root/examples/index.json``, with what ``toolcall-spec validate``
    reports for it, run in process now."""
    manifest = json.loads((root / "examples" / "index.json").read_text(encoding="utf-8"))
    found = []
    for entry in manifest["examples"]:
        shown = f"examples/{entry['file']}"
        run = run_cli(["validate", shown], root)
        found.append(
            Example(
                file=entry["file"],
                kind=entry["kind"],
                valid=entry["valid"],
                title=entry.get("title", entry["file"]),
                description=entry.get("description", ""),
                text=(root / shown).read_text(encoding="utf-8"),
                command=run.command,
                output=run.output,
                exit_code=run.exit_code,
                error_paths=tuple(entry.get("errorPaths", ())),
                warning_paths=tuple(entry.get("warningPaths", ())),
            )
        )
    return found


def page_uri(schema_path: str) -> str:
    """``suites/x.schema.json`` -> ``reference/schemas/suites/x.md``."""
    return f"{SCHEMA_PAGES_DIR}/{schema_path.removesuffix(SCHEMA_SUFFIX)}.md"


def family_title(family: str) -> str:
    return FAMILY_TITLES.get(family, family.replace("-", " ").capitalize())


@dataclass
class SchemaPage:
    """Renders one schema file. ``fallbacks`` lists what was shown as raw JSON, by location."""

    path: str
    schemas: Mapping[str, Mapping[str, Any]]
    fallbacks: list[str] = field(default_factory=list)

    @property
    def schema(self) -> Mapping[str, Any]:
        return self.schemas[self.path]

    # -- the page ---------------------------------------------------------------------------

    def render(self, kind: str | None, examples: Sequence[Example]) -> str:
        schema = self.schema
        title = schema.get("title", self.path)
        lines = [f"# {title}", ""]
        if "description" in schema:
            lines += [schema["description"], ""]
        lines += self._facts(kind)
        body = {k: v for k, v in schema.items() if k != "$defs"}
        if _has_constraints(body):
            lines += ["## The document {#document}", ""]
            lines += self._definition(body, "(root)")
        elif not schema.get("$defs"):
            lines += ["This file declares no constraint.", ""]
        else:
            lines += ["This file holds only definitions, shared by other schemas.", ""]
        definitions = schema.get("$defs", {})
        if definitions:
            lines += ["## Definitions", ""]
            for name, sub in definitions.items():
                lines += [f"### `{name}` {{#{name}}}", ""]
                lines += self._definition(sub, f"$defs/{name}")
        if examples:
            lines += ["## Examples", ""]
            for example in examples:
                lines += _example(example)
        lines += [
            "## Schema source",
            "",
            f'??? note "`schemas/{self.path}`, as packaged"',
            "",
            fenced(json.dumps(schema, indent=2, ensure_ascii=False), "json", indent="    "),
            "",
        ]
        return "\n".join(lines)

    def _facts(self, kind: str | None) -> list[str]:
        schema = self.schema
        rows = [
            ("File", code(f"schemas/{self.path}")),
            ("`$id`", code(schema.get("$id", "(none)"))),
            ("Dialect", code(schema.get("$schema", "(none)"))),
        ]
        if kind is not None:
            rows.append(
                (
                    "Document kind",
                    f"{code(kind)}: `toolcall-spec validate --kind {kind} FILE`, "
                    f"`toolcall-spec schema {kind}`",
                )
            )
        return ["| | |", "| --- | --- |", *[f"| {k} | {v} |" for k, v in rows], ""]

    def _definition(self, schema: Schema, where: str) -> list[str]:
        if isinstance(schema, bool):
            return [f"**Type:** {self.type_of(schema, where)}", ""]
        lines: list[str] = []
        if "description" in schema and where != "(root)":
            lines += [schema["description"], ""]
        if _is_object(schema):
            lines += [self._openness(schema, where), ""]
            rows = list(self._member_rows(schema, "", where))
            if rows:
                lines += [
                    "| Member | Type | Required | Constraints | Description |",
                    "| --- | --- | --- | --- | --- |",
                    *rows,
                    "",
                ]
            rules = self.rules(schema, where) + self._unknown(schema, where)
            named = schema.get("properties", {})
            rules += [
                f"{code(n)} is required." for n in schema.get("required", []) if n not in named
            ]
            if rules:
                lines += ["**Rules:**", "", *[f"- {rule}" for rule in rules], ""]
            return lines
        constraints = self.constraints(schema, where) + self.rules(schema, where)
        lines.append(f"**Type:** {self.type_of(schema, where)}")
        if constraints:
            lines[-1] += "<br>**Constraints:** " + "; ".join(constraints)
        return [*lines, ""]

    # -- members ----------------------------------------------------------------------------

    def _member_rows(self, schema: Mapping[str, Any], prefix: str, where: str) -> Iterable[str]:
        required = set(schema.get("required", []))
        for name, sub in schema.get("properties", {}).items():
            here = f"{where}.{name}"
            described = sub.get("description", "") if isinstance(sub, Mapping) else ""
            constraints = self.constraints(sub, here)
            nested = _nested_object(sub)
            if nested is not None:
                constraints.append(f"members below ({self._openness(nested, here, short=True)})")
            constraints += self.rules(sub, here)
            yield (
                f"| {code(prefix + name)} | {self.type_of(sub, here)} | "
                f"{'required' if name in required else 'optional'} | "
                f"{cell('; '.join(constraints)) or '—'} | {cell(described) or '—'} |"
            )
            if nested is not None:
                inner = f"{prefix}{name}{'' if nested is sub else '[]'}."
                yield from self._member_rows(nested, inner, here)

    def _openness(self, schema: Mapping[str, Any], where: str, *, short: bool = False) -> str:
        """Whether the object accepts members it does not list: a sentence, or a short phrase
        for a table cell."""
        extra = schema.get("additionalProperties", True)
        patterns = schema.get("patternProperties", {})
        named = ", ".join(
            code(pattern) + ("" if _is_any(sub) else f" (each {self.type_of(sub, where)})")
            for pattern, sub in patterns.items()
        )
        if short:
            phrase = (
                "closed"
                if extra is False
                else "open"
                if _is_any(extra)
                else f"other members: {self.type_of(extra, where)}"
            )
            return f"{phrase}, names matching {named} allowed" if named else phrase
        hatch = f" Members whose names match {named} are allowed too." if named else ""
        if extra is False:
            return f"Closed: a member not listed here makes the document invalid.{hatch}"
        if _is_any(extra):
            return f"Open: members not listed here are allowed, with any value.{hatch}"
        return f"Any member not listed here must be {self.type_of(extra, where)}.{hatch}"

    # -- types and constraints --------------------------------------------------------------

    def type_of(self, schema: Schema, where: str) -> str:
        if schema is False:
            return "nothing (the member is not allowed)"
        if schema is True or _is_any(schema):
            return "any JSON value"
        assert isinstance(schema, Mapping)
        if "$ref" in schema:
            return self.ref_link(schema["$ref"], where)
        if "const" in schema:
            return f"the constant {json_value(schema['const'])}"
        for combinator, word in (("oneOf", "exactly one of"), ("anyOf", "any of")):
            branches = schema.get(combinator, [])
            if branches and all(isinstance(b, Mapping) and "$ref" in b for b in branches):
                return f"{word}: " + ", ".join(self.ref_link(b["$ref"], where) for b in branches)
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items")
            return "array" if items is None else f"array of {self.type_of(items, where)}"
        if isinstance(kind, list):
            return " or ".join(kind)
        if isinstance(kind, str):
            return kind
        return "any JSON value, constrained below"

    def constraints(self, schema: Schema, where: str) -> list[str]:
        """Every constraint of ``schema`` that is not its type or an object-level rule."""
        if isinstance(schema, bool):
            return []
        out: list[str] = []
        if "enum" in schema:
            out.append("one of " + ", ".join(json_value(v) for v in schema["enum"]))
        if "pattern" in schema:
            out.append(f"matches {code(schema['pattern'])}")
        if "format" in schema:
            out.append(f"format {code(schema['format'])}")
        out += _range(schema, "minLength", "maxLength", "length")
        out += _bounds(schema)
        out += _range(schema, "minItems", "maxItems", "items")
        out += _range(schema, "minProperties", "maxProperties", "members")
        names = schema.get("propertyNames")
        if isinstance(names, Mapping) and set(names) == {"pattern"}:
            out.append(f"member names match {code(names['pattern'])}")
        if schema.get("uniqueItems") is True:
            out.append("no duplicate items")
        if "default" in schema:
            out.append(f"default {json_value(schema['default'])}")
        items = schema.get("items")
        if isinstance(items, Mapping) and "$ref" not in items and "properties" not in items:
            inner = self.constraints(items, f"{where}[]") + self.rules(items, f"{where}[]")
            out += [f"each item: {c}" for c in inner]
        if _is_object(schema) and "properties" not in schema and where != "(root)":
            out.append(self._openness(schema, where, short=True))
        out += self._unknown(schema, where)
        return out

    def _unknown(self, schema: Mapping[str, Any], where: str) -> list[str]:
        unknown = {k: v for k, v in schema.items() if k not in HANDLED}
        if not unknown:
            return []
        self.fallbacks.append(f"{self.path} {where}: {', '.join(sorted(unknown))}")
        return [f"also {code(json.dumps(unknown, ensure_ascii=False))}"]

    def ref_link(self, ref: str, where: str) -> str:
        target, _, fragment = ref.partition("#")
        target_path = (
            self.path
            if not target
            else posixpath.normpath(posixpath.join(posixpath.dirname(self.path), target))
        )
        name = fragment.removeprefix("/$defs/") if fragment.startswith("/$defs/") else None
        document = self.schemas.get(target_path)
        if document is None or (
            fragment and (name is None or name not in document.get("$defs", {}))
        ):
            self.fallbacks.append(f"{self.path} {where}: unresolved $ref {ref}")
            return code(ref)
        label = document["$defs"][name].get("title", name) if name else document.get("title")
        if target_path == self.path:
            href = f"#{name}" if name else "#document"
        else:
            href = posixpath.relpath(page_uri(target_path), posixpath.dirname(page_uri(self.path)))
            href += f"#{name}" if name else ""
        return f"[`{label or target_path}`]({href})"

    # -- object-level rules -----------------------------------------------------------------

    def rules(self, schema: Schema, where: str) -> list[str]:
        """Sentences for the rules that tie members together."""
        if isinstance(schema, bool):
            return []
        out: list[str] = []
        for member, needs in schema.get("dependentRequired", {}).items():
            out.append(f"When {code(member)} is present, {_and(needs)} must be present too.")
        if "not" in schema:
            out.append(self._negation(schema["not"], where))
        if "if" in schema:
            out.append(self._conditional(schema, where))
        for item in schema.get("allOf", []):
            if isinstance(item, Mapping) and set(item) - ANNOTATIONS == {"$ref"}:
                link = self.ref_link(item["$ref"], where)
                out.append(f"Also a {link}: its members and rules apply too.")
            else:
                out += self.rules(item, where) + self.constraints(item, where)
        for combinator, word in (("oneOf", "Exactly one"), ("anyOf", "At least one")):
            branches = schema.get(combinator, [])
            if branches and all(isinstance(b, Mapping) and "$ref" in b for b in branches):
                continue  # rendered as the type
            if branches and all(_only_required(b) for b in branches):
                groups = ", ".join(_and(b["required"]) for b in branches)
                out.append(f"{word} of these is present: {groups}.")
            elif branches:
                out.append(self._raw(combinator, branches, where))
        return out

    def _negation(self, negated: Schema, where: str) -> str:
        if _only_required(negated):
            assert isinstance(negated, Mapping)
            return f"{_and(negated['required'])} never appear together."
        if not isinstance(negated, Mapping):
            return self._raw("not", negated, where)
        branches = negated.get("anyOf", [])
        if branches and set(negated) == {"anyOf"} and all(_is_shape(b) for b in branches):
            shapes = "; ".join(self._shape(b, where) for b in branches)
            return f"It must not match any of these shapes: {shapes}."
        return self._raw("not", negated, where)

    def _shape(self, shape: Mapping[str, Any], where: str) -> str:
        """An object shape in words: its required members, each with its type and constraints."""
        members = []
        for name in shape["required"]:
            sub = shape.get("properties", {}).get(name, {})
            detail = "; ".join(self.constraints(sub, f"{where}.{name}"))
            kind = self.type_of(sub, where)
            members.append(f"{code(name)} {kind}" + (f" ({detail})" if detail else ""))
        others = [n for n in shape.get("properties", {}) if n not in shape["required"]]
        closed = shape.get("additionalProperties") is False
        tail = f", optionally {_and(others)}" if others else ""
        return f"{' and '.join(members)}{tail}" + (" and nothing else" if closed else "")

    def _conditional(self, schema: Mapping[str, Any], where: str) -> str:
        condition = self._condition(schema["if"], where)
        sentence = f"If {condition}: {self._consequence(schema.get('then', True), where)}."
        if "else" in schema:
            sentence += f" Otherwise: {self._consequence(schema['else'], where)}."
        return sentence

    def _condition(self, condition: Schema, where: str) -> str:
        if not isinstance(condition, Mapping) or set(condition) - {"properties", "required"}:
            return self._raw("if", condition, where)
        required = list(condition.get("required", []))
        parts = []
        tested = condition.get("properties", {})
        for name, sub in tested.items():
            if isinstance(sub, Mapping) and set(sub) == {"const"}:
                test = f"is {json_value(sub['const'])}"
            elif isinstance(sub, Mapping) and set(sub) == {"enum"}:
                test = "is one of " + ", ".join(json_value(v) for v in sub["enum"])
            else:
                test = "matches " + self._raw("if", sub, where)
            parts.append(
                f"{code(name)} {test}" if name in required else f"{code(name)} is absent or {test}"
            )
        parts += [f"{code(name)} is present" for name in required if name not in tested]
        return " and ".join(parts) or "always"

    def _consequence(self, consequence: Schema, where: str) -> str:
        if consequence is True:
            return "nothing more"
        if consequence is False:
            return "the document is invalid"
        assert isinstance(consequence, Mapping)
        parts = []
        if "required" in consequence:
            verb = "is" if len(consequence["required"]) == 1 else "are"
            parts.append(f"{_and(consequence['required'])} {verb} required")
        for name, sub in consequence.get("properties", {}).items():
            if sub is False:
                parts.append(f"{code(name)} is not allowed")
            else:
                detail = self.constraints(sub, f"{where}.{name}")
                extra = f" ({'; '.join(detail)})" if detail else ""
                parts.append(f"{code(name)} must be {self.type_of(sub, where)}{extra}")
        rest = {k: v for k, v in consequence.items() if k not in ("required", "properties")}
        if rest:
            parts += self.rules(rest, where) + self.constraints(rest, where)
        return ", ".join(parts) or "nothing more"

    def _raw(self, keyword: str, value: Any, where: str) -> str:
        self.fallbacks.append(f"{self.path} {where}: {keyword} shown as raw JSON")
        return f"{code(keyword)}: {code(json.dumps(value, ensure_ascii=False))}"


HANDLED = ANNOTATIONS | {
    "$defs",
    "$ref",
    "type",
    "const",
    "enum",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "uniqueItems",
    "default",
    "items",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "dependentRequired",
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "oneOf",
    "anyOf",
}
"""Every keyword the renderer turns into prose; anything else becomes a fallback."""


def _is_object(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def _nested_object(schema: Schema) -> Mapping[str, Any] | None:
    """The inline object whose members are listed under a member: the member itself, or the
    items of an array member."""
    if not isinstance(schema, Mapping):
        return None
    if "properties" in schema:
        return schema
    items = schema.get("items")
    if isinstance(items, Mapping) and "properties" in items:
        return items
    return None


def _is_shape(schema: Schema) -> bool:
    """An object shape: required members, their schemas, and whether others are allowed."""
    allowed = {"required", "properties", "additionalProperties"}
    return isinstance(schema, Mapping) and "required" in schema and set(schema) <= allowed


def _is_any(schema: Schema) -> bool:
    return schema is True or (isinstance(schema, Mapping) and not set(schema) - ANNOTATIONS)


def _has_constraints(schema: Mapping[str, Any]) -> bool:
    return bool(set(schema) - ANNOTATIONS)


def _only_required(schema: Schema) -> bool:
    return isinstance(schema, Mapping) and set(schema) == {"required"}


def _and(names: Sequence[str]) -> str:
    quoted = [code(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _range(schema: Mapping[str, Any], low: str, high: str, noun: str) -> list[str]:
    if low in schema and high in schema:
        return [f"{noun} {schema[low]} to {schema[high]}"]
    if low in schema:
        return [f"{noun} at least {schema[low]}"]
    if high in schema:
        return [f"{noun} at most {schema[high]}"]
    return []


def _bounds(schema: Mapping[str, Any]) -> list[str]:
    words = {
        "minimum": "at least",
        "exclusiveMinimum": "more than",
        "maximum": "at most",
        "exclusiveMaximum": "less than",
    }
    return [f"{word} {schema[key]}" for key, word in words.items() if key in schema]


def _example(example: Example) -> list[str]:
    verdict = "valid" if example.valid else "invalid"
    marker = ":material-check-circle:" if example.valid else ":material-close-circle:"
    language = "json" if example.file.endswith(".json") else "text"
    lines = [
        f"### {example.title}",
        "",
        f"{marker} **{verdict}** · `examples/{example.file}`",
        "",
        example.description,
        "",
    ]
    expected = [*example.error_paths, *example.warning_paths]
    if expected:
        named = ", ".join(code(p) for p in expected)
        lines += [f"The problems are expected at {named}.", ""]
    lines += [
        fenced(example.text, language),
        "",
        f"What `toolcall-spec validate` reports (exit status {example.exit_code}):",
        "",
        fenced(f"$ {example.command}\n{example.output}", "console"),
        "",
    ]
    return lines


def index_page(
    schemas: Mapping[str, Mapping[str, Any]], kinds: Mapping[str, str], examples: Mapping[str, int]
) -> str:
    """The schema reference landing page: every schema file by family, with its document kind
    (``kinds`` maps a schema path to its kind) and how many examples its page shows."""
    lines = [
        "# Schemas",
        "",
        "The JSON Schemas (draft 2020-12) are the source of truth of this package: the validator, "
        "the generated Pydantic models and these pages all come from them. Each page below is "
        "rendered from the packaged schema file when the site is built, with the examples of its "
        "kind and what `toolcall-spec validate` reports for each.",
        "",
        "`toolcall-spec schema` lists the packaged schemas; `toolcall-spec schema KIND` prints "
        "one.",
        "",
    ]
    families: dict[str, list[str]] = {}
    for path in schemas:
        families.setdefault(path.split("/", 1)[0], []).append(path)
    for family, paths in families.items():
        lines += [
            f"## {family_title(family)}",
            "",
            "| Schema | Kind | Examples | What it describes |",
            "| --- | --- | --- | --- |",
        ]
        for path in paths:
            schema = schemas[path]
            href = posixpath.relpath(page_uri(path), SCHEMA_PAGES_DIR)
            kind = code(kinds[path]) if path in kinds else "(shared definitions)"
            summary = cell(_first_sentence(schema.get("description", "")))
            title = schema.get("title", path)
            lines.append(f"| [`{title}`]({href}) | {kind} | {examples.get(path, 0)} | {summary} |")
        lines.append("")
    return "\n".join(lines)


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + dot.strip()
