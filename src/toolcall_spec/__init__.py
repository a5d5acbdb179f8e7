"""toolcall-spec: spec-as-code for agent tool calls.

The one rule: a tool result is an error exactly when its ``isError`` member is the JSON boolean
``true``. The JSON Schemas ship in ``toolcall_spec/schemas``, the generated Pydantic models import
as ``toolcall_spec.models``, and this package holds the runtime rules around them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if not (Path(__file__).parent / "models").is_dir():
    # A source checkout: a wheel carries the generated models as toolcall_spec/models (the build
    # copies them in); here `toolcall_spec.models` is the repository's generated/models itself.
    __path__.append(str(Path(__file__).parents[2] / "generated"))

if TYPE_CHECKING:
    from toolcall_spec.problems import Problem
    from toolcall_spec.validation import validate

__all__ = ["Problem", "__version__", "validate"]


def __getattr__(name: str) -> Any:
    # Lazy: `import toolcall_spec` stays light; the validator loads on first use.
    if name == "validate":
        from toolcall_spec.validation import validate  # noqa: PLC0415

        return validate
    if name == "Problem":
        from toolcall_spec.problems import Problem  # noqa: PLC0415

        return Problem
    raise AttributeError(name)
