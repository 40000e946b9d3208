"""One comparison window for every run of a ``diff`` or ``sweep``.

Without ``--horizon`` (and without a ``horizon`` in the trace) each replay stops when nothing can
change any more, so two policies end at different times and their window-dependent metrics
(``horizon_s``, GPU capacity / busy / stranded / idle, utilisation, censored waits) would cover
different windows. Here every run of one trace is read over the same window: ``--horizon`` when
given, otherwise the longest natural horizon among them.

Widening is exact, not an estimate: a run shorter than the window stopped ``idle`` (all runs of
one trace share the trace's horizon and the safety horizon, so only an idle stop can come
earlier), and after an idle stop nothing changes, so its last state holds until the window's end
— what a replay with ``--horizon WINDOW`` reports (pinned by a test). The one exception, a run
that hit the safety horizon of a resized trace before another run went idle, keeps its own
horizon; :class:`Window` lists it.

Single-policy ``gangsim run`` never goes through here: its reports are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace

from gangsim.whatif.sweep import Outcome, Progress, Runner, Task, outcome_of

__all__ = ["Window", "run_in_common_window"]


@dataclass(frozen=True, slots=True)
class Window:
    """The window each run was compared over."""

    window_ms: tuple[int, ...]  # per run, in task order
    natural_ms: tuple[int, ...]  # where each replay stopped by itself
    given: bool  # from --horizon (or the trace's own horizon): every run stopped there

    @property
    def common(self) -> bool:
        return len(set(self.window_ms)) <= 1

    @property
    def widened(self) -> tuple[int, ...]:
        """Indexes of the runs read past their natural horizon."""
        return tuple(i for i, (w, n) in enumerate(zip(self.window_ms, self.natural_ms, strict=True)) if w > n)


def run_in_common_window(
    runner: Runner,
    tasks: Sequence[Task],
    *,
    group: Callable[[Task], Hashable] = lambda t: t.trace,
    progress: Progress | None = None,
) -> tuple[list[Outcome], Window]:
    """Run ``tasks`` and read every run of one ``group`` (default: one trace) over the longest
    natural horizon of that group. The outcomes carry no log."""
    tasks = list(tasks)
    outcomes = runner.map([replace(t, keep_log=True) for t in tasks], progress=progress)
    longest: dict[Hashable, int] = {}
    for task, outcome in zip(tasks, outcomes, strict=True):
        key = group(task)
        longest[key] = max(longest.get(key, 0), _natural_ms(outcome))
    out: list[Outcome] = []
    windows: list[int] = []
    naturals: list[int] = []
    for task, outcome in zip(tasks, outcomes, strict=True):
        log = outcome.log
        natural = _natural_ms(outcome)
        window = longest[group(task)]
        if log is not None and window > natural and log.info.stopped_by == "idle":
            out.append(outcome_of(log.over_window(window), task, natural_horizon_ms=natural))
        else:
            window = natural
            out.append(replace(outcome, log=None) if not task.keep_log else outcome)
        windows.append(window)
        naturals.append(natural)
    given = all(t.horizon_ms is not None for t in tasks)
    return out, Window(tuple(windows), tuple(naturals), given)


def _natural_ms(outcome: Outcome) -> int:
    """Where the run stopped (a runner that ships no log: its summary's ``horizon_s``)."""
    if outcome.log is not None:
        return outcome.log.info.horizon_ms
    return round(float(outcome.summary.get("horizon_s", 0)) * 1000)
