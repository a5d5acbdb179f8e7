"""MkDocs hooks (``hooks:`` in mkdocs.yml) for the files the site serves besides its pages.

- every schema, raw, at ``schemas/<path>``: each ``$id`` is ``<site_url>schemas/<path>``, so a
  validator or an editor that fetches a ``$id`` gets the file itself;
- ``javascripts/mermaid.min.js``, taken from the npm ``mermaid`` package that ``npm ci`` installs
  into ``node_modules`` (package.json pins it). mkdocs-material uses a ``mermaid`` already on the
  page instead of fetching one from a CDN, so the diagrams render with nothing loaded from
  another host;
- ``versions.json`` naming this build's version, which the version selector fetches: without it
  a locally built site logs a 404 in the console (mike writes the real list when it deploys).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from toolcall_spec import __version__
from toolcall_spec.catalog import all_schemas

log = logging.getLogger("mkdocs.hooks.toolcall_spec.assets")

REPO = Path(__file__).resolve().parents[2]
MERMAID_SOURCE = REPO / "node_modules/mermaid/dist/mermaid.min.js"
MERMAID_URI = "javascripts/mermaid.min.js"
SCHEMAS_URI = "schemas"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    site_url = config.site_url or ""
    for path, schema in all_schemas().items():
        if schema["$id"] != f"{site_url}{SCHEMAS_URI}/{path}":
            log.warning("%s: $id %s is not under site_url %s", path, schema["$id"], site_url)
    if MERMAID_URI not in config.extra_javascript:
        config.extra_javascript.insert(0, MERMAID_URI)
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if not MERMAID_SOURCE.is_file():
        raise PluginError(
            f"{MERMAID_SOURCE.relative_to(REPO)} is missing: run `npm ci` at the repository root "
            "(the diagrams are rendered by the pinned npm mermaid package, served by the site)"
        )
    files.append(File.generated(config, MERMAID_URI, abs_src_path=str(MERMAID_SOURCE)))
    for path in all_schemas():
        source = REPO / "schemas" / path
        files.append(File.generated(config, f"{SCHEMAS_URI}/{path}", abs_src_path=str(source)))
    versions = [{"version": __version__, "title": __version__, "aliases": []}]
    files.append(File.generated(config, "versions.json", content=json.dumps(versions)))
    return files
