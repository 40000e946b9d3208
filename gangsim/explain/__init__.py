"""``gangsim explain``: why a gang (or pod) is stuck, why it landed where it did, who paid.

A layer above ``sim`` and ``report`` and below the commands: it replays the trace twice, first
plainly to find the gang's pods, then with an ``AttemptRecorder`` on the frameworks that records
each real scheduling attempt of exactly those pods (per-plugin Filter verdicts per node, Score
breakdown), and builds the explanation document from the trace, the event log and the records
(``build``). The doomed-pass shortcut is off in the recording replay (it decides a failing
PodGroup pass without running Filter per pod, and explain wants every pod's attempt); every
other shortcut keeps the reference path's results, so the replay is the one ``run`` makes.
"""

from __future__ import annotations

from dataclasses import replace

from gangsim.api.config import SchedulerConfig
from gangsim.api.trace import Trace
from gangsim.explain.build import SCHEMA_VERSION, build, members_of
from gangsim.explain.record import AttemptRecorder
from gangsim.explain.render import render_json, render_markdown
from gangsim.sim.replay import replay

__all__ = ["SCHEMA_VERSION", "explain", "render_json", "render_markdown"]


def explain(trace: Trace, policy: str, kind: str, name: str, *, at_ms: int | None = None, seed: int | None = None, horizon_ms: int | None = None, config: SchedulerConfig | None = None) -> dict:
    """The explanation of ``--gang``/``--pod`` ``name`` (``kind`` "gang" or "pod") under ``policy``."""
    base = config or trace.config
    first = replay(trace, policy, seed=seed, horizon_ms=horizon_ms, config=base)
    _, pods = members_of(first, kind, name)
    recorder = AttemptRecorder({p.pod for p in pods})
    recording = replace(base, fast_path=replace(base.fast_path, doomed_pass=False))
    log = replay(trace, policy, seed=seed, horizon_ms=horizon_ms, config=recording, recorder=recorder)
    return build(trace, log, recorder, kind, name, at_ms)
