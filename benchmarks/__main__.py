"""Run the benchmark suite and print one table (and write benchmarks/results.json).

    python -m benchmarks            # all shapes
    python -m benchmarks B1 B2      # some of them
    python -m benchmarks --repeat 3 # median of 3 runs each
    python -m benchmarks B5 --b5-horizon 3d   # the RICC log (never part of the default set)
    python -m benchmarks fuzz 2000  # fuzz the loader and importers (tests/fuzz/longrun.py)

Figures are wall time of the replay (not of building the trace), pods/s, ms per PodGroup
attempt and peak RSS, on this machine (cores printed in the header). Each case runs in its own
interpreter so that its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchmarks import shapes
from gangsim.report import build_report
from gangsim.sim.replay import replay


DATA = next((p for p in (Path("/work/shared/traces-data"), Path(__file__).resolve().parents[2] / "shared" / "traces-data") if p.exists()), None)


def _imported(spec: str, horizon_ms: int | None = None):
    """A real trace through its importer (``KIND:PATH``), loading included in the timing."""
    from gangsim.load import load_trace

    def build():
        t = load_trace([spec])
        if horizon_ms is not None:
            t.horizon_ms = horizon_ms
        return t

    return build


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
    Case("B5", "RICC SWF (447,794 jobs), full replay", "gang", _imported(f"swf:{DATA}/pwa-ricc-2010/RICC-2010-2.swf.gz") if DATA else None, "<= 120 s, <= 2 GiB", load_in_timing=True),
    Case("P1", "gang preemption: 1,000 nodes of low gangs (single), 50 high gangs", "gang", lambda: shapes.preemption_shape(1000, mode="single"), "ms per preemption attempt"),
    Case("P2", "gang preemption: 1,000 nodes of low gangs (all), 50 high gangs", "gang", lambda: shapes.preemption_shape(1000, mode="all"), "ms per preemption attempt"),
    Case("B7a", "SchedulingBasic on 1,000 nodes", "pod", lambda: shapes.scheduling_basic(1000, 10_000), "B7: ratio <= 3"),
    Case("B7b", "SchedulingBasic on 10,000 nodes", "pod", lambda: shapes.scheduling_basic(10_000, 10_000), "B7: ratio <= 3"),
]


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


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_case(case: Case, repeat: int) -> dict:
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
    return {
        "case": case.key,
        "title": case.title,
        "policy": case.policy,
        "wall_s": round(wall, 3),
        "pods": pods,
        "pods_per_s": round(pods / wall, 1) if wall else None,
        "podgroup_attempts": attempts,
        "ms_per_podgroup_attempt": round(1000 * wall / attempts, 3) if attempts else None,
        "preemption_attempts": log.counters.get("podgroup_preemption_attempts", 0),
        "ms_per_preemption_attempt": round(1000 * wall / log.counters["podgroup_preemption_attempts"], 3) if log.counters.get("podgroup_preemption_attempts") else None,
        "victims": len(log.victims),
        "bound": sum(1 for p in log.pods if p.bound_ms is not None),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "target": case.target,
    }


def _in_subprocess(key: str, repeat: int, b5_horizon: str | None) -> dict:
    """One case in a fresh interpreter, so that its peak RSS is its own."""
    cmd = [sys.executable, "-m", "benchmarks", "--one", key, "--repeat", str(repeat)]
    if b5_horizon:
        cmd += ["--b5-horizon", b5_horizon]
    done = subprocess.run(cmd, capture_output=True, check=False, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        sys.exit(f"benchmark {key} failed:\n{done.stderr.decode()}")
    return orjson.loads(done.stdout.splitlines()[-1])


def _case(key: str, b5_horizon: str | None) -> Case:
    case = next(c for c in CASES if c.key == key)
    if case.key == "B5" and b5_horizon and DATA:
        from gangsim.api.duration import parse_duration_ms

        case.build = _imported(f"swf:{DATA}/pwa-ricc-2010/RICC-2010-2.swf.gz", parse_duration_ms(b5_horizon))
        case.title += f" (--horizon {b5_horizon})"
    return case


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["fuzz"]:  # not a benchmark: the long fuzz run of issue 17 (tests/fuzz/)
        from tests.fuzz.longrun import main as fuzz_main

        sys.exit(fuzz_main(argv[1:]))
    ap = argparse.ArgumentParser(prog="python -m benchmarks")
    ap.add_argument("cases", nargs="*", help="case keys (default: all but B5)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", type=Path, default=Path(__file__).parent / "results.json")
    ap.add_argument("--b5-horizon", help="replay RICC only up to this simulated time (e.g. 3d)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one case here, print its row as JSON
    args = ap.parse_args(argv)
    if args.one:
        if args.one == "B6":
            print(orjson.dumps({"baseline_s": statistics.median(first_fit_baseline() for _ in range(max(1, args.repeat)))}).decode())
        else:
            print(orjson.dumps(run_case(_case(args.one, args.b5_horizon), args.repeat)).decode())
        return
    default = [c.key for c in CASES if c.key not in ("B5", "B3-TAS")]  # B5 (the full RICC log) and B3-TAS only when asked for
    wanted = [k for k in (c.key for c in CASES) if k in args.cases] if args.cases else default
    b6 = not args.cases or "B6" in args.cases
    print(f"gangsim benchmarks on {os.cpu_count()} cores, Python {sys.version.split()[0]}, median of {args.repeat}, one process per case")
    rows = []
    for key in wanted:
        case = _case(key, args.b5_horizon)
        if case.build is None:
            print(f"{case.key:5} skipped: ../shared/traces-data is not here", flush=True)
            continue
        row = _in_subprocess(key, args.repeat, args.b5_horizon)
        rows.append(row)
        print(
            f"{row['case']:5} {row['title']:58} {row['policy']:6} wall {row['wall_s']:8.2f} s  "
            f"{row['pods_per_s'] or 0:10.0f} pods/s  "
            f"{(row['ms_per_podgroup_attempt'] or 0):7.3f} ms/PG attempt  "
            f"{row['preemption_attempts']:5d} WAP / {row['victims']:5d} victims  RSS {row['peak_rss_mib']:7.0f} MiB  target {row['target']}",
            flush=True,
        )
    if b6:
        base = _in_subprocess("B6", args.repeat, None)["baseline_s"]
        b1 = next((r for r in rows if r["case"] == "B1"), None) or _in_subprocess("B1", args.repeat, None)
        ratio = b1["wall_s"] / base
        rows.append({"case": "B6", "title": "B1 vs a bare numpy first-fit loop", "baseline_s": round(base, 3), "gangsim_s": b1["wall_s"], "ratio": round(ratio, 2), "target": "<= 3"})
        print(f"B6    B1 / numpy first-fit loop: {b1['wall_s']:.2f} s / {base:.3f} s = {ratio:.1f}x  target <= 3", flush=True)
    by_key = {r["case"]: r for r in rows}
    if "B7a" in by_key and "B7b" in by_key:
        ratio = by_key["B7b"]["wall_s"] / by_key["B7a"]["wall_s"]
        rows.append({"case": "B7", "title": "10,000 vs 1,000 nodes", "ratio": round(ratio, 2), "target": "<= 3"})
        print(f"B7    10,000 vs 1,000 nodes: {ratio:.2f}x  target <= 3", flush=True)
    args.json.write_bytes(orjson.dumps({"cores": os.cpu_count(), "python": sys.version.split()[0], "repeat": args.repeat, "results": rows}, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
