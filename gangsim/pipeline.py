"""Load → replay → report, without any terminal or file I/O of its own (the CLI does that).

The one way the commands reach the loader, the simulator and the report builder: ``gangsim run``
calls it directly; ``diff``, ``plan`` and ``sweep`` through the runners of
``gangsim.whatif.sweep``, which load and replay every run with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gangsim.api.config import SchedulerConfig
from gangsim.api.trace import Trace
from gangsim.eventlog import EventLog
from gangsim.load import load_trace
from gangsim.load.durations import has_durations
from gangsim.report import Report, build_report
from gangsim.sim.replay import replay

Progress = Callable[[int, int, int, int], None]  # (now_ms, until_ms, pods bound so far, pods pending)


def load(
    paths: Sequence[str | Path], *, config_path: str | Path | None = None, default_duration_ms: int | None = None, horizon_ms: int | None = None
) -> Trace:
    """The trace (``default_duration_ms``: ``--default-duration``, for pods without a duration;
    ``horizon_ms``: only replayed before it, so an imported source may stop there, ``load_trace``)."""
    return load_trace(paths, config_path=config_path, default_duration_ms=default_duration_ms, horizon_ms=horizon_ms)


def no_duration_note(trace: Trace) -> str | None:
    """The one line the commands print on stderr when nothing in ``trace`` has a duration."""
    if has_durations(trace.events) or not any(ev.kind in ("Pod", "Job") for ev in trace.events):
        return None
    return (
        f"no Pod or Job in {trace.name} has a duration (gangsim.dev/duration, the Trace's durations or defaultDuration, "
        "or --default-duration D): no pod ever finishes, so without --horizon the replay stops after the last event "
        "and reports no GPU time"
    )


def run_policy(
    trace: Trace,
    policy: str,
    *,
    seed: int | None = None,
    horizon_ms: int | None = None,
    config: SchedulerConfig | None = None,
    progress: Progress | None = None,
) -> Report:
    """One replay of ``trace`` under ``policy`` and its report; ``config`` ``None``: the trace's own."""
    return build_report(replay_policy(trace, policy, seed=seed, horizon_ms=horizon_ms, config=config, progress=progress))


def replay_policy(
    trace: Trace,
    policy: str,
    *,
    seed: int | None = None,
    horizon_ms: int | None = None,
    config: SchedulerConfig | None = None,
    progress: Progress | None = None,
) -> EventLog:
    """One replay's event log (what :func:`run_policy` reports on)."""
    return replay(trace, policy, seed=seed, horizon_ms=horizon_ms, config=config, progress=progress)
