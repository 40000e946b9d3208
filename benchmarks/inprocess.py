"""The in-process cases (B1–B4, B3-TAS, P1, P2, B6, B7): a shape built as ``api`` objects (not
timed) or a real trace through its importer (timed), replayed in this interpreter; the figure is
the replay plus building the report tables. ``python -m benchmarks --one KEY`` runs one of them
and prints its row as JSON (the protocol the harness, and a ``--baseline`` tree, speak)."""

from __future__ import annotations

import os
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import shapes


def data_dir() -> Path | None:
    """The public traces (``../shared/traces-data`` from the repository or any directory above
    it, ``/work/shared/traces-data``, or ``$GANGSIM_TRACES_DATA``)."""
    if os.environ.get("GANGSIM_TRACES_DATA"):
        return Path(os.environ["GANGSIM_TRACES_DATA"])
    here = Path(__file__).resolve()
    candidates = [p / "shared" / "traces-data" for p in here.parents] + [Path("/work/shared/traces-data")]
    return next((p for p in candidates if p.is_dir()), None)


DATA = data_dir()


def _imported(spec: str):
    """A real trace through its importer (``KIND:PATH``), loading included in the timing."""
    from gangsim.load import load_trace

    return lambda: load_trace([spec])


@dataclass
class Case:
    key: str
    title: str
    policy: str
    build: Callable[[], object] | None
    target: str
    load_in_timing: bool = False


CASES = [
    Case("B1", "SchedulingBasic: 5,000 nodes, 10,000 pods", "pod", lambda: shapes.scheduling_basic(5000, 10_000), ">= 11,500 pods/s"),
    Case("B2", "gangs: 5,000 nodes, 3,000 gangs of 3", "gang", lambda: shapes.gang_shape(5000, 3000, 3), "<= 0.5 ms per PodGroup attempt"),
    Case("B3", "1,000 gangs x 128 eight-GPU pods on 5,000 x 8-GPU nodes", "gang", lambda: shapes.gang_shape(5000, 1000, 128, gpus_per_node=8, gpus_per_pod=8), "<= 20 s"),
    # B3 with KEP-5732 TAS: 40 blocks of 125 nodes; B3's 8-GPU pods would need 128 nodes, more
    # than a block has, so pods take 4 GPUs (a gang fills 64 nodes of one block)
    Case("B3-TAS", "1,000 gangs x 128 four-GPU pods on 5,000 x 8-GPU nodes in 40 blocks, gang+tas", "gang",
         lambda: shapes.gang_shape(5000, 1000, 128, gpus_per_node=8, gpus_per_pod=4, blocks=40), "B3 for comparison"),
    Case("B4", "openb default, full replay incl. reports", "pod", _imported(f"openb:{DATA}/alibaba-gpu-v2023-openb") if DATA else None, "<= 5 s", load_in_timing=True),
    Case("P1", "gang preemption: 1,000 nodes of low gangs (single), 50 high gangs", "gang", lambda: shapes.preemption_shape(1000, mode="single"), "ms per preemption attempt"),
    Case("P2", "gang preemption: 1,000 nodes of low gangs (all), 50 high gangs", "gang", lambda: shapes.preemption_shape(1000, mode="all"), "ms per preemption attempt"),
    Case("B7a", "SchedulingBasic on 1,000 nodes", "pod", lambda: shapes.scheduling_basic(1000, 10_000), "B7: ratio <= 3"),
    Case("B7b", "SchedulingBasic on 10,000 nodes", "pod", lambda: shapes.scheduling_basic(10_000, 10_000), "B7: ratio <= 3"),
    Case("B6", "a bare numpy first-fit loop placing B1's 10,000 pods", "-", None, "B1 / this <= 3"),
]  # fmt: skip

BY_KEY = {c.key: c for c in CASES}
ON_REQUEST = {"B3-TAS"}  # only when named


def first_fit_baseline(nodes: int = 5000, pods: int = 10_000) -> float:
    """B6: the same 10,000 placements as B1 by a bare numpy first-fit loop (no queue, no
    scoring, no events, no reports): the floor a Python simulator can be compared with."""
    import numpy as np

    free = np.tile(np.array([4000, 32 * 2**30, 110], dtype=np.int64), (nodes, 1))
    demand = np.array([100, 100 * 2**20, 1], dtype=np.int64)
    start = time.perf_counter()
    for _ in range(pods):
        fits = (free >= demand).all(axis=1)
        row = int(np.argmax(fits))
        free[row] -= demand
    return time.perf_counter() - start


def run_case(case: Case, repeat: int) -> dict:
    if case.key == "B6":
        wall = statistics.median(first_fit_baseline() for _ in range(max(1, repeat)))
        return {"case": "B6", "title": case.title, "policy": "-", "wall_s": round(wall, 3), "baseline_s": round(wall, 3), "target": case.target}
    from gangsim.report import build_report
    from gangsim.sim.replay import replay

    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        trace = case.build()
        if not case.load_in_timing:
            start = time.perf_counter()
        log = replay(trace, case.policy)
        build_report(log)
        walls.append(time.perf_counter() - start)
    wall = statistics.median(walls)
    pods = len(log.pods)
    attempts = sum(log.podgroup_attempts.values())
    preemptions = log.counters.get("podgroup_preemption_attempts", 0)
    return {
        "case": case.key,
        "title": case.title,
        "policy": case.policy,
        "wall_s": round(wall, 3),
        "pods": pods,
        "pods_per_s": round(pods / wall, 1) if wall else None,
        "podgroup_attempts": attempts,
        "ms_per_podgroup_attempt": round(1000 * wall / attempts, 3) if attempts else None,
        "preemption_attempts": preemptions,
        "ms_per_preemption_attempt": round(1000 * wall / preemptions, 3) if preemptions else None,
        "victims": len(log.victims),
        "bound": sum(1 for p in log.pods if p.bound_ms is not None),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target": case.target,
    }
