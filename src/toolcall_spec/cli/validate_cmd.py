"""``toolcall-spec validate FILE... [--kind K] [--format text|json]``.

Exit 0 when every document is valid (warnings allowed), 1 when any is invalid, 2 when a file
cannot be read or the usage is wrong. JSONL files are validated line by line in constant memory.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolcall_spec.catalog import KINDS
from toolcall_spec.cli.console import (
    add_jsonl_option,
    open_input,
    print_json,
    read_document,
    reads_as_jsonl,
)
from toolcall_spec.loading import DocumentError, iter_jsonl
from toolcall_spec.problems import Problem, has_errors


@dataclass
class FileReport:
    file: str
    problems: list[tuple[int | None, Problem]] = field(default_factory=list)
    unreadable: str | None = None
    documents: int = 0

    @property
    def valid(self) -> bool:
        return self.unreadable is None and not has_errors([p for _, p in self.problems])


def register(subparsers: Any) -> str:
    parser = subparsers.add_parser(
        "validate", help="validate JSON or JSONL documents against the packaged schemas"
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="JSON or JSONL files; - for stdin")
    parser.add_argument("--kind", choices=KINDS, help="document kind (inferred when omitted)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    add_jsonl_option(parser)
    return "validate"


def run(args: argparse.Namespace) -> int:
    reports = [_check_file(name, args.kind, jsonl=args.jsonl) for name in args.files]
    if args.format == "json":
        print_json(
            {"valid": all(r.valid for r in reports), "files": [_as_json(r) for r in reports]}
        )
    else:
        _print_text(reports)
    if any(r.unreadable is not None for r in reports):
        return 2
    return 0 if all(r.valid for r in reports) else 1


def _check_file(name: str, kind: str | None, *, jsonl: bool = False) -> FileReport:
    report = FileReport(name)
    try:
        if reads_as_jsonl(name, jsonl=jsonl):
            for number, problem in _jsonl_problems(name, kind, report):
                report.problems.append((number, problem))
        else:
            report.documents = 1
            document = read_document(name)
            report.problems.extend((None, p) for p in _validate(document, kind))
    except DocumentError as exc:
        report.unreadable = str(exc)
    except OSError as exc:
        report.unreadable = f"cannot read: {exc.strerror or exc}"
    return report


def _jsonl_problems(
    name: str, kind: str | None, report: FileReport
) -> Iterator[tuple[int, Problem]]:
    with open_input(name) as handle:
        for number, value, error in iter_jsonl(handle):
            report.documents += 1
            if error is not None:
                yield number, Problem("(root)", error)
                continue
            for problem in _validate(value, kind):
                yield number, problem


def _validate(document: Any, kind: str | None) -> list[Problem]:
    # Imported on first use: `validate --help` starts without the validator.
    from toolcall_spec.validation import validate  # noqa: PLC0415

    return validate(document, kind)


def _location(report: FileReport, number: int | None) -> str:
    return report.file if number is None else f"{report.file}:{number}"


def _print_text(reports: list[FileReport]) -> None:
    for report in reports:
        if report.unreadable is not None:
            print(f"{report.file}: {report.unreadable}", file=sys.stderr)
            continue
        for number, problem in report.problems:
            print(f"{_location(report, number)}: {problem}")
        if report.valid:
            noun = "document" if report.documents == 1 else "documents"
            print(f"{report.file}: valid ({report.documents} {noun})")


def _as_json(report: FileReport) -> dict[str, Any]:
    out: dict[str, Any] = {"file": report.file, "valid": report.valid}
    if report.unreadable is not None:
        out["unreadable"] = report.unreadable
    out["problems"] = [
        {**problem.as_dict(), **({"line": number} if number is not None else {})}
        for number, problem in report.problems
    ]
    return out
