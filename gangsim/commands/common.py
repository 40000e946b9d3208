"""What every gangsim command shares: the one-line error exit, option parsing helpers, the
terminal console and the progress bar on stderr."""

from __future__ import annotations

import functools
import gc
import os
import sys

import re

import typer
from rich.console import Console
from typer.core import TyperCommand

from gangsim.errors import GangsimError
from gangsim.whatif.variants import duration_option

__all__ = ["DEFAULT_DURATION_HELP", "JOB_WORKLOADS_HELP", "Command", "duration_option", "fail", "load_traces", "note_durations", "stdout_console", "user_errors"]

DEFAULT_DURATION_HELP = "Duration of pods that have none (no gangsim.dev/duration, no Trace durations rule), e.g. 1h; replaces the Trace's defaultDuration."


JOB_WORKLOADS_HELP = "KEP-5547 under gang/permit: a gang PodGroup for each Indexed Job with parallelism == completions > 1 (default: the Trace's jobWorkloads, else on)."


def load_traces(paths: list, config: object, default_duration: str | None, job_workloads: bool | None = None, horizon_ms: int | None = None):
    """``pipeline.load`` for a command: ``--default-duration`` parsed, ``--[no-]job-workloads``
    applied, and the notes on stderr; ``horizon_ms``: every replay of the trace stops there."""
    from gangsim import pipeline

    ms = duration_option(default_duration, "--default-duration")
    trace = pipeline.load([str(p) for p in paths], config_path=config, default_duration_ms=ms, horizon_ms=horizon_ms)
    if job_workloads is not None:
        trace.job_workloads = job_workloads
    note_durations(trace)
    # The loaded trace lives until the process ends: move it out of the cyclic collector's reach,
    # so the replay's collections do not scan it again and again (12-15 % of a 50,000-pod replay;
    # objects are still freed by reference counting; results cannot change)
    gc.freeze()
    return trace


def note_durations(trace: object) -> None:
    """On stderr: the trace's notices (features replayed differently, e.g. ``spec.suspend``) and one
    line when nothing in ``trace`` has a duration (the report would be all zeros)."""
    from gangsim import pipeline

    notes = list(trace.notices)  # type: ignore[attr-defined]
    note = pipeline.no_duration_note(trace)  # type: ignore[arg-type]
    if note is not None:
        notes.append(note)
    for line in notes:
        sys.stderr.write(f"gangsim: warning: {line}\n")


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
