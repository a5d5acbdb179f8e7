"""mcp-recorder 0.5 beside Starlette 1.x: ``StarletteWithStartupHooks`` takes the
``on_startup``/``on_shutdown`` arguments its proxy and replay server pass (Starlette 1.x refuses
them, so the peer dies at start), mapped onto a lifespan, nothing else.

Imported by the cassette tests, and run as a script by ``nox -s record_peers``: ``python
THIS_FILE ARGS...`` is ``mcp-recorder ARGS...`` with that one change.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette


class StarletteWithStartupHooks(Starlette):
    """Starlette 1.x with the ``on_startup``/``on_shutdown`` arguments mcp-recorder 0.5 passes."""

    def __init__(
        self,
        *args: Any,
        on_startup: Sequence[Callable[[], Awaitable[None]]] = (),
        on_shutdown: Sequence[Callable[[], Awaitable[None]]] = (),
        **kwargs: Any,
    ) -> None:
        @contextlib.asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[None]:
            for hook in on_startup:
                await hook()
            try:
                yield
            finally:
                for hook in on_shutdown:
                    await hook()

        super().__init__(*args, **{**kwargs, "lifespan": lifespan})


def main() -> None:
    # Imported here: the tests import the class without running the peer's command line.
    import mcp_recorder.proxy
    import mcp_recorder.replayer
    from mcp_recorder.cli import main as cli

    for module in (mcp_recorder.proxy, mcp_recorder.replayer):
        module.Starlette = StarletteWithStartupHooks  # type: ignore[attr-defined]
    sys.argv[0] = "mcp-recorder"
    cli()


if __name__ == "__main__":
    main()
