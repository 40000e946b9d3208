"""What every gangsim command shares: the one-line error exit, option parsing helpers, the
terminal console and the progress bar on stderr."""

from __future__ import annotations

import functools
import os
import sys

import re

import typer
from rich.console import Console
from typer.core import TyperCommand

from gangsim.errors import GangsimError
from gangsim.whatif.variants import duration_option

__all__ = ["Command", "duration_option", "fail", "stdout_console", "user_errors"]


_USAGE_ARGUMENT = re.compile(r"^([{\[])(\w+)([}\]])")


class Command(TyperCommand):
    """Every gangsim command's help: usage lines name arguments as ``TRACES...`` (Typer writes
    ``{traces}...``), and boolean flags show no ``<bool>`` value (they take none)."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        def piece(text: str) -> str:
            return _USAGE_ARGUMENT.sub(lambda m: m[2].upper() if m[1] == "{" else f"[{m[2].upper()}]", text)

        return [piece(p) for p in super().collect_usage_pieces(ctx)]

    def get_params(self, ctx) -> list:
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
        return params


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
