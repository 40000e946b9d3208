"""What each summary metric is: its unit, which way is better (if any), and a short note.

The one table of metric metadata the renderers (run summary, diff, plan, sweep) and the diff's
colouring read. A key that is not listed here (a key a later change adds to ``summary.json``)
still renders: its unit is derived from its name (:func:`unit_of`) and its direction is
``NEUTRAL`` (never coloured) until it is listed in :data:`DIRECTIONS`.

Units (one per row; a renderer never mixes two units in one row):

- ``gpu_time``: GPU-seconds (keys ending ``_s`` in the ``gpu`` and ``gpu_equiv`` sections, or with
  ``gpu`` in the leaf)
- ``duration``: seconds, shown as ``1h2m3s`` (other keys ending ``_s``)
- ``ratio``: a fraction shown in % (``utilization``, ``*_ratio``, ``allocated_at_end``, ``allocation_at_*``)
- ``count``: an integer; ``number``: anything else

Directions (README "Which way is better"): a metric is coloured better / worse in ``diff`` only
when one direction is right whatever the policies do, over the same window. The rest are
``NEUTRAL``, with the reason in :data:`NOTES`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

__all__ = ["DIRECTIONS", "NOTES", "Direction", "MetricInfo", "direction", "is_started_only_wait", "metric_info", "unit_of"]


class Direction(IntEnum):
    LOWER = -1  # lower is better
    NEUTRAL = 0  # an input, a cost of the model, or ambiguous: never coloured
    HIGHER = 1  # higher is better


_CENSORED_WAIT = re.compile(r"gangs\.wait_censored_p\d{1,3}_s")
_STARTED_WAIT = re.compile(r"gangs\.wait_(p\d{1,3}|max)_s")

DIRECTIONS: dict[str, Direction] = {
    "gpu.stranded_s": Direction.LOWER,
    "gangs.started": Direction.HIGHER,
    "gangs.completed": Direction.HIGHER,
    "gangs.never_started": Direction.LOWER,
    "preemption.victims": Direction.LOWER,
    "preemption.victims_in_vain": Direction.LOWER,
    "preemption.lost_gpu_s": Direction.LOWER,
    "preemption.gangs_broken": Direction.LOWER,
    "pods.pending_at_end": Direction.LOWER,
    "pods.restarts": Direction.LOWER,
    # GPU-equivalents (shared GPUs by their share, issue 14): stranded lower; the static-mode
    # allocation ratios higher (all pods arrive at t=0 and never leave, so more placed is better);
    # capacity / allocated / busy / utilization neutral as their whole-GPU twins
    "gpu_equiv.stranded_s": Direction.LOWER,
    "gpu_equiv.allocation_at_100": Direction.HIGHER,
    "gpu_equiv.allocation_at_130": Direction.HIGHER,
    "gangs.wait_s": Direction.LOWER,  # one gang's own wait (the per-gang table of diff)
}

# why a metric that looks directional is not coloured
NOTES: dict[str, str] = {
    "horizon_s": "the comparison window (input)",
    "gpu.capacity_s": "GPUs x window (input)",
    "gpu.busy_s": "includes work later lost to preemption",
    "gpu.utilization": "includes work later lost to preemption",
    "gpu.free_while_pending_s": "lower also when incomplete gangs hold GPUs",
    "pods.bound": "includes pods of gangs that never ran",
    "gangs.wait_censored": "every gang; never started = waited until the window's end",
    "gangs.wait_started": "started gangs only; compare wait_censored_*",
}


def is_started_only_wait(key: str) -> bool:
    """``gangs.wait_pN_s`` and ``gangs.wait_max_s``: over the gangs that started only."""
    return _STARTED_WAIT.fullmatch(key) is not None


def direction(key: str) -> Direction:
    """Better is higher, lower or neither (see the module docstring). Censored wait percentiles
    count every gang and are lower-is-better; percentiles over started gangs only are neutral (a
    policy that starts fewer gangs has shorter started-only waits)."""
    if _CENSORED_WAIT.fullmatch(key):
        return Direction.LOWER
    return DIRECTIONS.get(key, Direction.NEUTRAL)


def unit_of(key: str) -> str:
    """``gpu_time``, ``duration``, ``ratio``, ``count`` or ``number`` (from the key's name)."""
    section, _, leaf = key.rpartition(".")
    if leaf in ("utilization", "allocated_at_end") or leaf.endswith("_ratio") or leaf.startswith("allocation_at_"):
        return "ratio"
    if leaf.endswith("_s"):  # the gpu and gpu_equiv (GPU-equivalents of shared GPUs) sections
        return "gpu_time" if section.startswith("gpu") or "gpu" in leaf else "duration"
    return "count"


def note_of(key: str) -> str:
    if _CENSORED_WAIT.fullmatch(key):
        return NOTES["gangs.wait_censored"]
    if is_started_only_wait(key):
        return NOTES["gangs.wait_started"]
    return NOTES.get(key, "")


@dataclass(frozen=True, slots=True)
class MetricInfo:
    key: str
    section: str  # "" for a top-level key
    leaf: str
    unit: str
    direction: Direction
    note: str


def metric_info(key: str) -> MetricInfo:
    section, _, leaf = key.rpartition(".")
    return MetricInfo(key, section, leaf, unit_of(key), direction(key), note_of(key))
