"""``toolcall-spec classify [FILE|-] [--no-capture-output]``: the ``tool_call`` fields a tool call
yields.

The input is a ``CallToolResult`` JSON object (what the handler returned), or ``{"thrown":
"message"}`` for a handler that raised. The output is a JSON object: ``status``, plus
``error_category`` and ``error_message`` when they apply. Exit 0 when classified, 2 when the
input cannot be read or is neither shape.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

import orjson

from toolcall_spec.analytics.classify import Classification, classify_exception, classify_result
from toolcall_spec.cli.console import (
    DocumentError,
    add_jsonl_option,
    fail,
    open_input,
    print_json,
    read_document,
    reads_as_jsonl,
)
from toolcall_spec.loading import iter_jsonl


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "classify",
        help="derive the analytics tool_call fields from a tool result or a thrown message",
        description='Input: a CallToolResult JSON object, or {"thrown": "message"}. Output: '
        "status, plus error_category and error_message when they apply. Exit codes: 0 "
        "classified, 2 unreadable input or neither shape.",
    )
    parser.add_argument(
        "file", nargs="?", default="-", metavar="FILE", help="a JSON file; - or nothing: stdin"
    )
    parser.add_argument(
        "--no-capture-output",
        dest="capture_output",
        action="store_false",
        help="as with output capture off: a message taken from the result is dropped",
    )
    add_jsonl_option(parser)
    return "classify"


def run(args: argparse.Namespace) -> int:
    if reads_as_jsonl(args.file, jsonl=args.jsonl):
        return _classify_lines(args)
    try:
        document = read_document(args.file)
    except (DocumentError, OSError) as exc:
        fail(f"{args.file}: {exc}")
        return 2
    classification = classify_document(document, capture_output=args.capture_output)
    if isinstance(classification, str):
        fail(f"{args.file}: {classification}")
        return 2
    is_error = document.get("isError") if isinstance(document, Mapping) else None
    if is_error is not None and not isinstance(is_error, bool):
        fail(f"{args.file}: isError: {is_error!r} is not the boolean true, so not an error")
    print_json(classification.fields())
    return 0


def _classify_lines(args: argparse.Namespace) -> int:
    """One JSON line of fields per input line; a line that is neither shape is named on stderr."""
    code = 0
    with open_input(args.file) as handle:
        for number, document, error in iter_jsonl(handle):
            outcome = error or classify_document(document, capture_output=args.capture_output)
            if isinstance(outcome, str):
                fail(f"{args.file}:{number}: {outcome}")
                code = 2
                continue
            sys.stdout.write(orjson.dumps(outcome.fields()).decode() + "\n")
    return code


def classify_document(document: Any, *, capture_output: bool = True) -> Classification | str:
    """Classify a result or a ``{"thrown": ...}`` document; a string says why it is neither."""
    if not isinstance(document, Mapping):
        return 'expected a JSON object: a CallToolResult, or {"thrown": "message"}'
    if "thrown" in document:
        thrown = document["thrown"]
        if not isinstance(thrown, str):
            return "thrown: expected the exception's message as a string"
        return classify_exception(thrown)
    if "content" not in document and "isError" not in document:
        return 'expected a CallToolResult (content, isError) or {"thrown": "message"}'
    try:
        return classify_result(document, capture_output=capture_output)
    except TypeError as exc:  # snake_case is_error: a pydantic dump, not a wire result
        return str(exc)
