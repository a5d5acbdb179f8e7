"""Problems are values: a path, a message and a severity. Nothing in this package raises for
bad input where a problem can be returned instead.

``Problem`` is the one finding about a document. The other reports build on it or say why they
cannot:

- an ingest rejection (``toolcall_spec.typed.EventRejection``) is a wire document whose shape the
  ``ingest-answer`` schema fixes (``{index, line?, issues}``, as Yavio's ingest answers); each of
  its ``issues`` is a ``Problem`` of the event, rendered by ``str`` as ``path: message``;
- a run-create refusal lists the suite's ``Problem`` objects (``as_dict``) in
  ``details.problems``;
- a compatibility change (``compat.changes.Change``) is a finding about two schemas, not about a
  document: it carries a level (major/minor/patch) and a kind instead of a severity;
- a leg verdict (``conformance.outcomes.Verdict``) is a finding about a host: an outcome of five,
  not an error or a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with (``error``) or suspicious about (``warning``) a document."""

    path: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{self.path}: {prefix}{self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "severity": self.severity}


def has_errors(problems: list[Problem]) -> bool:
    return any(problem.severity == "error" for problem in problems)
