"""Many independent replays: the run grid of ``gangsim sweep`` and the runners that ``diff``,
``plan`` and ``sweep`` share.

Runners
    A :class:`Runner` takes the loaded traces once and then maps :class:`Task` values (small,
    picklable: trace index, policy, resolved SchedulerConfig, seed, horizon, pool sizes) to
    :class:`Outcome` values (the summary, a few extra metrics, optionally the whole report).

    - ``local`` with ``jobs == 1``: in this process, one run after the other;
    - ``local`` with ``jobs > 1``: a ``concurrent.futures.ProcessPoolExecutor`` (``spawn`` start
      method: Polars and threads do not survive ``fork``). The loaded traces go to every worker
      once, through the pool initializer: unpickling a Trace is ~15× cheaper than loading its
      YAML again (mixed-day: 8 ms against 130 ms), and workers need no access to the files;
    - ``ray``: the same function as a ``ray.remote`` task; ``ray.init(address=…)`` (default: a local
      instance), the traces put once in the object store, so cluster workers need gangsim and its
      dependencies installed but not the trace files.

    Results are returned in task order whatever the completion order, and a run's result does not
    depend on where it ran: the replay is deterministic (STYLE §6).

Grid
    traces × configs × policies × seeds × pool sizes, from command-line options or a YAML file
    (:func:`load_grid_file`), expanded in that order; one row per run in :func:`sweep_table`.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from gangsim import pipeline
from gangsim.api.config import SchedulerConfig
from gangsim.api.trace import Trace
from gangsim.errors import InputError, UsageError
from gangsim.eventlog import EventLog
from gangsim.report import Report, build_report
from gangsim.report.diff import flatten, metric_types, metric_value, optional_metric_types
from gangsim.whatif.pools import pool_info, resize_pools
from gangsim.whatif.variants import PolicySpec, duration_option, parse_policy_specs

__all__ = [
    "BACKENDS",
    "Grid",
    "GridTrace",
    "Outcome",
    "Runner",
    "Task",
    "execute",
    "outcome_of",
    "load_grid_file",
    "parse_sizes",
    "sweep_table",
    "write_table",
]

BACKENDS = ("local", "ray")
Progress = Callable[[int, int], None]


# ---------------------------------------------------------------------------------------------
# One run


@dataclass(frozen=True, slots=True)
class Task:
    """One replay: everything a worker needs besides the traces themselves."""

    trace: int  # index into the runner's traces
    policy: str  # pod | permit | gang
    config: SchedulerConfig | None = None  # None: the trace's own
    seed: int | None = None
    horizon_ms: int | None = None
    pools: tuple[tuple[str, int], ...] = ()
    extras: tuple[str, ...] = ()  # metric keys not in the summary (gangs.wait_p95_s …)
    keep_report: bool = False  # ship the whole Report back (diff, plots)
    keep_log: bool = False  # ship the EventLog back, to read it over a common window (window.py)


@dataclass(frozen=True, slots=True)
class Outcome:
    summary: dict
    extras: dict[str, float | int | None] = field(default_factory=dict)
    report: Report | None = None
    log: EventLog | None = None  # only with Task.keep_log, until the common window is applied
    natural_horizon_ms: int | None = None  # where the replay stopped by itself (before widening)

    def metric(self, key: str) -> float | int | None:
        if key in self.extras:
            return self.extras[key]
        gangs = self.report.tables["gangs"] if self.report is not None else None
        return metric_value(self.summary, gangs, key)


def execute(trace: Trace, task: Task) -> Outcome:
    """Resize, replay, report: the function every backend runs."""
    if task.pools:
        trace = resize_pools(trace, dict(task.pools))
    log = pipeline.replay_policy(trace, task.policy, seed=task.seed, horizon_ms=task.horizon_ms, config=task.config)
    return outcome_of(log, task, natural_horizon_ms=log.info.horizon_ms)


def outcome_of(log: EventLog, task: Task, *, natural_horizon_ms: int) -> Outcome:
    """The report of ``log`` cut down to what ``task`` asks to ship back."""
    report = build_report(log)
    extras = {key: metric_value(report.summary, report.tables["gangs"], key) for key in task.extras}
    return Outcome(
        report.summary,
        extras,
        report if task.keep_report else None,
        log if task.keep_log else None,
        natural_horizon_ms,
    )


# Per worker *process* state, installed once by the pool initializer (never used in the parent).
_WORKER_TRACES: list[Trace] = []


def _install_traces(traces: list[Trace]) -> None:
    _WORKER_TRACES[:] = traces


def _execute_in_worker(task: Task) -> Outcome:
    return execute(_WORKER_TRACES[task.trace], task)


def _execute_on_ray(traces: list[Trace], task: Task) -> Outcome:
    return execute(traces[task.trace], task)


# ---------------------------------------------------------------------------------------------
# Runners


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


class Runner:
    """``with Runner(traces, backend="local", jobs=4) as runner: runner.map(tasks)``."""

    def __init__(self, traces: Sequence[Trace], *, backend: str = "local", jobs: int | None = None, address: str | None = None) -> None:
        if backend not in BACKENDS:
            raise UsageError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
        if backend == "ray" and not ray_available():
            raise UsageError("--backend ray needs Ray: pip install 'gangsim[ray]'")
        if jobs is not None and jobs < 1:
            raise UsageError(f"--jobs {jobs}: must be at least 1")
        self.traces = list(traces)
        self.backend = backend
        self.jobs = jobs if jobs is not None else (os.cpu_count() or 1)
        self.address = address
        self._pool: ProcessPoolExecutor | None = None
        self._ray_started = False
        self._ray_traces: Any = None
        self._ray_fn: Any = None

    # -- lifecycle
    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._ray_started:
            import ray

            ray.shutdown()
            self._ray_started = False

    @property
    def width(self) -> int:
        """How many runs go at once (what ``plan`` evaluates per bisection round)."""
        if self.backend == "ray":
            self._start_ray()
            import ray

            return max(1, int(ray.cluster_resources().get("CPU", 1)))
        return self.jobs

    # -- work
    def map(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[Outcome]:
        """Every task's outcome, in task order."""
        tasks = list(tasks)
        if not tasks:
            return []
        if self.backend == "ray":
            return self._map_ray(tasks, progress)
        if self.jobs == 1 or len(tasks) == 1:
            return self._map_here(tasks, progress)
        return self._map_pool(tasks, progress)

    def _map_here(self, tasks: list[Task], progress: Progress | None) -> list[Outcome]:
        out = []
        for i, task in enumerate(tasks):
            out.append(execute(self.traces[task.trace], task))
            if progress is not None:
                progress(i + 1, len(tasks))
        return out

    def _map_pool(self, tasks: list[Task], progress: Progress | None) -> list[Outcome]:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_install_traces,
                initargs=(self.traces,),
            )
        futures: dict[Future, int] = {self._pool.submit(_execute_in_worker, t): i for i, t in enumerate(tasks)}
        results: list[Outcome | None] = [None] * len(tasks)
        pending = set(futures)
        done_count = 0
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    results[futures[fut]] = fut.result()  # re-raises a worker's exception here
                    done_count += 1
                if progress is not None:
                    progress(done_count, len(tasks))
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise
        return results  # type: ignore[return-value]

    def _start_ray(self) -> None:
        import ray

        if self._ray_fn is not None:
            return
        if not ray.is_initialized():
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False, configure_logging=False)
            self._ray_started = True
        self._ray_traces = ray.put(self.traces)
        self._ray_fn = ray.remote(_execute_on_ray)

    def _map_ray(self, tasks: list[Task], progress: Progress | None) -> list[Outcome]:
        import ray

        self._start_ray()
        refs = [self._ray_fn.remote(self._ray_traces, task) for task in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Outcome | None] = [None] * len(tasks)
        pending = list(refs)
        done_count = 0
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                results[index[ref]] = ray.get(ref)
                done_count += 1
            if progress is not None:
                progress(done_count, len(tasks))
        return results  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# The grid


def parse_sizes(text: str, option: str = "--pool") -> tuple[int, ...]:
    """``10,20,40`` or ``10..40`` or ``10..40:10`` → sizes (duplicates dropped, order kept)."""
    sizes: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if ".." in part:
                span, _, step_text = part.partition(":")
                lo_text, _, hi_text = span.partition("..")
                lo, hi, step = int(lo_text), int(hi_text), int(step_text or 1)
                if lo > hi or step < 1:
                    raise ValueError
                values = list(range(lo, hi + 1, step))
            else:
                values = [int(part)]
        except ValueError:
            raise UsageError(f"{option}: bad size {part!r} (want e.g. 10,20,40 or 10..40 or 10..40:5)") from None
        for v in values:
            if v < 0:
                raise UsageError(f"{option}: bad size {v} (must not be negative)")
            if v not in sizes:
                sizes.append(v)
    return tuple(sizes)


@dataclass(frozen=True, slots=True)
class GridTrace:
    label: str  # as given: "traces/day.yaml" or "cluster.yaml,jobs.yaml"
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Grid:
    traces: tuple[GridTrace, ...]
    policies: tuple[PolicySpec, ...]
    configs: tuple[str | None, ...] = (None,)
    seeds: tuple[int | None, ...] = (None,)
    pools: tuple[tuple[str, tuple[int, ...]], ...] = ()
    horizon_ms: int | None = None

    def points(self) -> Iterator[tuple[int, int, PolicySpec, int | None, tuple[tuple[str, int], ...]]]:
        """``(trace, config, policy, seed, pool sizes)`` in row order (indexes into traces/configs)."""
        names = [name for name, _ in self.pools]
        size_lists = [sizes for _, sizes in self.pools]
        for ti, ci, spec, seed in itertools.product(range(len(self.traces)), range(len(self.configs)), self.policies, self.seeds):
            for sizes in itertools.product(*size_lists):
                yield ti, ci, spec, seed, tuple(zip(names, sizes, strict=True))

    def __len__(self) -> int:
        n = len(self.traces) * len(self.configs) * len(self.policies) * len(self.seeds)
        for _, sizes in self.pools:
            n *= len(sizes)
        return n


def make_grid(
    traces: Sequence[str],
    policies: Sequence[str],
    *,
    configs: Sequence[str | None] = (),
    seeds: Sequence[int | None] = (),
    pools: Mapping[str, Sequence[int]] | None = None,
    horizon: str | int | None = None,
) -> Grid:
    """A grid from command-line values (``--trace a.yaml,b.yaml`` merges two files into one trace)."""
    if not traces:
        raise UsageError("sweep: no trace (give --trace FILE or a --grid file with `traces:`)")
    grid_traces = tuple(GridTrace(t, tuple(p for p in t.split(",") if p)) for t in traces)
    specs = tuple(parse_policy_specs(list(policies) or ["gang"]))
    return Grid(
        traces=grid_traces,
        policies=specs,
        configs=tuple(configs) or (None,),
        seeds=tuple(seeds) or (None,),
        pools=tuple((name, tuple(sizes)) for name, sizes in (pools or {}).items()),
        horizon_ms=duration_option(horizon, "--horizon"),
    )


GRID_KEYS = ("traces", "policies", "configs", "seeds", "pools", "horizon")


def load_grid_file(path: str | Path) -> dict[str, Any]:
    """A grid YAML file → the keyword arguments of :func:`make_grid` (paths made relative to the file).

    ::

        traces: [traces/deadlock.yaml, [cluster.yaml, jobs.yaml]]   # a list item merges files
        policies: [gang, pod, gang+partial-success]
        configs: [null, configs/binpack-gpus.yaml]                   # null: the trace's own
        seeds: [null, 1, 2]
        pools: {gpu: [20, 25, 30]}                                   # or "20..30" / "20..30:5"
        horizon: 6h
    """
    file = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise InputError(f"cannot read the grid file: {exc.strerror or exc}", file=file) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", file=file, line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError("a grid file is a mapping with keys " + ", ".join(GRID_KEYS), file=file)
    unknown = sorted(set(data) - set(GRID_KEYS))
    if unknown:
        raise InputError(f'{unknown[0]}: Unsupported field: known keys: {", ".join(GRID_KEYS)}', file=file)
    base = Path(path).parent

    def rel(p: str) -> str:
        return p if os.path.isabs(p) else os.path.normpath(str(base / p))

    def as_list(key: str) -> list:
        value = data.get(key)
        if value is None:
            return []
        return value if isinstance(value, list) else [value]

    out: dict[str, Any] = {}
    traces = []
    for item in as_list("traces"):
        files = item if isinstance(item, list) else [item]
        if not files or not all(isinstance(f, str) for f in files):
            raise InputError(f"traces: Invalid value: {item!r}: a file name or a list of file names", file=file)
        traces.append(",".join(rel(f) for f in files))
    out["traces"] = traces
    policies = as_list("policies")
    if not all(isinstance(p, str) for p in policies):
        raise InputError("policies: Invalid value: want a list of policy specs such as gang or pod:cfg.yaml", file=file)
    out["policies"] = [p if ":" not in p else p.split(":", 1)[0] + ":" + rel(p.split(":", 1)[1]) for p in policies]
    configs = as_list("configs") if "configs" in data else []
    if not all(c is None or isinstance(c, str) for c in configs):
        raise InputError("configs: Invalid value: want a list of file names (null: the trace's own)", file=file)
    out["configs"] = [None if c is None else rel(c) for c in configs]
    seeds = as_list("seeds")
    if not all(s is None or (isinstance(s, int) and not isinstance(s, bool)) for s in seeds):
        raise InputError("seeds: Invalid value: want a list of integers (null: upstream's node order)", file=file)
    out["seeds"] = seeds
    pools = data.get("pools") or {}
    if not isinstance(pools, dict):
        raise InputError("pools: Invalid value: want a mapping NAME: [sizes] or NAME: 'LO..HI'", file=file)
    parsed: dict[str, tuple[int, ...]] = {}
    for name, sizes in pools.items():
        text = ",".join(str(s) for s in sizes) if isinstance(sizes, list) else str(sizes)
        try:
            parsed[str(name)] = parse_sizes(text, f"pools.{name}")
        except UsageError as exc:
            raise InputError(str(exc), file=file) from None
    out["pools"] = parsed
    out["horizon"] = data.get("horizon")
    return out


@dataclass(frozen=True, slots=True)
class Prepared:
    """A grid with its traces loaded and every run's task built (all checks done)."""

    grid: Grid
    traces: list[Trace]  # one per (trace, config), index ti * len(configs) + ci
    tasks: list[Task]
    coords: list[dict[str, object]]  # the grid coordinates of each task, row order


def prepare(grid: Grid, *, default_duration_ms: int | None = None) -> Prepared:
    """Load every trace × config, resolve every policy's configuration and check every pool
    before anything runs (a bad file or name is exit 2, never a half-done sweep).
    ``default_duration_ms``: ``--default-duration``."""
    traces: list[Trace] = []
    for gt in grid.traces:
        for config in grid.configs:
            # every run stops at the grid's horizon, so an importer may stop there too (issue 16)
            traces.append(pipeline.load(list(gt.paths), config_path=config, default_duration_ms=default_duration_ms, horizon_ms=grid.horizon_ms))
    for trace in traces:
        for name, _ in grid.pools:
            pool_info(trace, name)
    resolved: dict[tuple[int, str], SchedulerConfig | None] = {}
    tasks: list[Task] = []
    coords: list[dict[str, object]] = []
    for ti, ci, spec, seed, sizes in grid.points():
        index = ti * len(grid.configs) + ci
        key = (index, spec.label)
        if key not in resolved:
            resolved[key] = spec.config(traces[index].config)
        tasks.append(Task(index, spec.policy, resolved[key], seed, grid.horizon_ms, sizes))
        coord: dict[str, object] = {
            "trace": grid.traces[ti].label,
            "config": grid.configs[ci],
            "policy": spec.label,
            "seed": seed,
        }
        coord.update({f"pool.{name}": size for name, size in sizes})
        coords.append(coord)
    return Prepared(grid, traces, tasks, coords)


def _metric_schema() -> dict[str, pl.DataType]:
    return {key: (pl.Int64 if kind is int else pl.Float64) for key, kind in metric_types().items()}


def sweep_table(prepared: Prepared, outcomes: Sequence[Outcome]) -> pl.DataFrame:
    """One row per run, in grid order: ``run``, the grid coordinates (``trace``, ``config``,
    ``policy``, ``seed``, ``pool.<name>``…), ``trace_name``, then every summary metric by its
    dotted key (``gpu.stranded_s`` …). No wall times: the same grid gives the same table."""
    schema: dict[str, pl.DataType] = {"run": pl.Int64, "trace": pl.String, "config": pl.String, "policy": pl.String, "seed": pl.Int64}
    for name, _ in prepared.grid.pools:
        schema[f"pool.{name}"] = pl.Int64
    schema["trace_name"] = pl.String
    schema.update(_metric_schema())
    # gpu_equiv.* (GPU-equivalents) only when some run held a GPU share
    schema.update({k: (pl.Int64 if t is int else pl.Float64) for k, t in optional_metric_types([o.summary for o in outcomes]).items()})
    columns: dict[str, list[object]] = {name: [] for name in schema}
    for i, (coord, outcome) in enumerate(zip(prepared.coords, outcomes, strict=True)):
        flat = flatten(outcome.summary)
        row: dict[str, object] = {"run": i, **coord, "trace_name": outcome.summary.get("trace", "")}
        row.update(flat)
        for name in schema:
            columns[name].append(row.get(name))
    return pl.DataFrame(columns, schema=pl.Schema(schema))


def write_table(frame: pl.DataFrame, path: str | Path) -> None:
    """``.parquet`` or ``.csv`` by extension, written to a temporary file and renamed into place."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".parquet", ".csv"):
        raise UsageError(f"-o {path}: the file name must end in .parquet or .csv")
    if target.is_dir():
        raise InputError(f"-o {path}: is a directory")
    parent = target.parent if str(target.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"-o {path}: cannot create {parent}: {exc.strerror or exc}") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    os.close(fd)
    try:
        if suffix == ".parquet":
            frame.write_parquet(tmp, compression="zstd", statistics=True)
        else:
            frame.write_csv(tmp, null_value="", line_terminator="\n", include_header=True)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
