"""Problems are values: a path, a message and a severity. Nothing in this package raises for
bad input where a problem can be returned instead."""

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
