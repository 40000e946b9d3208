"""``gangsim diff``, ``gangsim plan`` and ``gangsim sweep``: many replays of one trace, compared.

Thin, like ``gangsim.cli``: parse and check every option (bad input is exit 2 before any replay),
load through ``gangsim.pipeline``, compute with ``gangsim.whatif`` (runners, plan, grid), render
with ``gangsim.report``, print, map outcomes to exit codes (0 ok; 1 a ``--fail-if`` held, or
``plan`` found no size meeting the targets; 2 bad input or usage; 3 a bug, handled by
``gangsim.cli.main``).

The CLI helpers it shares with ``gangsim.cli`` live in ``gangsim.commands.common``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gangsim.commands.common import DEFAULT_DURATION_HELP, JOB_WORKLOADS_HELP, Command, duration_option, load_traces, note_durations, stdout_console, user_errors
from gangsim.errors import UsageError

__all__ = ["register"]


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


class SweepFormat(StrEnum):
    table = "table"
    csv = "csv"


class Backend(StrEnum):
    local = "local"
    ray = "ray"


@contextlib.contextmanager
def _progress(enabled: bool, what: str) -> Iterator[Callable[[int, int | None], None] | None]:
    """A ``done/total runs`` bar on stderr, only when stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    bar = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("runs"), TimeElapsedColumn(),
                   console=Console(stderr=True), transient=True)
    task = bar.add_task(what, total=None)
    with bar:
        def update(done: int, total: int | None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _held(lines: list[str]) -> None:
    for text in lines:
        sys.stderr.write(f"gangsim: --fail-if held: {text}\n")


def _check_plot(plot: bool, out: Path | None) -> None:
    if plot and out is None:
        raise UsageError("--plot writes PNG files and report.html into --out DIR: give --out")
    if plot:
        from gangsim.report.figures import require_matplotlib

        require_matplotlib()


# ---------------------------------------------------------------------------------------------
# diff

DEFAULT_DIFF_POLICIES = ("gang", "permit", "pod")


def diff(
    traces: Annotated[list[Path], typer.Argument(help="Trace files or directories (merged in order).", show_default=False)],
    policies: Annotated[list[str] | None, typer.Option("--policy", "-p", help="NAME[+VARIANT...][:CONFIG.yaml], NAME one of gang|permit|pod, variants partial-success, old-timestamp, no-batching. Repeat; the first is the baseline. Default: gang, permit, pod.", show_default=False)] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", case_sensitive=False, help="What to print on stdout.")] = OutputFormat.table,
    fail_if: Annotated[list[str] | None, typer.Option("--fail-if", help="LABEL.SECTION.KEY OP (NUMBER | LABEL.SECTION.KEY), OP one of < <= > >= == !=; repeat. Exit 1 when any holds.", show_default=False)] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for upstream's random tie-breaks (default: node order).")] = None,
    horizon: Annotated[str | None, typer.Option("--horizon", help="Stop every replay at this simulated time (e.g. 24h).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration for every policy without its own :CONFIG.")] = None,
    top: Annotated[int, typer.Option("--top", help="Rows in the per-gang table.")] = 10,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write diff.json and diff.md here (and the plots with --plot).")] = None,
    plot: Annotated[bool, typer.Option("--plot", help="Also write gpu_state.png, gang_wait_cdf.png, victims.png and report.html into --out (needs gangsim[plot]).")] = False,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="Replay the policies in this many processes.")] = 1,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr (TTY only).")] = True,
    default_duration: Annotated[str | None, typer.Option("--default-duration", help=DEFAULT_DURATION_HELP)] = None,
    job_workloads: Annotated[bool | None, typer.Option("--job-workloads/--no-job-workloads", help=JOB_WORKLOADS_HELP, show_default=False)] = None,
) -> None:
    """Replay TRACE under several policies and compare them side by side.

    Every policy is compared over the same window (--horizon, or the longest run). Deltas are against the first --policy: green is better, red worse, only where one direction is right (less stranded GPU time, shorter waits counting every gang, fewer victims, more gangs started …). Exit 1 when a --fail-if holds.
    """
    from gangsim.report.bundle import write_files
    from gangsim.report.diff import build_diff, parse_condition
    from gangsim.report.render_diff import (
        diff_metrics_grid,
        gang_changes_grid,
        render_diff_json,
        render_diff_markdown,
        render_diff_terminal,
    )
    from gangsim.whatif.sweep import Runner, Task
    from gangsim.whatif.variants import parse_policy_specs
    from gangsim.whatif.window import run_in_common_window

    specs = parse_policy_specs(policies or list(DEFAULT_DIFF_POLICIES))
    if len(specs) < 2:
        raise UsageError("diff compares at least two policies: give --policy twice or more (e.g. --policy gang --policy pod)")
    labels = [s.label for s in specs]
    conditions = [parse_condition(text, labels) for text in fail_if or []]
    _check_plot(plot, out)
    horizon_ms = duration_option(horizon)
    trace = load_traces(traces, config, default_duration, job_workloads, horizon_ms)
    tasks = [Task(0, s.policy, s.config(trace.config), seed, horizon_ms, keep_report=True) for s in specs]
    with _progress(progress and fmt is OutputFormat.table, "replaying") as update, Runner([trace], jobs=jobs) as runner:
        outcomes, window = run_in_common_window(runner, tasks, progress=update)
    reports = [o.report for o in outcomes]
    natural_s = [ms / 1000 for ms in window.natural_ms]
    result = build_diff(labels, reports, conditions=conditions, top=top, natural_s=natural_s)  # type: ignore[arg-type]

    if out is not None:
        files = {"diff.json": render_diff_json(result), "diff.md": render_diff_markdown(result).encode("utf-8")}
        if plot:
            from gangsim.report.figures import report_files
            from gangsim.report.html import Paragraph

            tables = [diff_metrics_grid(result), gang_changes_grid(result)]
            tables += [Paragraph(f"--fail-if held: {v.describe()}", "worse") for v in result.held]
            files.update(report_files("diff", labels, reports, tables, f"gangsim diff: {result.trace}"))  # type: ignore[arg-type]
        write_files(out, files)

    if fmt is OutputFormat.json:
        sys.stdout.buffer.write(render_diff_json(result))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(render_diff_markdown(result))
    else:
        render_diff_terminal(result, stdout_console())
        if out is not None:
            Console(stderr=True).print(f"[dim]diff written to {out}[/dim]")
    _held([v.describe() for v in result.held])
    raise typer.Exit(1 if result.held else 0)


# ---------------------------------------------------------------------------------------------
# plan


def _ranges(texts: list[str], pools: list[str]) -> dict[str, tuple[int, int]]:
    from gangsim.whatif.plan import parse_range

    out: dict[str, tuple[int, int]] = {}
    shared: tuple[int, int] | None = None
    for text in texts:
        name, sep, span = text.rpartition("=")
        if sep:
            if name not in pools:
                raise UsageError(f"--range {text!r}: {name!r} is not one of the --pool values ({', '.join(pools)})")
            out[name] = parse_range(span, f"--range {name}=")
        else:
            shared = parse_range(text)
    return {p: out.get(p) or shared for p in pools if (out.get(p) or shared) is not None}  # type: ignore[misc]


def plan(
    traces: Annotated[list[Path], typer.Argument(help="Trace files or directories (merged in order).", show_default=False)],
    pools: Annotated[list[str], typer.Option("--pool", help="The NodePool to size; repeat to plan several, one at a time.", show_default=False)],
    targets: Annotated[list[str], typer.Option("--target", "-t", help="SECTION.KEY OP NUMBER, e.g. 'gangs.wait_p95_s <= 600'; repeat: every target must hold.", show_default=False)],
    ranges: Annotated[list[str] | None, typer.Option("--range", "-r", help="LO..HI for every pool, or NAME=LO..HI for one (default 1..2x the trace's count).", show_default=False)] = None,
    policy: Annotated[str, typer.Option("--policy", "-p", help="NAME[+VARIANT...][:CONFIG.yaml].")] = "gang",
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", case_sensitive=False, help="What to print on stdout.")] = OutputFormat.table,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for upstream's random tie-breaks.")] = None,
    horizon: Annotated[str | None, typer.Option("--horizon", help="Stop every replay at this simulated time.")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration file.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write plan.json and plan.md here (and the plots with --plot).")] = None,
    plot: Annotated[bool, typer.Option("--plot", help="Also write plan_<pool>.png and report.html into --out (needs gangsim[plot]).")] = False,
    backend: Annotated[Backend, typer.Option("--backend", case_sensitive=False, help="Where the replays run: local processes or Ray tasks (gangsim[ray]).")] = Backend.local,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Local worker processes (default: CPU count); also the sizes tried per round.")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="ray.init(address=...); default: start a local Ray.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr (TTY only).")] = True,
    default_duration: Annotated[str | None, typer.Option("--default-duration", help=DEFAULT_DURATION_HELP)] = None,
    job_workloads: Annotated[bool | None, typer.Option("--job-workloads/--no-job-workloads", help=JOB_WORKLOADS_HELP, show_default=False)] = None,
) -> None:
    """Find the smallest node count of a NodePool that meets every --target.

    Bisection over independent replays (the answer and the size below it are both replayed); several --pool are planned one at a time, the others as in the trace. Exit 1 when a pool's range cannot meet the targets.
    """
    from gangsim.report.bundle import write_files
    from gangsim.report.diff import parse_condition
    from gangsim.report.render_plan import plan_grid, plan_json, plan_lines, plan_series, render_plan_json, render_plan_markdown, render_plan_terminal
    from gangsim.whatif.plan import plan_pool
    from gangsim.whatif.pools import pool_info
    from gangsim.whatif.sweep import Runner, Task
    from gangsim.whatif.variants import parse_policy_spec

    spec = parse_policy_spec(policy)
    conditions = [parse_condition(text, [spec.label], default_label=spec.label, option="--target") for text in targets]
    if len(set(pools)) != len(pools):
        raise UsageError("--pool: the same pool given twice")
    span = _ranges(ranges or [], pools)
    _check_plot(plot, out)
    horizon_ms = duration_option(horizon)
    trace = load_traces(traces, config, default_duration, job_workloads, horizon_ms)
    infos = {name: pool_info(trace, name) for name in pools}
    for name, info in infos.items():
        span.setdefault(name, (1, max(2 * info.size, info.size + 1)))
    base = Task(0, spec.policy, spec.config(trace.config), seed, horizon_ms)

    plans = []
    with Runner([trace], backend=backend.value, jobs=jobs, address=ray_address) as runner:
        for name in pools:
            with _progress(progress and fmt is OutputFormat.table, f"planning {name}") as update:
                def report(_pool: str, done: int, update=update) -> None:
                    if update is not None:
                        update(done, None)  # a bisection does not know its length

                lo, hi = span[name]
                info = infos[name]
                plans.append(plan_pool(runner, base, name, info.size, info.gpus_per_node, lo, hi, conditions, progress=report))

    trace_name = trace.name
    if out is not None:
        files = {
            "plan.json": render_plan_json(trace_name, spec.label, conditions, plans),
            "plan.md": render_plan_markdown(trace_name, spec.label, conditions, plans).encode("utf-8"),
        }
        if plot:
            from gangsim.report.figures import plan_files
            from gangsim.report.html import Paragraph

            series = [plan_series(p, conditions) for p in plans]
            tables: list = []
            for p in plans:
                tables.append(plan_grid(p))
                tables += [Paragraph(text, tone) for tone, text in plan_lines(p)]
            data = {"kind": "plan", **plan_json(trace_name, spec.label, conditions, plans), "series": series}
            files.update(plan_files(trace_name, spec.label, plans, series, tables, data, f"gangsim plan: {trace_name}"))
        write_files(out, files)

    if fmt is OutputFormat.json:
        sys.stdout.buffer.write(render_plan_json(trace_name, spec.label, conditions, plans))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(render_plan_markdown(trace_name, spec.label, conditions, plans))
    else:
        render_plan_terminal(trace_name, spec.label, conditions, plans, stdout_console())
    raise typer.Exit(1 if any(p.status == "unmet" for p in plans) else 0)


# ---------------------------------------------------------------------------------------------
# sweep

SWEEP_SHOWN = ("gpu.utilization", "gpu.stranded_s", "gangs.started", "gangs.wait_p99_s", "preemption.victims")


def _seeds(texts: list[str]) -> list[int | None]:
    from gangsim.whatif.sweep import parse_sizes

    seeds: list[int | None] = []
    for text in texts:
        if text.strip().lower() == "none":
            seeds.append(None)
            continue
        try:
            seeds.extend(int(v) for v in text.split(",")) if ".." not in text else seeds.extend(parse_sizes(text, "--seed"))
        except ValueError:
            raise UsageError(f"--seed {text!r}: want integers (1,2,3 or 1..5) or none") from None
    return list(dict.fromkeys(seeds))


def _pool_sizes(texts: list[str]) -> dict[str, tuple[int, ...]]:
    from gangsim.whatif.sweep import parse_sizes

    out: dict[str, tuple[int, ...]] = {}
    for text in texts:
        name, sep, sizes = text.partition("=")
        if not sep or not name:
            raise UsageError(f"--pool {text!r}: want NAME=SIZES, e.g. gpu=10,20,40 or gpu=10..40:10")
        if name in out:
            raise UsageError(f"--pool {name!r} given twice")
        out[name] = parse_sizes(sizes, f"--pool {name}")
    return out


def sweep(
    grid_file: Annotated[Path | None, typer.Option("--grid", help="A grid YAML file (traces, policies, configs, seeds, pools, horizon); options given here override its keys.")] = None,
    traces: Annotated[list[str] | None, typer.Option("--trace", help="One trace per value (a,b merges files a and b); repeat.", show_default=False)] = None,
    policies: Annotated[list[str] | None, typer.Option("--policy", "-p", help="NAME[+VARIANT...][:CONFIG.yaml]; repeat (default gang).", show_default=False)] = None,
    configs: Annotated[list[str] | None, typer.Option("--config", help="KubeSchedulerConfiguration files replacing the trace's own; repeat; 'none' keeps the trace's.", show_default=False)] = None,
    seeds: Annotated[list[str] | None, typer.Option("--seed", help="Seeds: 1,2,3 or 1..5 or none; repeat.", show_default=False)] = None,
    pools: Annotated[list[str] | None, typer.Option("--pool", help="NAME=SIZES, e.g. gpu=10,20,40 or gpu=10..40:10; repeat for a product.", show_default=False)] = None,
    horizon: Annotated[str | None, typer.Option("--horizon", help="Stop every replay at this simulated time.")] = None,
    outputs: Annotated[list[Path] | None, typer.Option("--output", "-o", help="Write the table here: .parquet or .csv; repeat for both.", show_default=False)] = None,
    fmt: Annotated[SweepFormat, typer.Option("--format", "-f", case_sensitive=False, help="stdout: a short table, or the whole table as CSV.")] = SweepFormat.table,
    backend: Annotated[Backend, typer.Option("--backend", case_sensitive=False, help="local processes, or Ray tasks (gangsim[ray]).")] = Backend.local,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", help="Local worker processes (default: CPU count).")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="ray.init(address=...); default: start a local Ray.")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bar on stderr (TTY only).")] = True,
    default_duration: Annotated[str | None, typer.Option("--default-duration", help=DEFAULT_DURATION_HELP)] = None,
    job_workloads: Annotated[bool | None, typer.Option("--job-workloads/--no-job-workloads", help=JOB_WORKLOADS_HELP, show_default=False)] = None,
) -> None:
    """Replay a grid of traces x configs x policies x seeds x pool sizes; one table, one row per run."""
    from gangsim.report.diff import is_undefined
    from gangsim.report.render_rich import grid_table
    from gangsim.report.summary import Grid, fmt_in, row_unit, unit_header
    from gangsim.whatif.sweep import Runner, load_grid_file, make_grid, prepare, sweep_table, write_table
    from gangsim.whatif.window import run_in_common_window

    spec: dict = load_grid_file(grid_file) if grid_file is not None else {}
    if traces:
        spec["traces"] = traces
    if policies:
        spec["policies"] = policies
    if configs:
        spec["configs"] = [None if c.strip().lower() == "none" else c for c in configs]
    if seeds:
        spec["seeds"] = _seeds(seeds)
    if pools:
        spec["pools"] = _pool_sizes(pools)
    if horizon is not None:
        spec["horizon"] = horizon
    for path in outputs or []:
        if path.suffix.lower() not in (".parquet", ".csv"):
            raise UsageError(f"-o {path}: the file name must end in .parquet or .csv")
    grid = make_grid(
        spec.get("traces") or [],
        spec.get("policies") or [],
        configs=spec.get("configs") or [],
        seeds=spec.get("seeds") or [],
        pools=spec.get("pools") or {},
        horizon=spec.get("horizon"),
    )
    prepared = prepare(grid, default_duration_ms=duration_option(default_duration, "--default-duration"))
    configs = len(prepared.grid.configs)
    for trace in prepared.traces:
        if job_workloads is not None:
            trace.job_workloads = job_workloads
        note_durations(trace)
    with _progress(progress, "sweep") as update, Runner(prepared.traces, backend=backend.value, jobs=jobs, address=ray_address) as runner:
        # one window per --trace value: its runs under every config, policy, seed and pool size
        outcomes, _window = run_in_common_window(runner, prepared.tasks, group=lambda t: t.trace // configs, progress=update)
    table = sweep_table(prepared, outcomes)
    for path in outputs or []:
        write_table(table, path)

    if fmt is SweepFormat.csv:
        sys.stdout.write(table.write_csv(null_value="", line_terminator="\n"))
        return
    coords = ["run", "trace", "config", "policy", "seed"] + [c for c in table.columns if c.startswith("pool.")]
    varying = [c for c in coords if c == "run" or table.get_column(c).n_unique() > 1]
    values = {k: [None if is_undefined(o.summary, k) else row[k] for row, o in zip(table.iter_rows(named=True), outcomes, strict=True)]
              for k in SWEEP_SHOWN}
    units = {k: row_unit(k, v) for k, v in values.items()}
    columns = tuple(varying) + tuple(unit_header(k, units[k]) for k in SWEEP_SHOWN)
    rows = []
    for i, row in enumerate(table.iter_rows(named=True)):
        cells = [("" if row[c] is None else str(row[c])) for c in varying]
        cells += [fmt_in(units[k], values[k][i]) for k in SWEEP_SHOWN]
        rows.append(tuple(cells))
    numeric = tuple(c in ("run", "seed") or c.startswith("pool.") for c in varying) + (True,) * len(SWEEP_SHOWN)
    view = Grid(f"sweep: {table.height} runs (runs of one trace compared over one window: see horizon_s)", columns, numeric, tuple(rows))
    console = stdout_console()
    console.print(grid_table(view, console.width))
    for path in outputs or []:
        Console(stderr=True).print(f"[dim]table written to {path}[/dim]")


def register(app: typer.Typer) -> None:
    app.command(cls=Command)(user_errors(diff))
    app.command(cls=Command)(user_errors(plan))
    app.command(cls=Command)(user_errors(sweep))
