"""EventLog → the ``summary.json`` dict, and how its values read to a person.

Definitions (INTERFACE.md "Reports"): the GPU figures integrate the piecewise-constant timeline
over ``[first sample, horizon)``: sample *i* holds from its own time until the next sample (the last
one until the horizon; a sample at or after the horizon contributes nothing). All of it is exact
integer GPU·ms arithmetic; seconds appear only at the end (``round(ms / 1000, 3)``).

- ``capacity_s`` ∫ gpus_total, ``busy_s`` ∫ gpus_busy, ``stranded_s`` ∫ (allocated − busy),
  ``free_while_pending_s`` ∫ (total − allocated) over the time where ``pending_gpu_pods > 0``,
  ``utilization`` busy / capacity (0.0 when there is no capacity), 6 decimals.
- gang waits: nearest rank, ``sorted[ceil(p/100 · n) − 1]``, on integer ms. ``wait_pN_s`` and
  ``wait_max_s`` over started gangs only; ``wait_censored_pN_s`` over every gang, a gang that never
  started counting as waiting until the horizon (right-censored: its true wait is at least that).
- a victim whose ``in_vain`` is still ``None`` at the horizon counts as in vain.

Keys come out in the declared order (the JSON is written in that order); new keys go at the end
of their section, never renamed (INTERFACE).

The ``fmt_*`` helpers and :func:`summary_rows` are the one place that decides how a value reads,
shared by the rich and Markdown renderers so both say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gangsim.eventlog import NO_TIME, EventLog, GangState
from gangsim.report.metrics import is_started_only_wait, unit_of

__all__ = [
    "PERCENTILES",
    "Grid",
    "build_summary",
    "censored_waits_ms",
    "fmt_delta_in",
    "fmt_in",
    "is_section_row",
    "metric_cell",
    "metric_label",
    "sectioned",
    "row_unit",
    "fmt_count",
    "fmt_duration",
    "fmt_number",
    "never_note",
    "gpu_ms",
    "int_column",
    "nearest_rank",
    "summary_grid",
    "summary_rows",
    "unit_header",
]

PERCENTILES: tuple[int, ...] = (50, 90, 99)
# scheduler_podgroup_schedule_attempts_total{result}
PODGROUP_RESULTS: tuple[str, ...] = ("scheduled", "unschedulable", "waiting_on_preemption", "error")


def int_column(values: object) -> np.ndarray:
    """A log's ``array('q')`` column (or any int sequence) as int64 numpy."""
    return np.asarray(values, dtype=np.int64)


def _s(ms: int) -> float:
    """Integer milliseconds (or GPU·ms) → seconds, 3 decimals."""
    return round(int(ms) / 1000, 3)


def nearest_rank(sorted_values: list[int], p: int) -> int:
    """The nearest-rank ``p``-th percentile of an ascending list (``0`` when empty)."""
    n = len(sorted_values)
    if n == 0:
        return 0
    rank = -(-p * n // 100)  # ceil(p/100 · n) in integers
    return sorted_values[max(rank, 1) - 1]


def gpu_ms(log: EventLog) -> dict[str, int]:
    """The four GPU integrals of the timeline, in GPU·ms (see the module docstring)."""
    t = np.asarray(log.tl_t_ms, dtype=np.int64)
    zero = {"capacity": 0, "busy": 0, "stranded": 0, "free_while_pending": 0}
    if t.size == 0:
        return zero
    if np.any(np.diff(t) < 0):
        raise ValueError("event log timeline is not in time order")
    horizon = int(log.info.horizon_ms)
    starts = np.minimum(t, horizon)
    ends = np.minimum(np.append(t[1:], horizon), horizon)
    dur = np.maximum(ends - starts, 0)
    total = np.asarray(log.tl_gpus_total, dtype=np.int64)
    allocated = np.asarray(log.tl_gpus_allocated, dtype=np.int64)
    busy = np.asarray(log.tl_gpus_busy, dtype=np.int64)
    pending_gpu = np.asarray(log.tl_pending_gpu_pods, dtype=np.int64)
    return {
        "capacity": int(np.dot(total, dur)),
        "busy": int(np.dot(busy, dur)),
        "stranded": int(np.dot(allocated - busy, dur)),
        "free_while_pending": int(np.dot(np.where(pending_gpu > 0, total - allocated, 0), dur)),
    }


def censored_waits_ms(log: EventLog) -> list[int]:
    """Every gang's wait, ascending: started ones to their start, the rest to the horizon."""
    horizon = int(log.info.horizon_ms)
    return sorted(
        g.started_ms - g.submitted_ms if g.started_ms is not None else max(horizon - g.submitted_ms, 0)
        for g in log.gangs
    )


def build_summary(log: EventLog) -> dict:
    """The ``summary.json`` structure for one replay."""
    gpu = gpu_ms(log)
    utilization = round(gpu["busy"] / gpu["capacity"], 6) if gpu["capacity"] > 0 else 0.0

    waits = sorted(g.started_ms - g.submitted_ms for g in log.gangs if g.started_ms is not None)
    censored = censored_waits_ms(log)
    total_gangs = len(log.gangs)
    started = len(waits)

    victims = log.victims
    pods = log.pods
    names = pods.pod.to_list()
    return {
        "trace": log.info.trace,
        "policy": log.info.policy,
        "horizon_s": _s(log.info.horizon_ms),
        "gpu": {
            "capacity_s": _s(gpu["capacity"]),
            "busy_s": _s(gpu["busy"]),
            "stranded_s": _s(gpu["stranded"]),
            "free_while_pending_s": _s(gpu["free_while_pending"]),
            "utilization": utilization,
        },
        "gangs": {
            "total": total_gangs,
            "started": started,
            "completed": sum(1 for g in log.gangs if g.state == GangState.COMPLETED),
            "never_started": total_gangs - started,
            **{f"wait_p{p}_s": _s(nearest_rank(waits, p)) for p in PERCENTILES},
            "wait_max_s": _s(waits[-1] if waits else 0),
            **{f"wait_censored_p{p}_s": _s(nearest_rank(censored, p)) for p in PERCENTILES},
        },
        "preemption": {
            "victims": len(victims),
            "victims_in_vain": sum(1 for v in victims if v.in_vain is None or v.in_vain),
            "lost_gpu_s": _s(sum(v.lost_gpu_ms for v in victims)),
            "gangs_broken": sum(1 for g in log.gangs if g.broken_by_preemption > 0),
        },
        "pods": {
            "total": len(set(names)),
            "bound": len({pod for pod, bound in zip(names, pods.bound_ms) if bound != NO_TIME}),
            "pending_at_end": int(np.count_nonzero((int_column(pods.bound_ms) == NO_TIME) & (int_column(pods.ended_ms) == NO_TIME))),
            "restarts": int(np.count_nonzero(int_column(pods.attempt) > 0)),
        },
        # scheduler metrics (counts only, so the summary stays byte-identical across runs)
        "scheduler": {
            "cycles": int(log.counters.get("scheduling_cycles", 0)),
            **{f"podgroup_attempts_{r}": int(log.podgroup_attempts.get(r, 0)) for r in PODGROUP_RESULTS},
            "podgroup_preemption_attempts": int(log.counters.get("podgroup_preemption_attempts", 0)),
        },
        **({"gpu_equiv": gpu_equiv(log)} if log.shared_gpu else {}),
    }


def gpu_equiv(log: EventLog) -> dict:
    """The ``gpu_equiv`` section (only when some pod held a share of a GPU): the GPU integrals in
    GPU-equivalents (GPU-milli / 1000: a whole GPU counts 1, a shared pod its share), the
    allocation at the horizon, and FGD's allocation ratio when the arrived GPU request reaches
    100 % and 130 % of the cluster's GPUs (static traces only: every pod created at t = 0 and
    none ended before the horizon, as ``gangsim import openb --inflate``; else null)."""
    t = np.asarray(log.tl_t_ms, dtype=np.int64)
    horizon = int(log.info.horizon_ms)
    starts = np.minimum(t, horizon)
    dur = np.maximum(np.minimum(np.append(t[1:], horizon), horizon) - starts, 0)
    total = np.asarray(log.tl_gpus_total, dtype=np.int64) * 1000
    allocated = np.asarray(log.tl_milli_allocated, dtype=np.int64)
    busy = np.asarray(log.tl_milli_busy, dtype=np.int64)
    capacity = int(np.dot(total, dur))
    capacity_now = int(total[-1]) if len(total) else 0
    return {
        "capacity_s": _s(capacity // 1000),
        "allocated_s": _s(int(np.dot(allocated, dur)) // 1000),
        "busy_s": _s(int(np.dot(busy, dur)) // 1000),
        "stranded_s": _s(int(np.dot(allocated - busy, dur)) // 1000),
        "utilization": round(int(np.dot(busy, dur)) / capacity, 6) if capacity > 0 else 0.0,
        "allocated_at_end": round(int(allocated[-1]) / capacity_now, 6) if capacity_now else 0.0,
        "allocation_at_100": _allocation_at(log, 100, capacity_now),
        "allocation_at_130": _allocation_at(log, 130, capacity_now),
    }


def _allocation_at(log: EventLog, percent: int, capacity_milli: int) -> float | None:
    """FGD's "GPU allocation ratio at k % arrived request": walking the pods in creation order,
    the GPU-milli of the placed ones among the first whose request sums to ``percent`` % of the
    cluster (the arrival at which the sum first reaches it); None if not a static trace or the
    requests never reach it."""
    pods = log.pods
    if not capacity_milli or int_column(pods.created_ms).any() or (int_column(pods.ended_ms) != NO_TIME).any() or int_column(pods.attempt).any():
        return None
    target = percent * capacity_milli  # x100: integers only
    arrived = placed = 0
    for requested, bound, milli in zip(pods.gpu_milli_requested, pods.bound_ms, pods.gpu_milli):
        arrived += requested * 100
        if bound != NO_TIME:
            placed += milli
        if arrived >= target:
            return round(placed / capacity_milli, 6)
    return None


# ---------------------------------------------------------------------------------------------
# How values read (shared by the renderers)


def fmt_count(n: int) -> str:
    return f"{n:,}"


def fmt_number(x: float) -> str:
    """``1234.5`` → ``1,234.5``; at most 3 decimals, no trailing zeros."""
    text = f"{x:,.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def fmt_duration(seconds: float) -> str:
    """Compact, in the trace duration syntax: ``1h30m``, ``45s``, ``2m0.5s``, ``0s``."""
    ms = round(seconds * 1000)
    sign = "-" if ms < 0 else ""
    h, rem = divmod(abs(ms), 3_600_000)
    m, rem = divmod(rem, 60_000)
    parts = []
    if h:
        parts.append(f"{h}h")
    if m:
        parts.append(f"{m}m")
    if rem or not parts:
        secs = str(rem // 1000) if rem % 1000 == 0 else f"{rem // 1000}.{rem % 1000:03d}".rstrip("0")
        parts.append(f"{secs}s")
    return sign + "".join(parts)


def row_unit(key: str, values: list[float | int | None]) -> str:
    """The one unit a row (or column) of ``key`` values is shown in: ``GPU-h`` when any of them
    is an hour or more, else ``GPU-s``; ``%``; ``time`` (``1h2m3s``); ``""`` for counts."""
    unit = unit_of(key)
    if unit == "gpu_time":
        return "GPU-h" if any(v is not None and abs(v) >= 3600 for v in values) else "GPU-s"
    return {"ratio": "%", "duration": "time"}.get(unit, "")


def unit_header(key: str, unit: str) -> str:
    """A column heading naming its unit (``gpu.stranded_s (GPU-h)``); durations read as ``1h2m``
    and counts need none."""
    return f"{key} ({unit})" if unit not in ("", "time") else key


def fmt_in(unit: str, value: float | int | None) -> str:
    """A value in the unit :func:`row_unit` chose, without the unit's name; ``n/a`` for ``None``."""
    if value is None:
        return "n/a"
    if unit == "GPU-h":
        return fmt_number(round(value / 3600, 2))
    if unit == "%":
        return f"{value * 100:.1f}"
    if unit == "time":
        return fmt_duration(value)
    return fmt_count(value) if isinstance(value, int) else fmt_number(value)


def fmt_delta_in(unit: str, value: float | int | None) -> str:
    """A signed difference in the row's unit: ``+28m57s``, ``-5.2 pp``, ``+3``; ``=`` for none."""
    if value is None:
        return "n/a"
    if value == 0:
        return "="
    sign = "+" if value > 0 else ""
    return sign + fmt_in(unit, value) + (" pp" if unit == "%" else "")


def never_note(key: str, never_started: int) -> str:
    """`` (3 never)`` beside a wait percentile of a run in which 3 gangs never started: left out
    of a ``wait_pN_s`` (labelled "started only"), counted to the horizon in ``wait_censored_*``."""
    if not never_started or not key.startswith("gangs.wait_"):
        return ""
    return f" ({fmt_count(never_started)} never)"


def metric_label(key: str) -> str:
    """A key's row label under its section heading: the leaf, indented; a wait percentile over
    started gangs only says so."""
    section, _, leaf = key.rpartition(".")
    if not section:
        return leaf
    return f"  {leaf} (started only)" if is_started_only_wait(key) else f"  {leaf}"


def metric_cell(key: str, unit: str, value: float | int | None, never_started: int) -> str:
    """One value in its row's unit, with :func:`never_note` beside a defined wait percentile."""
    return fmt_in(unit, value) + (never_note(key, never_started) if value is not None else "")


def summary_rows(summary: dict) -> list[tuple[str, str, str]]:
    """``(section.key, unit, value)`` for every leaf of the summary, in key order: numbers in
    their one unit (:func:`row_unit`), strings as they are."""
    rows: list[tuple[str, str, str]] = []
    never = summary.get("gangs", {}).get("never_started", 0)
    leaves = [(f"{k}.{sub}", v) for k, sec in summary.items() if isinstance(sec, dict) for sub, v in sec.items()]
    for key, value in [(k, v) for k, v in summary.items() if not isinstance(v, dict)] + leaves:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            unit = row_unit(key, [value])
            rows.append((key, unit, metric_cell(key, unit, value, never)))
        elif value is None:  # undefined (gpu_equiv.allocation_at_* of a trace that is not static)
            rows.append((key, "", "n/a"))
        else:
            rows.append((key, "", str(value)))
    return rows


def is_section_row(row: tuple[str, ...]) -> bool:
    """A section heading (``gpu``, ``gangs`` …) in a grid: a name and nothing else."""
    return len(row) > 1 and bool(row[0]) and not any(row[1:])


def sectioned(rows: list[tuple[str, ...]], key_of=lambda row: row[0]) -> list[tuple[str, ...]]:
    """``rows`` (their first cell a dotted key) with a heading row before each section and the
    keys shown as :func:`metric_label`."""
    out: list[tuple[str, ...]] = []
    section = None
    for row in rows:
        key = key_of(row)
        head = key.rpartition(".")[0]
        if head and head != section:
            section = head
            out.append((head,) + ("",) * (len(row) - 1))
        out.append((metric_label(key),) + tuple(row[1:]))
    return out


@dataclass(frozen=True, slots=True)
class Grid:
    """A small table of already-formatted cells: what a renderer draws, nothing to compute."""

    title: str
    columns: tuple[str, ...]
    numeric: tuple[bool, ...]  # right-aligned columns
    rows: tuple[tuple[str, ...], ...]


def summary_grid(summary: dict) -> Grid:
    """metric | unit | value, keys grouped under their section."""
    return Grid("Summary", ("metric", "unit", "value"), (False, False, True), tuple(sectioned(summary_rows(summary))))


def podgroup_cycles_grid(summary: dict, timings: Mapping[str, Sequence[float]]) -> Grid | None:
    """scheduler_podgroup_schedule_attempts_total{result} and the algorithm's wall time."""
    sched = summary.get("scheduler", {})
    counts = [(r, int(sched.get(f"podgroup_attempts_{r}", 0))) for r in PODGROUP_RESULTS]
    if not any(n for _, n in counts):
        return None
    # (sorted as doubles: no float object per attempt, and a congested log times millions)
    durations = np.sort(np.asarray(timings.get("podgroup_algorithm_s", ()), dtype=np.float64))
    rows = [(r, fmt_count(n)) for r, n in counts]
    if len(durations):
        ms = durations * 1000
        p50 = ms[max(-(-50 * len(ms) // 100), 1) - 1]
        p99 = ms[max(-(-99 * len(ms) // 100), 1) - 1]
        rows.append(("algorithm wall time p50 / p99 / max", f"{p50:.2f} / {p99:.2f} / {ms[-1]:.2f} ms"))
    return Grid("PodGroup cycles (scheduler_podgroup_schedule_attempts_total)", ("result", "attempts"), (False, True), tuple(rows))
