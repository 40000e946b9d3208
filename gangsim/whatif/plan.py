"""``gangsim plan``: the smallest node count of a NodePool that meets every target.

Each size is an independent replay of the trace with that pool resized
(``gangsim.whatif.pools``), all other pools as in the trace; several pools are planned one at a
time. The search is a bisection that uses the runner's width: each round replays up to ``width``
sizes spread evenly inside the current bracket, in parallel, and keeps the smallest size that
meets the targets and the largest failing size below it.

1. Replay the two ends of the range. If the top fails, the range cannot meet the targets
   (``status == "unmet"``). If the bottom meets, the answer is the bottom; the size below it is
   replayed too, and when it also meets the answer is flagged ``below-range``.
2. Otherwise ``lo`` fails and ``hi`` meets; narrow the bracket until ``hi − lo == 1``.
3. The answer is ``hi``; ``hi`` and ``hi − 1`` have both been replayed (``verified``).

Every size is compared over one window: ``--horizon`` when given; otherwise the first round (the
two ends of the range) runs to its natural ends, the longer one becomes the window (the shorter is
read on to it, exactly, see ``window.py``), and every later size is replayed with that horizon.

Bisection assumes that more nodes never make a target worse. Scheduling is not monotonic in
general (a different node count changes tie-breaks and preemption choices), so every pair of
replayed sizes where a smaller one meets and a larger one fails is reported in
``non_monotonic``: the answer is then the smallest size the search found, not necessarily the
smallest that exists.

This module only computes a :class:`PoolPlan`; ``gangsim.report.render_plan`` turns it into
tables, sentences, ``plan.json`` / ``plan.md`` and the figure's series.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gangsim.errors import UsageError
from gangsim.report.diff import Condition, Verdict, needs_gangs_table, target_keys
from gangsim.whatif.sweep import Outcome, Runner, Task
from gangsim.whatif.window import run_in_common_window

__all__ = ["KEY_METRICS", "PoolPlan", "Trial", "parse_range", "plan_pool"]

# shown for every size tried, after the targets' own keys
KEY_METRICS = ("horizon_s", "gpu.utilization", "gpu.stranded_s", "gangs.never_started", "preemption.victims")

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
    window_ms: int | None = None  # every size is compared over [0, window_ms)

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
    window = base.horizon_ms  # one window for every size: --horizon, else fixed by the first round

    def evaluate(sizes: Sequence[int]) -> None:
        nonlocal window
        new = [s for s in dict.fromkeys(sizes) if s not in trials and s >= 0]
        if not new:
            return
        tasks = [
            Task(base.trace, base.policy, base.config, base.seed, window, held_pools + ((pool, s),), extras)
            for s in new
        ]
        if window is None:
            outcomes, read = run_in_common_window(runner, tasks, group=lambda _t: 0)
            window = max(read.window_ms)
        else:
            outcomes = runner.map(tasks)
        for size, outcome in zip(new, outcomes, strict=True):
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
        window_ms=window,
    )


def _trial(size: int, outcome: Outcome, conditions: Sequence[Condition], shown: Sequence[str]) -> Trial:
    verdicts = tuple(c.evaluate(lambda _label, key: outcome.metric(key), undefined_holds=False) for c in conditions)
    metrics = {key: outcome.metric(key) for key in shown}
    return Trial(size, all(v.held for v in verdicts), verdicts, metrics)
