"""The data behind the plots: plain series computed from reports, nothing drawn here.

``gangsim.report.figures`` draws them with matplotlib (the optional ``gangsim[plot]`` extra,
imported lazily there and nowhere else: the rest of ``report/`` depends only on Polars, rich,
orjson and numpy); ``report/html.py`` embeds the same series as JSON in ``report.html`` so what a
reader sees and what a script parses agree.
Times are hours, rounded to 6 decimals (3.6 ms), so the JSON is small and byte-stable.

- :func:`gpu_state_series` — the timeline as four stacked step series that add up to the
  capacity: ``busy`` (held by progressing gangs), ``stranded`` (held by gangs not progressing),
  ``free_while_pending`` (unallocated while a GPU pod is pending), ``free`` (unallocated, nothing
  pending). Sample *i* holds from ``t_h[i]`` to ``t_h[i+1]``; the last point is the horizon.
- :func:`wait_cdf_series` — sorted gang waits (hours) and the fraction of *all* gangs started
  within that wait: the curve stops below 1 when some gangs never started.
- :func:`victims_series` — cumulative preemption victims and victims in vain over time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from gangsim.report.timeline import gang_timeline_series

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["GPU_STATES", "gpu_state_series", "plots_data", "victims_series", "wait_cdf_series"]

GPU_STATES: tuple[str, ...] = ("busy", "stranded", "free_while_pending", "free")


def _h(seconds: float) -> float:
    return round(seconds / 3600, 6)


def _horizon_s(report: Report) -> float:
    return float(report.summary.get("horizon_s", 0.0))


def gpu_state_series(report: Report) -> dict[str, list]:
    """``{"t_h": [...], "busy": [...], "stranded": [...], "free_while_pending": [...], "free": [...]}``
    (whole GPUs), plus ``equiv_allocated`` / ``equiv_busy`` in GPU-equivalents when the timeline
    has them (some pod held a share of a GPU)."""
    horizon = _horizon_s(report)
    tl = report.tables["timeline"].filter(pl.col("t_s") < horizon)
    t = tl.get_column("t_s").to_list()
    total = tl.get_column("gpus_total").to_list()
    allocated = tl.get_column("gpus_allocated").to_list()
    busy = tl.get_column("gpus_busy").to_list()
    pending = tl.get_column("pending_gpu_pods").to_list()
    out: dict[str, list] = {"t_h": [], "busy": [], "stranded": [], "free_while_pending": [], "free": []}
    for i, ts in enumerate(t):
        free = total[i] - allocated[i]
        out["t_h"].append(_h(ts))
        out["busy"].append(busy[i])
        out["stranded"].append(allocated[i] - busy[i])
        out["free_while_pending"].append(free if pending[i] > 0 else 0)
        out["free"].append(0 if pending[i] > 0 else free)
    keys = GPU_STATES
    if "gpu_equiv_allocated" in tl.columns:  # shared GPUs: GPU-equivalents allocated / busy as lines
        out["equiv_allocated"] = tl.get_column("gpu_equiv_allocated").to_list()
        out["equiv_busy"] = tl.get_column("gpu_equiv_busy").to_list()
        keys = (*GPU_STATES, "equiv_allocated", "equiv_busy")
    if t:  # the last state holds until the horizon
        out["t_h"].append(_h(horizon))
        for key in keys:
            out[key].append(out[key][-1])
    return out


def wait_cdf_series(report: Report) -> dict[str, object]:
    """``{"wait_h": [...], "fraction": [...], "gangs": n, "started": k}`` (waits ascending)."""
    gangs = report.tables["gangs"]
    waits = sorted(gangs.get_column("wait_s").drop_nulls().to_list())
    n = gangs.height
    return {
        "wait_h": [_h(w) for w in waits],
        "fraction": [round((i + 1) / n, 6) for i in range(len(waits))],
        "gangs": n,
        "started": len(waits),
    }


def victims_series(report: Report) -> dict[str, list]:
    """``{"t_h": [0, t1, …, horizon], "victims": [0, 1, …], "in_vain": [0, …]}`` (cumulative steps)."""
    victims = report.tables["victims"].sort("t_s", maintain_order=True)
    out: dict[str, list] = {"t_h": [0.0], "victims": [0], "in_vain": [0]}
    count = vain = 0
    for t_s, in_vain in victims.select("t_s", "in_vain").iter_rows():
        count += 1
        vain += 1 if in_vain else 0
        if out["t_h"][-1] == _h(t_s):
            out["victims"][-1], out["in_vain"][-1] = count, vain
        else:
            out["t_h"].append(_h(t_s))
            out["victims"].append(count)
            out["in_vain"].append(vain)
    out["t_h"].append(max(_h(_horizon_s(report)), out["t_h"][-1]))
    out["victims"].append(count)
    out["in_vain"].append(vain)
    return out


def plots_data(kind: str, labels: Sequence[str], reports: Sequence[Report]) -> dict:
    """What ``report.html`` embeds as ``<script type="application/json" id="gangsim-data">``:
    ``{"kind": "run"|"diff", "trace", "labels", "summaries": {label: summary},
    "series": {"gpu_state": {label: …}, "gang_wait_cdf": {label: …}, "victims": {label: …}}}``."""
    return {
        "kind": kind,
        "trace": str(reports[0].summary.get("trace", "")) if reports else "",
        "labels": list(labels),
        "summaries": {label: r.summary for label, r in zip(labels, reports, strict=True)},
        "series": {
            "gpu_state": {label: gpu_state_series(r) for label, r in zip(labels, reports, strict=True)},
            "gang_wait_cdf": {label: wait_cdf_series(r) for label, r in zip(labels, reports, strict=True)},
            "victims": {label: victims_series(r) for label, r in zip(labels, reports, strict=True)},
            "gang_timeline": {label: gang_timeline_series(r) for label, r in zip(labels, reports, strict=True)},
        },
    }
