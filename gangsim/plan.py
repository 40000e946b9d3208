"""``gangsim plan``: the smallest node count of a NodePool that meets every target.

Each size is an independent replay of the trace with that pool resized (``gangsim.pools``), all
other pools as in the trace; several pools are planned one at a time. The search is a bisection
that uses the runner's width: each round replays up to ``width`` sizes spread evenly inside the
current bracket, in parallel, and keeps the smallest size that meets the targets and the largest
failing size below it.

1. Replay the two ends of the range. If the top fails, the range cannot meet the targets
   (``status == "unmet"``). If the bottom meets, the answer is the bottom; the size below it is
   replayed too, and when it also meets the answer is flagged ``below-range``.
2. Otherwise ``lo`` fails and ``hi`` meets; narrow the bracket until ``hi − lo == 1``.
3. The answer is ``hi``; ``hi`` and ``hi − 1`` have both been replayed (``verified``).

Bisection assumes that more nodes never make a target worse. Scheduling is not monotonic in
general (a different node count changes tie-breaks and preemption choices), so every pair of
replayed sizes where a smaller one meets and a larger one fails is reported in
``non_monotonic``: the answer is then the smallest size the search found, not necessarily the
smallest that exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import orjson
from rich.console import Console
from rich.text import Text

from gangsim.errors import UsageError
from gangsim.report.diff import Condition, Verdict, needs_gangs_table
from gangsim.report.render_diff import ToneGrid, fmt_metric, tone_markdown, tone_table
from gangsim.report.summary import fmt_count
from gangsim.sweep import Outcome, Runner, Task

__all__ = [
    "KEY_METRICS",
    "PoolPlan",
    "Trial",
    "parse_range",
    "plan_grid",
    "plan_json",
    "plan_lines",
    "plan_pool",
    "plan_series",
    "render_plan_json",
    "render_plan_markdown",
    "render_plan_terminal",
    "target_keys",
]

# shown for every size tried, after the targets' own keys
KEY_METRICS = ("gpu.utilization", "gpu.stranded_s", "gangs.never_started", "preemption.victims")

Progress = Callable[[str, int], None]  # (pool, runs done so far)


@dataclass(frozen=True, slots=True)
class Trial:
    size: int
    meets: bool
    verdicts: tuple[Verdict, ...]
    metrics: dict[str, float | int | None]


@dataclass(frozen=True, slots=True)
class PoolPlan:
    pool: str
    current: int  # the size in the trace
    gpus_per_node: int
    lo: int
    hi: int
    trials: tuple[Trial, ...]  # by size
    answer: int | None
    status: str  # "found" | "below-range" | "unmet"
    verified: bool  # answer meets and answer − 1 fails, both replayed
    non_monotonic: tuple[tuple[int, int], ...] = field(default=())  # (smaller meets, larger fails)

    def trial(self, size: int) -> Trial | None:
        for t in self.trials:
            if t.size == size:
                return t
        return None


def parse_range(text: str, option: str = "--range") -> tuple[int, int]:
    """``LO..HI`` (inclusive, 0 ≤ LO ≤ HI)."""
    lo_text, sep, hi_text = text.partition("..")
    try:
        if not sep:
            raise ValueError
        lo, hi = int(lo_text), int(hi_text)
    except ValueError:
        raise UsageError(f"{option} {text!r}: want LO..HI, e.g. 10..200") from None
    if lo < 0 or lo > hi:
        raise UsageError(f"{option} {text!r}: want 0 <= LO <= HI")
    return lo, hi


def target_keys(conditions: Sequence[Condition]) -> list[str]:
    keys: list[str] = []
    for c in conditions:
        for _, key in c.keys():
            if key not in keys:
                keys.append(key)
    return keys


def _inner_points(lo: int, hi: int, width: int) -> list[int]:
    """Up to ``width`` sizes strictly between ``lo`` and ``hi``, evenly spread (plain bisection
    when ``width == 1``)."""
    points: list[int] = []
    for j in range(1, width + 1):
        p = lo + round(j * (hi - lo) / (width + 1))
        if lo < p < hi and p not in points:
            points.append(p)
    return points or ([(lo + hi) // 2] if hi - lo > 1 else [])


def plan_pool(
    runner: Runner,
    base: Task,
    pool: str,
    current: int,
    gpus_per_node: int,
    lo: int,
    hi: int,
    conditions: Sequence[Condition],
    *,
    progress: Progress | None = None,
) -> PoolPlan:
    """Search ``lo..hi`` for the smallest size of ``pool`` that meets every condition."""
    keys = target_keys(conditions)
    extras = tuple(k for k in keys if needs_gangs_table(k))
    shown = keys + [k for k in KEY_METRICS if k not in keys]
    trials: dict[int, Trial] = {}
    held_pools = tuple((name, size) for name, size in base.pools if name != pool)
    width = max(1, runner.width)

    def evaluate(sizes: Sequence[int]) -> None:
        new = [s for s in dict.fromkeys(sizes) if s not in trials and s >= 0]
        if not new:
            return
        tasks = [
            Task(base.trace, base.policy, base.config, base.seed, base.horizon_ms, held_pools + ((pool, s),), extras)
            for s in new
        ]
        for size, outcome in zip(new, runner.map(tasks), strict=True):
            trials[size] = _trial(size, outcome, conditions, shown)
        if progress is not None:
            progress(pool, len(trials))

    evaluate([lo, hi])
    non_monotonic: list[tuple[int, int]] = []
    if not trials[hi].meets:
        answer, status = None, "unmet"
    elif trials[lo].meets:
        answer, status = lo, "found"
        if lo > 0:
            evaluate([lo - 1])
            if trials[lo - 1].meets:
                status = "below-range"
    else:
        a, b = lo, hi  # a fails, b meets
        while b - a > 1:
            evaluate(_inner_points(a, b, width))
            inside = sorted(s for s in trials if a <= s <= b)
            b = min(s for s in inside if trials[s].meets)
            a = max(s for s in inside if s < b and not trials[s].meets)
        answer, status = b, "found"
    sizes = sorted(trials)
    for i, small in enumerate(sizes):
        if trials[small].meets:
            non_monotonic.extend((small, big) for big in sizes[i + 1:] if not trials[big].meets)
    verified = answer is not None and trials[answer].meets and (answer == 0 or (answer - 1 in trials and not trials[answer - 1].meets))
    return PoolPlan(
        pool=pool,
        current=current,
        gpus_per_node=gpus_per_node,
        lo=lo,
        hi=hi,
        trials=tuple(trials[s] for s in sizes),
        answer=answer,
        status=status,
        verified=verified,
        non_monotonic=tuple(non_monotonic),
    )


def _trial(size: int, outcome: Outcome, conditions: Sequence[Condition], shown: Sequence[str]) -> Trial:
    verdicts = tuple(c.evaluate(lambda _label, key: outcome.metric(key), undefined_holds=False) for c in conditions)
    metrics = {key: outcome.metric(key) for key in shown}
    return Trial(size, all(v.held for v in verdicts), verdicts, metrics)


# ---------------------------------------------------------------------------------------------
# How a plan reads (tables, sentences, JSON, plot series)


def plan_grid(plan: PoolPlan) -> ToneGrid:
    """size | GPUs | meets | each shown metric; rows green when every target holds, red otherwise."""
    keys = list(plan.trials[0].metrics) if plan.trials else []
    columns = ("nodes", "GPUs", "meets") + tuple(keys)
    numeric = (True, True, False) + (True,) * len(keys)
    rows, tones = [], []
    for t in plan.trials:
        mark = "yes" if t.meets else "no"
        if plan.answer == t.size:
            mark += " ← answer"
        rows.append((fmt_count(t.size), fmt_count(t.size * plan.gpus_per_node), mark) + tuple(fmt_metric(k, t.metrics[k]) for k in keys))
        tone = "better" if t.meets else "worse"
        tones.append(("", "", tone) + tuple(tone if _in_target(t, k) else "" for k in keys))
    title = f"NodePool {plan.pool}: sizes tried (the trace has {plan.current})"
    return ToneGrid(title, columns, numeric, tuple(rows), tuple(tones))


def _in_target(trial: Trial, key: str) -> bool:
    return any(key in (v.condition.left.key, v.condition.right.key) for v in trial.verdicts)


def _gpus(plan: PoolPlan, size: int) -> str:
    return f" ({fmt_count(size * plan.gpus_per_node)} GPUs)" if plan.gpus_per_node else ""


def plan_lines(plan: PoolPlan) -> list[tuple[str, str]]:
    """``(tone, sentence)``: the answer, and a warning for every non-monotonic finding."""
    lines: list[tuple[str, str]] = []
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


def plan_json(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PoolPlan]) -> dict:
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
                "trials": [
                    {"size": t.size, "meets": t.meets, "targets": [v.to_json() for v in t.verdicts], "metrics": t.metrics}
                    for t in p.trials
                ],
            }
            for p in plans
        ],
    }


def render_plan_json(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PoolPlan]) -> bytes:
    return orjson.dumps(plan_json(trace, label, conditions, plans), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def render_plan_markdown(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PoolPlan]) -> str:
    lines = [f"## gangsim plan: {trace} (policy `{label}`)", ""]
    lines.append("Targets: " + ", ".join(f"`{c.text}`" for c in conditions))
    for plan in plans:
        lines += ["", f"### NodePool {plan.pool}", ""]
        for tone, text in plan_lines(plan):
            lines.append(f"- {'✅' if tone == 'better' else '⚠️'} {text}")
        lines.append("")
        lines += tone_markdown(plan_grid(plan))
    return "\n".join(lines) + "\n"


def render_plan_terminal(trace: str, label: str, conditions: Sequence[Condition], plans: Sequence[PoolPlan], console: Console) -> None:
    console.print(Text(f"plan: {trace} (policy {label}); targets: " + ", ".join(c.text for c in conditions)))
    for plan in plans:
        console.print(tone_table(plan_grid(plan)))
        for tone, text in plan_lines(plan):
            console.print(Text(text, style="bold green" if tone == "better" else "bold red"))


def plan_series(plan: PoolPlan, conditions: Sequence[Condition]) -> dict:
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
