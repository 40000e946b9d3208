"""What every gangsim command shares: the one-line error exit, option parsing helpers, the
terminal console and the progress bar on stderr."""

from __future__ import annotations

import functools
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


def stdout_console(width: int = 120) -> Console:
    """The terminal as it is; otherwise (a pipe, a file) ``width`` columns, at least 120."""
    console = Console()
    return console if console.is_terminal else Console(width=max(120, width))


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
