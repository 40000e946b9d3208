"""The data behind the per-gang timeline (``gang_timeline.png``, report.html): one row per gang,
sorted by arrival (then name), with its phases as intervals in hours:

- ``waiting`` — submission until the first of its pods is bound (or until it starts);
- ``partial`` — some pods bound, the gang not making progress yet (first bind until start);
- ``running`` — from its start (first progress) until it finishes or the horizon;

and ``preempted`` — the instants at which its pods were preempted. The ``labels`` name the gangs
with the longest waits (the ``LABELLED`` longest; a gang that never started waits until the
horizon). At most ``MAX_GANGS`` rows (the earliest arrivals); ``shown``/``gangs`` say so.
Nothing is drawn here (``gangsim.report.figures`` draws).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangsim.api.duration import format_duration_ms

if TYPE_CHECKING:
    from gangsim.report import Report

MAX_GANGS = 60
LABELLED = 5


def _h(seconds: float) -> float:
    return round(seconds / 3600, 6)


def gang_timeline_series(report: Report) -> dict:
    """``{"gangs": n, "shown": k, "horizon_h", "rows": [{"gang", "waiting": [a, b] | None,
    "partial": [a, b] | None, "running": [a, b] | None, "preempted": [t, …], "wait_h", "label"}]}``."""
    horizon = float(report.summary.get("horizon_s", 0.0))
    gangs = report.tables["gangs"].sort(["submitted_s", "gang"], maintain_order=True)
    first_bind: dict[str, float] = {}
    for gang, bound in report.tables["pods"].select("gang", "bound_s").iter_rows():
        if gang and bound is not None and (gang not in first_bind or bound < first_bind[gang]):
            first_bind[gang] = bound
    preempted: dict[str, list[float]] = {}
    for gang, t in report.tables["victims"].select("victim_gang", "t_s").iter_rows():
        if gang:
            preempted.setdefault(gang, []).append(_h(t))
    rows = []
    for g in gangs.head(MAX_GANGS).iter_rows(named=True):
        sub, start, end = g["submitted_s"], g["started_s"], g["finished_s"]
        bound = first_bind.get(g["gang"])
        wait_until = start if start is not None else horizon
        partial_from = bound if bound is not None and bound < wait_until else None
        rows.append(
            {
                "gang": g["gang"],
                "waiting": [_h(sub), _h(partial_from if partial_from is not None else wait_until)],
                "partial": [_h(partial_from), _h(wait_until)] if partial_from is not None else None,
                "running": [_h(start), _h(end if end is not None else horizon)] if start is not None else None,
                "preempted": sorted(preempted.get(g["gang"], [])),
                "wait_h": _h(wait_until - sub),
                "label": "",
            }
        )
    for r in sorted(rows, key=lambda r: (-r["wait_h"], r["gang"]))[:LABELLED]:
        if r["wait_h"] > 0:
            r["label"] = "never started" if r["running"] is None else f"waited {format_duration_ms(round(r['wait_h'] * 3600) * 1000)}"  # whole seconds: a float of hours does not round-trip to milliseconds
    return {"gangs": gangs.height, "shown": len(rows), "horizon_h": _h(horizon), "rows": rows}
