"""What every subcommand shares around its ``run``: ``--quiet``, a closed output pipe, Ctrl-C,
and the promise that no traceback reaches the user."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130


def run_guarded(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``run(args)``, with ``--quiet`` honoured; a reader that closed the pipe (``| head``) ends
    the command quietly with its status, and an unexpected error is one line, not a traceback."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        # A file name that is not UTF-8 reaches us with surrogate escapes: print its own bytes.
        sys.stdout.reconfigure(errors="surrogateescape")
    stdout = sys.stdout
    if getattr(args, "quiet", False):
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115, PTH123  (closed below)
    try:
        code = run(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        print("toolcall-spec: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return _closed_pipe()
    except (OSError, ValueError) as error:
        print(f"toolcall-spec: {error}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if sys.stdout is not stdout:  # --quiet: back to the caller's stdout (in-process runs)
            sys.stdout.close()
            sys.stdout = stdout
    return code


def _closed_pipe() -> int:
    # The reader has what it wanted: not an error. Point stdout at /dev/null so the interpreter's
    # final flush does not raise again at exit.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK
