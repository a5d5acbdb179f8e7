"""toolcall-spec: spec-as-code for agent tool calls.

The one rule: a tool result is an error exactly when its ``isError`` member is the JSON boolean
``true``. The JSON Schemas ship in ``toolcall_spec/schemas``, the generated Pydantic models import
as ``toolcall_spec.models`` and the generated TypedDicts as ``toolcall_spec.typed``, and this
package holds the runtime rules around them.
"""

from __future__ import annotations

import os.path

TYPE_CHECKING = False  # not typing's: the CLI's `--help` starts without importing typing

__version__ = "0.1.0"

# os.path, not pathlib: this runs on every start of the CLI, `--help` included (pathlib and what it
# imports cost more than the rest of `toolcall-spec --help`).
_HERE = os.path.dirname(__file__)  # noqa: PTH120
if not os.path.isdir(os.path.join(_HERE, "models")):  # noqa: PTH112, PTH118
    # A source checkout: a wheel carries the generated packages as toolcall_spec/models and
    # toolcall_spec/typed (the build copies them in); here they are the repository's
    # generated/models and generated/typed themselves.
    __path__.append(os.path.join(os.path.dirname(os.path.dirname(_HERE)), "generated"))  # noqa: PTH118, PTH120

if TYPE_CHECKING:
    from typing import Any

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
