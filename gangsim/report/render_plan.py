"""How a plan reads: the grid of sizes tried, the sentences, ``plan.json``, ``plan.md``, the
terminal view and the series of the plan figure.

:func:`gangsim.whatif.plan.plan_pool` computes a ``PoolPlan``; everything here only formats it
(``gangsim.report.figures`` draws the series). The report layer never imports ``gangsim.whatif``,
so :class:`PlannedPool` and :class:`PlannedTrial` spell out what is read of a plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import orjson
from rich.console import Console
from rich.text import Text

from gangsim.report.diff import Condition, Verdict, target_keys
from gangsim.report.render_diff import ToneGrid, tone_markdown, tone_table
from gangsim.report.summary import fmt_count, fmt_duration, fmt_in, row_unit, unit_header

__all__ = [
    "PlannedPool",
    "PlannedTrial",
    "plan_grid",
    "plan_json",
    "plan_lines",
    "plan_series",
    "render_plan_json",
    "render_plan_markdown",
    "render_plan_terminal",
]


class PlannedTrial(Protocol):
    """One size tried: a ``gangsim.whatif.plan.Trial``."""

    @property
    def size(self) -> int: ...
    @property
    def meets(self) -> bool: ...
    @property
    def verdicts(self) -> tuple[Verdict, ...]: ...
    @property
    def metrics(self) -> dict[str, float | int | None]: ...


class PlannedPool(Protocol):
    """The plan of one pool: a ``gangsim.whatif.plan.PoolPlan``."""

    @property
    def pool(self) -> str: ...
    @property
    def current(self) -> int: ...
    @property
    def gpus_per_node(self) -> int: ...
    @property
    def lo(self) -> int: ...
    @property
    def hi(self) -> int: ...
    @property
    def trials(self) -> Sequence[PlannedTrial]: ...
    @property
    def answer(self) -> int | None: ...
    @property
    def status(self) -> str: ...
    @property
    def verified(self) -> bool: ...
    @property
    def non_monotonic(self) -> Sequence[tuple[int, int]]: ...
    @property
    def window_ms(self) -> int | None: ...

    def trial(self, size: int) -> PlannedTrial | None: ...


def plan_grid(plan: PlannedPool) -> ToneGrid:
    """One column per size tried, one row per shown metric (in one unit per row): ``GPUs``,
    ``meets`` (green when every target holds, red otherwise) and the metrics, the targets' first;
    sizes are few, metric names long, so this shape fits a terminal."""
    keys = list(plan.trials[0].metrics) if plan.trials else []
    columns = ("nodes",) + tuple(fmt_count(t.size) for t in plan.trials)
    numeric = (False,) + (True,) * len(plan.trials)
    marks = tuple(("yes ← answer" if plan.answer == t.size else "yes") if t.meets else "no" for t in plan.trials)
    meets_tones = tuple("better" if t.meets else "worse" for t in plan.trials)
    rows = [("GPUs",) + tuple(fmt_count(t.size * plan.gpus_per_node) for t in plan.trials), ("meets",) + marks]
    tones = [("",) * len(columns), ("",) + meets_tones]
    for k in keys:
        unit = row_unit(k, [t.metrics[k] for t in plan.trials])
        rows.append((unit_header(k, unit),) + tuple(fmt_in(unit, t.metrics[k]) for t in plan.trials))
        tones.append(("",) + tuple(tone if _in_target(t, k) else "" for t, tone in zip(plan.trials, meets_tones, strict=True)))
    title = f"NodePool {plan.pool}: sizes tried (the trace has {plan.current})"
    return ToneGrid(title, columns, numeric, tuple(rows), tuple(tones))


def _in_target(trial: PlannedTrial, key: str) -> bool:
    return any(key in (v.condition.left.key, v.condition.right.key) for v in trial.verdicts)


def _gpus(plan: PlannedPool, size: int) -> str:
    return f" ({fmt_count(size * plan.gpus_per_node)} GPUs)" if plan.gpus_per_node else ""


def plan_lines(plan: PlannedPool) -> list[tuple[str, str]]:
    """``(tone, sentence)``: the comparison window (tone ``""``), the answer, and a warning for
    every non-monotonic finding."""
    lines: list[tuple[str, str]] = []
    if plan.window_ms is not None:
        lines.append(("", f"NodePool {plan.pool}: every size compared over 0 to {fmt_duration(plan.window_ms / 1000)}."))
    if plan.status == "unmet":
        top = plan.trial(plan.hi)
        failing = [v.describe() for v in top.verdicts if not v.held] if top else []
        lines.append(("worse", f"NodePool {plan.pool}: no size in {plan.lo}..{plan.hi} meets every target; at {plan.hi}: "
                               + "; ".join(failing) + " does not hold."))
    elif plan.status == "below-range":
        lines.append(("worse", f"NodePool {plan.pool}: the bottom of the range, {plan.lo}, already meets every target and so does "
                               f"{plan.lo - 1}: the smallest size lies below the range (try a lower --range)."))
    else:
        answer = plan.answer or 0
        below = "" if answer == 0 else f"; {answer - 1} does not"
        checked = " (both replayed)" if plan.verified and answer > 0 else ""
        lines.append(("better", f"NodePool {plan.pool}: {answer} nodes{_gpus(plan, answer)} is the smallest size that meets every "
                                f"target{below}{checked}. The trace has {plan.current}."))
    if plan.answer is not None:
        chosen = plan.trial(plan.answer)
        never = chosen.metrics.get("gangs.never_started") if chosen else None
        if never:
            lines.append(("worse", f"note: at {plan.answer} nodes {never} gang(s) never start; gang wait percentiles count started "
                                   "gangs only: add --target 'gangs.never_started == 0' to require every gang to start."))
    for small, big in plan.non_monotonic:
        lines.append(("worse", f"warning: NodePool {plan.pool} is not monotonic here: {small} nodes meet every target but {big} do not; "
                               "bisection assumes more nodes never hurt, so a smaller size it skipped might meet the targets too."))
    return lines


def plan_json(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PlannedPool]) -> dict:
    return {
        "trace": trace,
        "policy": label,
        "targets": [c.text for c in conditions],
        "pools": [
            {
                "pool": p.pool,
                "current": p.current,
                "gpus_per_node": p.gpus_per_node,
                "range": [p.lo, p.hi],
                "status": p.status,
                "answer": p.answer,
                "verified": p.verified,
                "non_monotonic": [list(pair) for pair in p.non_monotonic],
                "window_s": None if p.window_ms is None else p.window_ms / 1000,
                "trials": [
                    {"size": t.size, "meets": t.meets, "targets": [v.to_json() for v in t.verdicts], "metrics": t.metrics}
                    for t in p.trials
                ],
            }
            for p in plans
        ],
    }


def render_plan_json(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PlannedPool]) -> bytes:
    return orjson.dumps(plan_json(trace, label, conditions, plans), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def render_plan_markdown(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PlannedPool]) -> str:
    lines = [f"## gangsim plan: {trace} (policy `{label}`)", ""]
    lines.append("Targets: " + ", ".join(f"`{c.text}`" for c in conditions))
    for plan in plans:
        lines += ["", f"### NodePool {plan.pool}", ""]
        for tone, text in plan_lines(plan):
            lines.append(f"- {'✅ ' if tone == 'better' else '⚠️ ' if tone == 'worse' else ''}{text}")
        lines.append("")
        lines += tone_markdown(plan_grid(plan))
    return "\n".join(lines) + "\n"


def render_plan_terminal(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PlannedPool], console: Console) -> None:
    console.print(Text(f"plan: {trace} (policy {label}); targets: " + ", ".join(c.text for c in conditions)))
    for plan in plans:
        console.print(tone_table(plan_grid(plan), console.width))
        for tone, text in plan_lines(plan):
            console.print(Text(text, style={"better": "bold green", "worse": "bold red"}.get(tone, "")))


def plan_series(plan: PlannedPool, conditions: Sequence[Condition]) -> dict:
    """What the plan figure draws (and ``report.html`` embeds): sizes, meets, each target metric,
    and the thresholds of targets that compare a metric with a number."""
    keys = target_keys(conditions)
    thresholds: dict[str, list[dict]] = {}
    for c in conditions:
        for metric, other in ((c.left, c.right), (c.right, c.left)):
            if metric.key is not None and other.number is not None:
                thresholds.setdefault(metric.key, []).append({"value": other.number, "expr": c.text})
    return {
        "pool": plan.pool,
        "answer": plan.answer,
        "sizes": [t.size for t in plan.trials],
        "meets": [t.meets for t in plan.trials],
        "targets": keys,
        "metrics": {k: [t.metrics[k] for t in plan.trials] for k in keys},
        "thresholds": thresholds,
    }
