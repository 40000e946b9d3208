"""What every gangsim command shares: the one-line error exit, option parsing helpers, the
terminal console and the progress bar on stderr."""

from __future__ import annotations

import functools
import os
import sys

import typer
from rich.console import Console

from gangsim.errors import GangsimError
from gangsim.whatif.variants import duration_option

__all__ = ["duration_option", "fail", "stdout_console", "user_errors"]


def fail(message: str, code: int = 2) -> None:
    sys.stderr.write(f"gangsim: error: {message}\n")
    raise typer.Exit(code)


def user_errors(fn):
    """Bad input or usage inside a command: one line on stderr, exit 2, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except GangsimError as exc:
            fail(str(exc))

    return wrapper


PIPED_WIDTH = 100


def stdout_console() -> Console:
    """The terminal as it is; otherwise (a pipe, a file) :data:`PIPED_WIDTH` columns, or
    ``$COLUMNS`` when set. Tables fit the width by switching layout, never by wrapping cells."""
    console = Console()
    if console.is_terminal:
        return console
    columns = os.environ.get("COLUMNS", "")
    return Console(width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPED_WIDTH)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
