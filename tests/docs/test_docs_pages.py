"""The pages the docs build generates: the schema reference, the requirement matrix, the CLI
reference, the Python API list and command output in pages. Each is checked against the data it
is generated from (the schemas, examples/index.json, the registry, the parser), never against a
copy of its own output."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.repo import EXAMPLES, REPO

from toolcall_spec.catalog import SCHEMA_FILES, all_schemas
from toolcall_spec.requirement_registry import Requirement, Witness, find_witnesses, registry

sys.path.insert(0, str(REPO / "docs" / "hooks"))  # the docs build's modules, as mkdocs loads them
import api_pages
import cli_reference
import cli_runs
import requirement_matrix
import schema_reference

# -- the schema reference ---------------------------------------------------------------------


def _render(path: str, schemas: Mapping[str, Any] | None = None) -> tuple[str, list[str]]:
    page = schema_reference.SchemaPage(path, schemas or all_schemas())
    return page.render(None, []), page.fallbacks


def _members(schema: Any, prefix: str = "") -> Iterator[str]:
    """Every member name a page must list, nested inline objects as ``parent.child``."""
    if not isinstance(schema, dict):
        return
    for name, sub in schema.get("properties", {}).items():
        yield prefix + name
        if isinstance(sub, dict):
            items = sub.get("items")
            if "properties" in sub:
                yield from _members(sub, f"{prefix}{name}.")
            elif isinstance(items, dict) and "properties" in items:
                yield from _members(items, f"{prefix}{name}[].")
    for sub in schema.get("$defs", {}).values():
        yield from _members(sub)


def _values(schema: Any, keyword: str) -> Iterator[Any]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == keyword:
                yield value
            yield from _values(value, keyword)
    elif isinstance(schema, list):
        for item in schema:
            yield from _values(item, keyword)


def _without_source(page: str) -> str:
    """The page minus its collapsed copy of the schema file, which would mention everything."""
    return page.split("## Schema source", 1)[0]


@pytest.mark.parametrize("path", sorted(all_schemas()))
def test_every_schema_renders_in_prose_without_fallback(path: str) -> None:
    _, fallbacks = _render(path)
    assert fallbacks == []


@pytest.mark.parametrize("path", sorted(all_schemas()))
def test_every_member_enum_value_pattern_and_bound_is_on_the_page(path: str) -> None:
    schema = all_schemas()[path]
    page = _without_source(_render(path)[0])
    rows = set(re.findall(r"^\| `([^`]+)` \|", page, re.MULTILINE))
    assert set(_members(schema)) <= rows
    for enum in _values(schema, "enum"):
        for value in enum:
            assert f"`{json.dumps(value)}`" in page
    for pattern in _values(schema, "pattern"):
        assert f"`{pattern}`" in page
    for keyword in ("minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum"):
        for bound in _values(schema, keyword):
            assert re.search(rf"(?<![\w.-]){re.escape(str(bound))}(?![\w.])", page), (
                keyword,
                bound,
            )
    for name in schema.get("$defs", {}):
        assert f"### `{name}` {{#{name}}}" in page


def test_object_rules_are_stated_in_words() -> None:
    suite = _render("suites/agent-eval-suite.schema.json")[0]
    assert "When `argsMatch` is present, `args` must be present too." in suite
    event = _render("analytics/tool-call-event.schema.json")[0]
    assert (
        'If `status` is `"error"`: `error_category` is required. Otherwise: '
        "`error_category` is not allowed, `error_message` is not allowed." in event
    )
    payloads = _render("events/run-event-payloads.schema.json")[0]
    assert "`error` and `outcome` never appear together." in payloads
    assert (
        'If `status` is one of `"forbidden"`, `"rate_limited"`: `durationMs` is not allowed.'
        in (payloads)
    )
    result = _render("mcp/call-tool-result.schema.json")[0]
    assert "Exactly one of these is present: `text`, `blob`." in result
    assert "exactly one of: [`TextContent`](#TextContent)" in result
    discovery = _render("capabilities/discovery.schema.json")[0]
    assert "| `memory` | [`CapabilityRecord`](#CapabilityRecord) | optional |" in discovery
    assert "Also a [`RecordLifetime`](#RecordLifetime): its members and rules apply" in discovery
    assert 'If `status` is `"stable"`: `until` is not allowed.' in discovery
    events = _render("events/run-event.schema.json")[0]
    assert (
        'If `type` is `"agent.tool-returned"`: `payload` must be '
        "[`AgentToolReturned`](run-event-payloads.md#AgentToolReturned)" in events
    )


def test_references_link_to_the_page_and_definition_they_name() -> None:
    event = _render("analytics/tool-call-event.schema.json")[0]
    assert "[`Timestamp`](../common/formats.md#Timestamp)" in event
    batch = _render("analytics/ingest-batch.schema.json")[0]
    assert "array of [`ToolCallEvent`](tool-call-event.md)" in batch


PLANTED = {
    "planted/x.schema.json": {
        "$id": "https://example.invalid/x.schema.json",
        "title": "Planted",
        "type": "object",
        "additionalProperties": False,
        "unevaluatedProperties": False,
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "object", "dependentSchemas": {"c": {"required": ["d"]}}},
            "e": {"$ref": "#/$defs/Missing"},
        },
        "dependentRequired": {"a": ["b"]},
        "not": {"anyOf": [{"required": ["a"], "maxProperties": 3}]},
    }
}


def test_a_keyword_without_prose_is_shown_raw_and_reported_never_dropped() -> None:
    page, fallbacks = _render("planted/x.schema.json", PLANTED)
    reported = " ".join(fallbacks)
    for keyword in ("unevaluatedProperties", "dependentSchemas", "not", "Missing"):
        assert keyword in reported
    assert '"unevaluatedProperties": false' in _without_source(page)
    assert '"dependentSchemas"' in _without_source(page)
    assert "When `a` is present, `b` must be present too." in page


def _manifest() -> list[dict[str, Any]]:
    return list(json.loads((EXAMPLES / "index.json").read_text(encoding="utf-8"))["examples"])


def test_each_example_is_shown_on_its_kind_with_what_validate_reports() -> None:
    examples = schema_reference.load_examples(REPO)
    assert [e.file for e in examples] == [entry["file"] for entry in _manifest()]
    for entry, example in zip(_manifest(), examples, strict=True):
        path = SCHEMA_FILES[entry["kind"]]
        page = schema_reference.SchemaPage(path, all_schemas()).render(entry["kind"], [example])
        examples_part = page.split("## Examples", 1)[1]
        assert entry["title"] in examples_part
        assert (EXAMPLES / entry["file"]).read_text(encoding="utf-8").strip() in examples_part
        assert f"$ toolcall-spec validate examples/{entry['file']}" in examples_part
        assert f"(exit status {0 if entry['valid'] else 1})" in examples_part
        for problem_path in entry.get("errorPaths", []) + entry.get("warningPaths", []):
            # JSONL problems are named "N:path" in the manifest and "FILE:N: path" by the CLI.
            line, _, member = problem_path.rpartition(":")
            located = f"{entry['file']}:{line}: {member}:" if line else f": {member}:"
            assert located in examples_part, (entry["file"], problem_path)
        assert str(REPO) not in examples_part


def test_the_index_lists_every_schema_with_its_kind() -> None:
    kinds = {path: kind for kind, path in SCHEMA_FILES.items()}
    page = schema_reference.index_page(all_schemas(), kinds, {})
    for path, schema in all_schemas().items():
        href = schema_reference.page_uri(path).removeprefix("reference/schemas/")
        assert f"[`{schema['title']}`]({href})" in page
    for kind in SCHEMA_FILES:
        assert f"`{kind}`" in page


# -- the requirement matrix -------------------------------------------------------------------


def test_matrix_links_each_requirement_both_ways_and_lists_its_witnesses() -> None:
    requirements = [
        Requirement("toolcall-spec.requirement.a.one", "MUST", "First.", "src A", "a.md"),
        Requirement(
            "toolcall-spec.requirement.a.two", "SHOULD", "Second | piped.", "src B", "a.md"
        ),
        Requirement("toolcall-spec.requirement.b.three", "MAY", "Third.", "src C", "b.md"),
    ]
    witnesses = [
        Witness("toolcall-spec.requirement.a.one", "tests/test_z.py::test_late", 9),
        Witness("toolcall-spec.requirement.a.one", "tests/test_a.py::test_early", 3),
        Witness("toolcall-spec.requirement.b.three", "tests/test_b.py::test_b", 1),
    ]
    page = requirement_matrix.matrix_page(requirements, witnesses, {"a.md": "Page A"})
    rows = {line.split("</a>")[0]: line for line in page.splitlines() if line.startswith("| <a")}
    one = rows['| <a id="toolcall-spec.requirement.a.one">']
    assert "](../spec/a.md#toolcall-spec.requirement.a.one)" in one
    assert "<code>toolcall-spec.<wbr>requirement.<wbr>a.<wbr>one</code>" in one
    early, late = "tests/<wbr>test_a.py::<wbr>test_early", "tests/<wbr>test_z.py::<wbr>test_late"
    assert f"<code>{early}</code><br><code>{late}</code>" in one
    two = rows['| <a id="toolcall-spec.requirement.a.two">']
    assert "**none yet**" in two
    assert "Second \\| piped." in two
    assert "<br>**SHOULD** · src B |" in two
    assert "## Page A" in page
    assert "## b.md" in page
    assert "**3 requirements** (1 MUST, 1 SHOULD, 1 MAY); **2** witnessed" in page
    assert "    - [`toolcall-spec.requirement.a.two`](#toolcall-spec.requirement.a.two)" in page


def test_the_real_matrix_shows_every_registry_id_with_every_witness() -> None:
    witnesses = find_witnesses(REPO / "tests")
    page = requirement_matrix.matrix_page(registry().values(), witnesses, {})
    for rid, requirement in registry().items():
        row = next(line for line in page.splitlines() if line.startswith(f'| <a id="{rid}">'))
        assert f"../spec/{requirement.page}#{rid}" in row
        shown = row.replace("<wbr>", "").replace("&lt;", "<").replace("&gt;", ">")
        for witness in witnesses:
            if witness.requirement_id == rid:
                assert f"<code>{witness.test}</code>" in shown


# -- the CLI reference ------------------------------------------------------------------------


def _planted_parser() -> tuple[argparse.ArgumentParser, dict[str, ModuleType]]:
    parser = argparse.ArgumentParser(prog="tool", description="A planted program.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    frob = commands.add_parser("frobnicate", help="frobnicate some files")
    frob.add_argument("files", nargs="+", metavar="FILE", help="the files")
    frob.add_argument("--level", choices=("low", "high"), default="low", help="how hard")
    frob.add_argument("--name", required=True, help="who asks (%(default)s when unset)")
    module = ModuleType("frob_cmd", "``tool frobnicate``.\n\nExit 0 when frobnicated.")
    return parser, {"frobnicate": module}


def test_a_new_subcommand_gets_its_section_without_editing_the_docs() -> None:
    page = cli_reference.cli_page(*_planted_parser())
    assert "[`frobnicate`](#frobnicate) | Frobnicate some files. |" in page
    assert "## `tool frobnicate` {#frobnicate}" in page
    assert "Exit 0 when frobnicated." in page
    assert "``tool frobnicate``." not in page
    assert "usage: tool frobnicate [-h] [--level {low,high}] --name NAME FILE [FILE ...]" in page
    assert "| `FILE` | The files. Repeatable. |" in page
    assert "| `--level LEVEL` | How hard. One of `low`, `high`. Default: `low`. |" in page
    assert "| `--name NAME` | Who asks (None when unset). Required. |" in page


def test_every_real_subcommand_and_option_is_documented() -> None:
    from toolcall_spec.cli import build_parser

    parser, handlers = build_parser()
    page = cli_reference.cli_page(parser, handlers)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(handlers) == set(subparsers.choices)
    for name, subparser in subparsers.choices.items():
        section = page.split(f"## `toolcall-spec {name}` {{#{name}}}", 1)[1].split("\n## ", 1)[0]
        assert "exit status:\n  0  success" in section, name
        for action in subparser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings or [str(action.metavar or action.dest)]:
                assert f"`{option}" in section, (name, option)


# -- the Python API pages ---------------------------------------------------------------------


def test_api_pages_follow_the_package_core_first_without_importing(tmp_path: Path) -> None:
    (tmp_path / "zeta.py").write_text('"""Zeta things.\n\nMore."""\n')
    (tmp_path / "rules.py").write_text('"""The rules."""\nimport not_installed_anywhere\n')
    (tmp_path / "_private.py").write_text('"""Hidden."""\n')
    for package, doc in (("models", "Generated."), ("cli", "CLI."), ("newpkg", "A new package.")):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f'"""{doc}"""\n')
    modules = api_pages.discover(tmp_path)
    assert [(m.name, m.summary) for m in modules] == [
        ("rules", "The rules."),
        ("newpkg", "A new package."),
        ("zeta", "Zeta things."),
    ]
    assert (
        api_pages.module_page(modules[1])
        == "# `toolcall_spec.newpkg`\n\n::: toolcall_spec.newpkg\n"
    )
    index = api_pages.index_page(modules)
    assert "| [`toolcall_spec.zeta`](zeta.md) | Zeta things. |" in index


def test_every_real_public_module_gets_a_page() -> None:
    import toolcall_spec

    package_dir = Path(toolcall_spec.__file__).parent
    names = [m.name for m in api_pages.discover(package_dir)]
    assert names[:3] == ["rules", "validation", "problems"]
    public = {
        p.stem if p.is_file() else p.name
        for p in package_dir.iterdir()
        if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }
    assert set(names) == public - api_pages.EXCLUDED


# -- command output in pages ------------------------------------------------------------------


def test_a_run_directive_becomes_the_real_command_and_output() -> None:
    entry = next(e for e in _manifest() if e["file"] == "suites/rfc0245-string-iserror.json")
    page = f"Before.\n\n<!-- run: toolcall-spec validate examples/{entry['file']} -->\n\nAfter.\n"
    expanded = cli_runs.expand(page, REPO)
    assert "<!-- run:" not in expanded
    assert f"```console\n$ toolcall-spec validate examples/{entry['file']}\n" in expanded
    for problem_path in entry["errorPaths"]:
        assert f"examples/{entry['file']}: {problem_path}: " in expanded
    assert "Exit status 1." in expanded
    assert str(REPO) not in expanded
    assert expanded.startswith("Before.")
    assert expanded.endswith("After.\n")


def test_a_usage_error_in_a_directive_is_shown_not_raised() -> None:
    run = cli_runs.run_cli(["validate", "--kind", "no-such-kind", "x.json"], REPO)
    assert run.exit_code == 2
    assert "invalid choice" in run.output
