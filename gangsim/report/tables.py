"""EventLog → the five report tables (Polars), plus the small derived views the renderers show.

Every table has an explicit schema (``*_SCHEMA`` below) so an empty log still yields typed, empty
frames, and a column can never silently change type. Times arrive as integer milliseconds and
leave as ``Float64`` seconds (``ms / 1000``, computed on the integers, so ``wait_s`` is exact to the
millisecond). Rows are sorted by stable, explicit keys (STYLE §6); the timeline and events keep
log order, which is already time order.

``events.reason`` is a ``pl.Enum`` built from :class:`gangsim.eventlog.EventReason`, so a reason
the simulator misspells fails here instead of becoming a new category (STYLE §2.3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TypeVar

import numpy as np
import polars as pl

from gangsim.eventlog import MESSAGE_TEMPLATES, NO_TIME, Coded, EventLog, EventReason, GangRecord, VictimRecord
from gangsim.report.summary import Grid, fmt_count, fmt_duration, fmt_number, int_column
from gangsim.report.waiting import short_reason, waiting_reasons

__all__ = [
    "EVENTS_SCHEMA",
    "GANGS_SCHEMA",
    "PODS_SCHEMA",
    "REASON_ENUM",
    "TABLE_NAMES",
    "TIMELINE_SCHEMA",
    "Tables",
    "VICTIMS_SCHEMA",
    "build_tables",
    "events_table",
    "gang_grid",
    "gangs_that_paid_grid",
    "gangs_table",
    "gangs_that_paid",
    "pods_table",
    "slowest_gangs",
    "timeline_table",
    "top_preemptors",
    "top_preemptors_grid",
    "victims_table",
]

TABLE_NAMES: tuple[str, ...] = ("gangs", "pods", "victims", "timeline", "events")

REASON_ENUM = pl.Enum([reason.value for reason in EventReason])

GANGS_SCHEMA = pl.Schema(
    {
        "gang": pl.String,
        "kind": pl.String,
        "policy": pl.String,
        "pods": pl.Int64,
        "min_count": pl.Int64,
        "gpus": pl.Int64,
        "priority": pl.Int64,
        "submitted_s": pl.Float64,
        "started_s": pl.Float64,
        "finished_s": pl.Float64,
        "wait_s": pl.Float64,
        "restarts": pl.Int64,
        "preemptions": pl.Int64,
        "state": pl.String,
        "schedule_attempts": pl.Int64,
        "broken": pl.Int64,
        "broken_by_preemption": pl.Int64,
        "lost_gpu_s": pl.Float64,
        "waiting_reason": pl.String,
        "topology_key": pl.String,
        "domain": pl.String,
        "domains": pl.Int64,
    }
)

PODS_SCHEMA = pl.Schema(
    {
        "pod": pl.String,
        "attempt": pl.Int64,
        "gang": pl.String,
        "namespace": pl.String,
        "node": pl.String,
        "gpus": pl.Int64,
        "priority": pl.Int64,
        "created_s": pl.Float64,
        "bound_s": pl.Float64,
        "ended_s": pl.Float64,
        "end_reason": pl.String,
        "scheduling_attempts": pl.Int64,
        "waiting_reason": pl.String,
        "milli_cpu": pl.Int64,
        "memory_bytes": pl.Int64,
        "devices": pl.String,
        "gpu_milli": pl.Int64,
    }
)

VICTIMS_SCHEMA = pl.Schema(
    {
        "t_s": pl.Float64,
        "victim_pod": pl.String,
        "victim_attempt": pl.Int64,
        "victim_gang": pl.String,
        "victim_priority": pl.Int64,
        "node": pl.String,
        "preemptor": pl.String,
        "preemptor_priority": pl.Int64,
        "gpus": pl.Int64,
        "lost_gpu_s": pl.Float64,
        "in_vain": pl.Boolean,
        "ended_s": pl.Float64,
    }
)

TIMELINE_SCHEMA = pl.Schema(
    {
        "t_s": pl.Float64,
        "gpus_total": pl.Int64,
        "gpus_allocated": pl.Int64,
        "gpus_busy": pl.Int64,
        "gpus_stranded": pl.Int64,
        "pending_pods": pl.Int64,
        "pending_gpu_pods": pl.Int64,
    }
)
# added when some pod holds a share of a GPU (``EventLog.shared_gpu``): GPU-equivalents, i.e.
# GPU-milli / 1000, whole GPUs counting 1 and a shared pod its share
GPU_EQUIV_SCHEMA = pl.Schema(
    {
        "gpu_equiv_total": pl.Float64,
        "gpu_equiv_allocated": pl.Float64,
        "gpu_equiv_busy": pl.Float64,
        "gpu_equiv_stranded": pl.Float64,
    }
)

EVENTS_SCHEMA = pl.Schema(
    {
        "t_s": pl.Float64,
        "kind": pl.String,
        "object": pl.String,
        "node": pl.String,
        "reason": REASON_ENUM,
        "message": pl.String,
    }
)

_R = TypeVar("_R")


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


def _columns(records: Iterable[_R], getters: dict[str, Callable[[_R], object]]) -> dict[str, list[object]]:
    rows = list(records)
    return {name: [get(r) for r in rows] for name, get in getters.items()}


# ---------------------------------------------------------------------------------------------
# The five tables


def gangs_table(log: EventLog) -> pl.DataFrame:
    policy = log.info.policy
    why = waiting_reasons(log)
    getters: dict[str, Callable[[GangRecord], object]] = {
        "gang": lambda g: g.gang,
        "kind": lambda g: g.kind,
        "policy": lambda g: policy,
        "pods": lambda g: g.pods,
        "min_count": lambda g: g.min_count,
        "gpus": lambda g: g.gpus,
        "priority": lambda g: g.priority,
        "submitted_s": lambda g: g.submitted_ms / 1000,
        "started_s": lambda g: _seconds(g.started_ms),
        "finished_s": lambda g: _seconds(g.finished_ms),
        # on the integers: started − submitted in ms, then seconds (no float cancellation)
        "wait_s": lambda g: None if g.started_ms is None else (g.started_ms - g.submitted_ms) / 1000,
        "restarts": lambda g: g.restarts,
        "preemptions": lambda g: g.preemptions,
        "state": lambda g: str(g.state),
        "schedule_attempts": lambda g: g.schedule_attempts,
        "broken": lambda g: g.broken,
        "broken_by_preemption": lambda g: g.broken_by_preemption,
        "lost_gpu_s": lambda g: g.lost_gpu_ms / 1000,
        "waiting_reason": lambda g: why.get(g.gang, ""),
        "topology_key": lambda g: g.topology_key,
        "domain": lambda g: g.domain,
        "domains": lambda g: g.domains,
    }
    frame = pl.DataFrame(_columns(log.gangs, getters), schema=GANGS_SCHEMA)
    return frame.sort(["submitted_s", "gang"], maintain_order=True)


def _strings(column: Coded) -> pl.Series:
    """A :class:`~gangsim.eventlog.Coded` column as a Polars string column (each value once, gathered by code)."""
    values = pl.Series([str(v) for v in column.values], dtype=pl.String)
    return values.gather(np.asarray(column.codes, dtype=np.uint32))


def _seconds_or_null(ms: object) -> pl.Series:
    """An int64 ms column with :data:`~gangsim.eventlog.NO_TIME` for "never" as Float64 seconds, null for never."""
    values = int_column(ms)
    return pl.Series(values / 1000).scatter(np.flatnonzero(values == NO_TIME), None)


def pods_table(log: EventLog) -> pl.DataFrame:
    p = log.pods
    frame = pl.DataFrame(
        {
            "pod": pl.Series(p.pod.to_list(), dtype=pl.String),
            "attempt": int_column(p.attempt),
            "gang": pl.Series(p.gang, dtype=pl.String),
            "namespace": _strings(p.namespace),
            "node": _strings(p.node),
            "gpus": int_column(p.gpus),
            "priority": int_column(p.priority),
            "created_s": int_column(p.created_ms) / 1000,
            "bound_s": _seconds_or_null(p.bound_ms),
            "ended_s": _seconds_or_null(p.ended_ms),
            "end_reason": _strings(p.end_reason),
            "scheduling_attempts": int_column(p.scheduling_attempts),
            "waiting_reason": pl.Series(p.waiting_reason, dtype=pl.String),
            "milli_cpu": int_column(p.milli_cpu),
            "memory_bytes": int_column(p.memory_bytes),
            "devices": _strings(p.devices),
            "gpu_milli": int_column(p.gpu_milli),
        },
        schema=PODS_SCHEMA,
    )
    return frame.sort(["created_s", "pod", "attempt"], maintain_order=True)


def victims_table(log: EventLog) -> pl.DataFrame:
    getters: dict[str, Callable[[VictimRecord], object]] = {
        "t_s": lambda v: v.t_ms / 1000,
        "victim_pod": lambda v: v.victim_pod,
        "victim_attempt": lambda v: v.victim_attempt,
        "victim_gang": lambda v: v.victim_gang,
        "victim_priority": lambda v: v.victim_priority,
        "node": lambda v: v.node,
        "preemptor": lambda v: v.preemptor,
        "preemptor_priority": lambda v: v.preemptor_priority,
        "gpus": lambda v: v.gpus,
        "lost_gpu_s": lambda v: v.lost_gpu_ms / 1000,
        # INTERFACE: undecided at the horizon counts as in vain
        "in_vain": lambda v: True if v.in_vain is None else bool(v.in_vain),
        "ended_s": lambda v: _seconds(v.ended_ms),
    }
    frame = pl.DataFrame(_columns(log.victims, getters), schema=VICTIMS_SCHEMA)
    return frame.sort(["t_s", "preemptor", "victim_pod"], maintain_order=True)


def timeline_table(log: EventLog) -> pl.DataFrame:
    allocated = int_column(log.tl_gpus_allocated)
    busy = int_column(log.tl_gpus_busy)
    frame = pl.DataFrame(
        {
            "t_s": int_column(log.tl_t_ms) / 1000,
            "gpus_total": int_column(log.tl_gpus_total),
            "gpus_allocated": allocated,
            "gpus_busy": busy,
            "gpus_stranded": allocated - busy,
            "pending_pods": int_column(log.tl_pending_pods),
            "pending_gpu_pods": int_column(log.tl_pending_gpu_pods),
        },
        schema=TIMELINE_SCHEMA,
    )
    if not log.shared_gpu:
        return frame
    m_alloc, m_busy = int_column(log.tl_milli_allocated), int_column(log.tl_milli_busy)
    equiv = pl.DataFrame(
        {
            "gpu_equiv_total": int_column(log.tl_gpus_total).astype(np.float64),
            "gpu_equiv_allocated": m_alloc / 1000,
            "gpu_equiv_busy": m_busy / 1000,
            "gpu_equiv_stranded": (m_alloc - m_busy) / 1000,
        },
        schema=GPU_EQUIV_SCHEMA,
    )
    return pl.concat([frame, equiv], how="horizontal")


def _messages() -> pl.Expr:
    """The ``message`` column: the recorded text, or the event's template rendered from its own
    ``object`` and ``node`` (``eventlog.MESSAGE_TEMPLATES``, the same parts ``render_message`` joins)."""
    message = pl.col("message")
    for code, parts in MESSAGE_TEMPLATES.items():
        rendered = pl.concat_str([pl.col(part) if part in EVENTS_SCHEMA else pl.lit(part) for part in parts])
        message = pl.when(pl.col("_template") == code).then(rendered).otherwise(message)
    return message.alias("message")


def events_table(log: EventLog) -> pl.DataFrame:
    known = {reason.value for reason in EventReason}
    unknown = sorted({str(r) for r in log.ev_reason.values} - known)
    if unknown:
        # a bug in whoever recorded the event, not bad user input
        raise ValueError(f"event log has reasons not in gangsim.eventlog.EventReason: {', '.join(map(repr, unknown))}")
    frame = pl.DataFrame(
        {
            "t_s": int_column(log.ev_t_ms) / 1000,
            "kind": _strings(log.ev_kind),
            "object": pl.Series(log.ev_object.to_list(), dtype=pl.String),
            "node": _strings(log.ev_node),
            "reason": _strings(log.ev_reason).cast(REASON_ENUM),
            "message": _strings(log.ev_text),
            "_template": np.asarray(log.ev_template, dtype=np.uint8),
        }
    )
    return frame.with_columns(_messages()).drop("_template").cast(dict(EVENTS_SCHEMA))


_BUILDERS: dict[str, Callable[[EventLog], pl.DataFrame]] = {
    "gangs": gangs_table,
    "pods": pods_table,
    "victims": victims_table,
    "timeline": timeline_table,
    "events": events_table,
}


class Tables(Mapping[str, pl.DataFrame]):
    """The five tables of one log, in :data:`TABLE_NAMES` order, each built from the log's columns
    when first read and then kept: a report that only shows the gangs (``gangsim run`` on a
    terminal, a sweep's metrics) never builds the pods and events tables of a million-pod replay.
    :meth:`build` gives a table without keeping it, so the writer holds one large table at a time.
    The log must not change any more (it is read when a table is)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._kept: dict[str, pl.DataFrame] = {}

    def build(self, name: str) -> pl.DataFrame:
        kept = self._kept.get(name)
        return kept if kept is not None else _BUILDERS[name](self._log)

    def __getitem__(self, name: str) -> pl.DataFrame:
        if name not in self._kept:
            self._kept[name] = _BUILDERS[name](self._log)
        return self._kept[name]

    def __iter__(self) -> Iterator[str]:
        return iter(TABLE_NAMES)

    def __len__(self) -> int:
        return len(TABLE_NAMES)


def build_tables(log: EventLog) -> Tables:
    """All five tables, in :data:`TABLE_NAMES` order (each built when first read)."""
    return Tables(log)


# ---------------------------------------------------------------------------------------------
# Views shown by the renderers (rich and Markdown show the same rows)


def slowest_gangs(gangs: pl.DataFrame, top: int) -> pl.DataFrame:
    """The ``top`` slowest gangs: never-started ones first (oldest submission first), then started
    ones by ``wait_s`` descending; ties by gang name. Keeps the ``gangs`` columns."""
    never = gangs.filter(pl.col("started_s").is_null()).sort(["submitted_s", "gang"], maintain_order=True)
    started = gangs.filter(pl.col("started_s").is_not_null()).sort(
        ["wait_s", "gang"], descending=[True, False], maintain_order=True
    )
    return pl.concat([never, started], how="vertical").head(max(top, 0))


def _lost_ms_sum() -> pl.Expr:
    # sum in integer GPU·ms so the total does not depend on summation order
    return (pl.col("lost_gpu_s") * 1000).round(0).cast(pl.Int64).sum()


def top_preemptors(victims: pl.DataFrame, top: int) -> pl.DataFrame:
    """Columns ``preemptor``, ``victims``, ``in_vain``, ``lost_gpu_s``; most victims first."""
    grouped = victims.group_by("preemptor").agg(
        pl.len().cast(pl.Int64).alias("victims"),
        pl.col("in_vain").sum().cast(pl.Int64).alias("in_vain"),
        (_lost_ms_sum() / 1000).alias("lost_gpu_s"),
    )
    return grouped.sort(
        ["victims", "lost_gpu_s", "preemptor"], descending=[True, True, False], maintain_order=True
    ).head(max(top, 0))


def gangs_that_paid(victims: pl.DataFrame, top: int) -> pl.DataFrame:
    """Columns ``victim_gang``, ``victims``, ``lost_gpu_s``; most GPU time lost first."""
    grouped = victims.group_by("victim_gang").agg(
        pl.len().cast(pl.Int64).alias("victims"),
        (_lost_ms_sum() / 1000).alias("lost_gpu_s"),
    )
    return grouped.sort(
        ["lost_gpu_s", "victims", "victim_gang"], descending=[True, True, False], maintain_order=True
    ).head(max(top, 0))


NO_GANG = "(no gang)"


def gang_grid(gangs: pl.DataFrame, top: int) -> Grid:
    """:func:`slowest_gangs`, formatted; a never-started gang waits ``never``."""
    rows = tuple(
        (
            r["gang"],
            fmt_count(r["pods"]),
            fmt_count(r["gpus"]),
            fmt_count(r["priority"]),
            "never" if r["wait_s"] is None else fmt_duration(r["wait_s"]),
            fmt_count(r["restarts"]),
            fmt_count(r["preemptions"]),
            r["state"],
            short_reason(r["waiting_reason"]),
        )
        for r in slowest_gangs(gangs, top).iter_rows(named=True)
    )
    columns = ("gang", "pods", "gpus", "priority", "wait", "restarts", "preemptions", "state", "why")
    numeric = (False, True, True, True, True, True, True, False, False)
    return Grid("Slowest gangs", columns, numeric, rows)


def top_preemptors_grid(victims: pl.DataFrame, top: int) -> Grid:
    rows = tuple(
        (r["preemptor"], fmt_count(r["victims"]), fmt_count(r["in_vain"]), fmt_number(r["lost_gpu_s"]))
        for r in top_preemptors(victims, top).iter_rows(named=True)
    )
    return Grid(
        "Top preemptors", ("preemptor", "victims", "in vain", "GPU-s lost"), (False, True, True, True), rows
    )


def gangs_that_paid_grid(victims: pl.DataFrame, top: int) -> Grid:
    rows = tuple(
        (r["victim_gang"] or NO_GANG, fmt_count(r["victims"]), fmt_number(r["lost_gpu_s"]))
        for r in gangs_that_paid(victims, top).iter_rows(named=True)
    )
    return Grid("Gangs that paid", ("victim gang", "victims", "GPU-s lost"), (False, True, True), rows)
