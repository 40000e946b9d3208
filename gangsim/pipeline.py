"""Load → replay → report, without any terminal or file I/O of its own (the CLI does that)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from gangsim.api.trace import Trace
from gangsim.load import load_trace
from gangsim.report import Report, build_report
from gangsim.sim.replay import replay

Progress = Callable[[int, int], None]


def load(paths: Sequence[str | Path], *, config_path: str | Path | None = None) -> Trace:
    return load_trace(paths, config_path=config_path)


def run_policy(
    trace: Trace,
    policy: str,
    *,
    seed: int | None = None,
    horizon_ms: int | None = None,
    progress: Progress | None = None,
) -> Report:
    log = replay(trace, policy, seed=seed, horizon_ms=horizon_ms, progress=progress)
    return build_report(log)
