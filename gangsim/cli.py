"""The ``gangsim`` command line (Typer). Thin: parse, call ``pipeline``, print, map errors to
exit codes (0 ok, 1 a --fail-if held / validate found problems, 2 bad input or an environment
error writing --out (``OutputError``), 3 a bug)."""

from __future__ import annotations

import os
import sys
import traceback
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

import gangsim.commands.compare  # noqa: F401 - registers its commands below
import gangsim.commands.explain  # noqa: F401
import gangsim.commands.traces  # noqa: F401
from gangsim import __version__, commands, pipeline
from gangsim.commands.common import DEFAULT_DURATION_HELP, JOB_WORKLOADS_HELP, Command, duration_option, load_traces, stdout_console, user_errors
from gangsim.errors import GangsimError, UsageError
from gangsim.report import render_json, render_markdown, render_terminal, write_report
from gangsim.whatif.variants import parse_policy_spec

app = typer.Typer(
    name="gangsim",
    help="What would the Kubernetes scheduler do with these jobs? Replay traces under pod-by-pod, "
    "Permit-barrier and Workload-Scheduling-Cycle gang scheduling and compare GPU idle time, "
    "gang wait time and preemption victims.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "gangsim[plot]" must not read as markup
    no_args_is_help=True,
    add_completion=False,
)


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def _progress_bar(enabled: bool):
    """A progress bar on stderr for long replays: the simulated clock, % of the horizon (without
    one, of the last trace event; the replay then drains at 100 %), pods bound so far and pending
    now, and an ETA from the rate so far. Off when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None, None
    from gangsim.report.summary import fmt_count, fmt_duration

    progress = Progress(
        TextColumn("replaying"), BarColumn(), TextColumn("{task.percentage:>3.0f}% of {task.fields[until]}"),
        TextColumn("sim {task.fields[clock]}"), TextColumn("{task.fields[pods]}"), TextColumn("ETA"), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )  # fmt: skip
    task = progress.add_task("replay", total=1, until="?", clock="0s", pods="")
    last = [-1]

    def update(now: int, until: int, bound: int, pending: int) -> None:
        if now - last[0] < until / 1000:  # at most ~1000 refreshes per replay
            return
        last[0] = now
        progress.update(task, completed=min(1.0, now / until) if until else 1.0, until=fmt_duration(until / 1000),
                        clock=fmt_duration(now // 1000), pods=f"{fmt_count(bound)} bound, {fmt_count(pending)} pending")

    return progress, update


@app.command(cls=Command)
@user_errors
def run(
    traces: Annotated[list[Path], typer.Argument(help="Trace files or directories (merged in order).", show_default=False)],
    policy: Annotated[str, typer.Option("--policy", "-p", help="NAME[+VARIANT...][:CONFIG.yaml], NAME one of gang|permit|pod, variants partial-success, old-timestamp, no-batching (as in diff).")] = "gang",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write report tables (Parquet + CSV) and summary.json here.")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", case_sensitive=False, help="What to print on stdout.")] = OutputFormat.table,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for upstream's random tie-breaks (default: node order).")] = None,
    horizon: Annotated[str | None, typer.Option("--horizon", help="Stop at this simulated time (e.g. 24h).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration file.")] = None,
    top: Annotated[int, typer.Option("--top", help="Rows in the terminal tables.")] = 10,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr (TTY only).")] = True,
    plot: Annotated[bool, typer.Option("--plot", help="Also write gpu_state.png, gang_wait_cdf.png, victims.png and report.html into --out (needs gangsim[plot]).")] = False,
    default_duration: Annotated[str | None, typer.Option("--default-duration", help=DEFAULT_DURATION_HELP)] = None,
    job_workloads: Annotated[bool | None, typer.Option("--job-workloads/--no-job-workloads", help=JOB_WORKLOADS_HELP, show_default=False)] = None,
) -> None:
    """Replay TRACE under one policy and report GPU idle time, gang waits and preemption victims."""
    if plot:
        from gangsim.report.figures import require_matplotlib

        if out is None:
            raise UsageError("--plot writes PNG files and report.html into --out DIR: give --out")
        require_matplotlib()
    head, sep, path = policy.strip().partition(":")
    spec = parse_policy_spec(head.lower() + sep + path)  # the name is case-insensitive, a path is not
    horizon_ms = duration_option(horizon)
    trace = load_traces(traces, config, default_duration, job_workloads, horizon_ms)
    scheduler_config = spec.config(trace.config)
    bar, update = _progress_bar(progress and fmt is OutputFormat.table)
    if bar is not None:
        with bar:
            report = pipeline.run_policy(trace, spec.policy, seed=seed, horizon_ms=horizon_ms, config=scheduler_config, progress=update)
    else:
        report = pipeline.run_policy(trace, spec.policy, seed=seed, horizon_ms=horizon_ms, config=scheduler_config)
    plots: dict[str, bytes] = {}
    if plot:  # drawn before anything is written, so a failure leaves --out untouched
        from gangsim.report.figures import report_files
        from gangsim.report.summary import summary_grid
        from gangsim.report.tables import gang_grid

        tables = [summary_grid(report.summary), gang_grid(report.tables["gangs"], top)]
        plots = report_files("run", [spec.label], [report], tables, f"gangsim run: {report.summary['trace']} (policy {spec.label})")
    if out is not None:
        write_report(report, out, extra=plots)  # report and figures become visible in one switch
    if fmt is OutputFormat.json:
        sys.stdout.buffer.write(render_json(report))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(render_markdown(report, top=top))
    else:
        render_terminal(report, stdout_console(), top=top)
        if out is not None:
            Console(stderr=True).print(f"[dim]report written to {out}[/dim]")


@app.command(cls=Command)
@user_errors
def validate(
    traces: Annotated[list[Path], typer.Argument(help="Trace files or directories.", show_default=False)],
    config: Annotated[Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration file.")] = None,
) -> None:
    """Check TRACE against the API rules and the known gang-scheduling pitfalls (no simulation).

    Exit 1 when errors are found; warnings are advice and exit 0.
    """
    from gangsim.validate import exit_code, render_findings, validate_paths

    findings = validate_paths([str(t) for t in traces], config_path=config)
    sys.stdout.write(render_findings(findings))
    raise typer.Exit(exit_code(findings))


@app.command(cls=Command)
def version() -> None:
    """Print the gangsim version."""
    print(__version__)


commands.compare.register(app)  # diff, plan, sweep
commands.traces.register(app)  # import, generate
commands.explain.register(app)


# Typer bundles its own click in recent versions; find its ClickException without importing click.
_CLICK_EXCEPTION = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def main() -> None:
    try:
        code = app(standalone_mode=False)  # returns the code of a typer.Exit raised in a command
        sys.exit(code if isinstance(code, int) else 0)
    except GangsimError as exc:
        sys.stderr.write(f"gangsim: error: {exc}\n")
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("gangsim: aborted\n")
        sys.exit(130)
    except SystemExit:
        raise
    except _CLICK_EXCEPTION as exc:  # a usage error found by the parser
        message = exc.format_message()
        if message:
            sys.stderr.write(f"gangsim: error: {message}\n")
        sys.exit(2)
    except Exception as exc:  # a bug
        traceback.print_exc()
        sys.stderr.write(f"gangsim: internal error ({type(exc).__name__}); this is a bug, please report it with the trace that caused it\n")
        sys.exit(3)


# =1: the console script leaves through the interpreter's full teardown (``exit_now`` skips it)
FULL_EXIT = "GANGSIM_FULL_EXIT"


def exit_now(code: object) -> None:
    """Leave with ``code`` (a ``SystemExit`` code) without the interpreter's teardown.

    By then every report is written (atomically) and closed; what is left is freeing the trace and
    the replay object by object: a final cyclic collection over hundreds of thousands of objects
    (the replay's cluster and scheduler refer to each other), 0.3-0.4 s of a 7 s SchedulingBasic
    run of 50,000 pods, for nothing. As mypy does (``mypy.util.hard_exit``): flush stdout and
    stderr, then ``os._exit``. A flush that fails (a closed pipe, a full disk) takes the normal
    way out, which reports it as before; so does a process being profiled or traced (cProfile,
    coverage: they write their results at exit). ``GANGSIM_FULL_EXIT=1`` always takes it."""
    if code is None:
        code = 0
    elif not isinstance(code, int):  # SystemExit("message"): Python prints it and exits 1
        sys.exit(code)
    if os.environ.get(FULL_EXIT) == "1" or sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def console() -> None:
    """The ``gangsim`` console script: :func:`main`, left through :func:`exit_now`. (Tests and
    other callers in a process that goes on call :func:`main`, which raises ``SystemExit``.)"""
    try:
        main()
    except SystemExit as exc:
        exit_now(exc.code)
    exit_now(0)


if __name__ == "__main__":
    console()
