"""Compatibility of schema changes, as code: each difference between two versions of the
schemas classified as major, minor (additive) or patch.

``major``: a document valid before may be invalid now, or mean something else. ``minor``: every
document valid before stays valid. ``patch``: what validates is unchanged. spec/compatibility.md
states the policy.

The comparison is conservative: a change it cannot show to be safe is major, and its message says
why. ``toolcall-spec diff OLD NEW`` is the command line over ``compare_trees`` and
``compare``.
"""

from __future__ import annotations

from toolcall_spec.compat.changes import LEVELS, RELEASE, Change, Level, counts, verdict
from toolcall_spec.compat.trees import (
    compare,
    compare_documents,
    compare_trees,
    load_tree,
    read_schema,
)

__all__ = [
    "LEVELS",
    "RELEASE",
    "Change",
    "Level",
    "compare",
    "compare_documents",
    "compare_trees",
    "counts",
    "load_tree",
    "read_schema",
    "verdict",
]
