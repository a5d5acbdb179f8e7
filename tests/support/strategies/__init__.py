"""Hand-written Hypothesis strategies for every document kind (``toolcall_spec.catalog.KINDS``).

The API (tests import it as ``from support.strategies import valid_documents, near_miss``):

- ``valid_documents(kind)``: documents the schema of ``kind`` accepts. They exercise every
  optional member, OpenWOP's identifier grammars, registered and vendor event types and error
  codes, foreign members of open objects, every content block and capability record shape, and
  integral floats (``3.0``) for integer members (JSON Schema counts them as integers).
- ``near_misses_of(kind, document)``: one mutation of a valid ``document``: a boolean spelled
  ``"true"``, ``1``, ``1.0`` or ``null``; ``error`` beside ``outcome``; an unknown
  ``error_category``; an extra or a missing member; a category on a success; ``argsMatch`` without
  ``args``; a stable capability record with ``until``; a uuid or date-time of the wrong shape; and
  so on. Most are invalid; a few stay valid (an extra member of an open object), which a
  differential test welcomes. Each draw records its mutation as a Hypothesis ``event``
  (``pytest --hypothesis-show-statistics`` shows the mix).
- ``near_miss(kind)``: ``near_misses_of`` a freshly drawn valid document.
- ``events_of_type(type, payloads=None)``: run events of one type; ``tool_returned_payloads``
  draws every legal ``agent.tool-returned`` payload shape.
- ``json_values()``: any JSON value. ``BOOLEAN_LOOKALIKES``: JSON values that are not ``true`` but
  are often mistaken for a boolean.

The analytics tests draw from ``support.strategies.analytics`` (the ``tool_call_events`` behind
``valid_documents("tool-call-event")``, cheap ``small_events``, ``defective_events`` and
``repairable_events``) and from ``support.strategies.pii_text`` (PII values planted in text).

Left out on purpose, each pinned by a test in tests/schemas/test_models_strict.py: strings ending
in a newline where a pattern applies, leap seconds and the year 0000 in date-times (the pure-Python
oracle misreads them), and numbers beyond the float range (the models refuse them).

Every strategy is built once (module constants or cached factories), and nesting is bounded by
hand rather than with ``st.recursive``: built per draw, or recursive, they made runs several times
slower.
"""

from __future__ import annotations

from support.strategies.events import events_of_type, tool_returned_payloads
from support.strategies.near_misses import near_miss, near_misses_of
from support.strategies.valid import valid_documents
from support.strategies.values import (
    BOOLEAN_LOOKALIKES,
    ERROR_CATEGORIES,
    Draw,
    json_values,
    timestamps,
)

__all__ = [
    "BOOLEAN_LOOKALIKES",
    "ERROR_CATEGORIES",
    "Draw",
    "events_of_type",
    "json_values",
    "near_miss",
    "near_misses_of",
    "timestamps",
    "tool_returned_payloads",
    "valid_documents",
]
