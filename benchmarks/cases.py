"""The whole-process cases: one per row of issue 16's table, each a ``gangsim run`` in a fresh
process (interpreter start, imports, import/load, replay, reports, output) under
benchmarks/driver.py. Their traces, commands and targets are listed in benchmarks/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchmarks import shapes

RICC = "pwa-ricc-2010/RICC-2010-2.swf.gz"
NASA = "pwa-nasa-ipsc-1993/NASA-iPSC-1993-3.1-cln.swf.gz"
HPC2N = "pwa-hpc2n-2002-head/hpc2n.swf"
GAVEL = "microsoft-philly-partial/gavel-per-vc-traces-seed0"


@dataclass(frozen=True)
class Direct:
    """``KIND:PATH`` on the command line: the importer runs inside the timed process."""

    kind: str
    path: str  # relative to the traces-data directory


@dataclass(frozen=True)
class Imported:
    """``gangsim import KIND PATH OPTIONS -o`` once per tree (cached, not timed), then the file."""

    kind: str
    path: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class Generated:
    """A benchmarks/shapes.py ``*_docs`` trace file (cached, not timed)."""

    name: str
    params: tuple[tuple[str, int], ...]

    def docs(self):
        return getattr(shapes, f"{self.name}_docs")


@dataclass(frozen=True)
class Target:
    """Issue 16's target for a row: every bound given must hold (a case that did not finish, or
    finished with an error, meets none)."""

    text: str
    whole_s: float | None = None
    rss_mib: float | None = None
    pods_per_s: float | None = None
    ms_per_gang: float | None = None

    def met(self, m: dict) -> bool:
        if m.get("status") != "ok":
            return False
        checks = [
            (self.whole_s, m.get("whole_s"), lambda bound, v: v <= bound),
            (self.rss_mib, m.get("peak_rss_mib"), lambda bound, v: v <= bound),
            (self.pods_per_s, m.get("pods_per_s"), lambda bound, v: v >= bound),
            (self.ms_per_gang, m.get("ms_per_gang"), lambda bound, v: v <= bound),
        ]
        return all(value is not None and ok(bound, value) for bound, value, ok in checks if bound is not None)


@dataclass(frozen=True)
class CliCase:
    key: str
    title: str
    policy: str
    trace: Direct | Imported | Generated
    today: str  # issue 16's "today" column: measured before the issue, not in the same run
    target: Target
    args: tuple[str, ...] = ()
    out: bool = False  # with --out DIR (a temporary directory)
    fast: bool = False  # part of the default set
    per: tuple[str, int] | None = None  # ("pods", n): pods/s; ("gangs", n): ms per gang; of whole_s

    def argv(self, trace_arg: str, horizon: str | None, out_dir: Path | None) -> list[str]:
        """``gangsim`` arguments; ``horizon`` replaces the case's own ``--horizon`` (shortened runs)."""
        args = list(self.args)
        if horizon is not None:
            if "--horizon" in args:
                i = args.index("--horizon")
                del args[i : i + 2]
            args += ["--horizon", horizon]
        if out_dir is not None:
            args += ["--out", str(out_dir)]
        return ["run", trace_arg, "-p", self.policy, *args]

    def command(self, horizon: str | None = None) -> str:
        """The command as a user would type it (README)."""
        out = Path("DIR") if self.out else None
        if isinstance(self.trace, Direct):
            return "gangsim " + " ".join(self.argv(f"{self.trace.kind}:$DATA/{self.trace.path}", horizon, out))
        run = "gangsim " + " ".join(self.argv("T.jsonl", horizon, out))
        if isinstance(self.trace, Imported):
            return f"gangsim import {self.trace.kind} $DATA/{self.trace.path} {' '.join(self.trace.options)} -o T.jsonl (cached, not timed); {run}"
        params = ", ".join(f"{k}={v}" for k, v in self.trace.params)
        return f"{run} (T.jsonl = benchmarks.shapes.{self.trace.name}_docs({params}), cached, not timed)"


_NASA_TODAY = "1 min 43 s – 1 min 53 s, 550–630 MiB (each policy)"
_NASA_TARGET = Target("≤ 20 s, ≤ 400 MiB", whole_s=20, rss_mib=400)

CLI_CASES: list[CliCase] = [
    CliCase("RICC-gang", "RICC SWF log, full 160 days (447,794 jobs, 1.2 M pods), import + load + replay", "gang", Direct("swf", RICC),
            "did not finish (day 26 after 23 min)", Target("≤ 120 s, ≤ 2 GiB", whole_s=120, rss_mib=2048)),
    CliCase("RICC-pod", "RICC SWF log, full 160 days, import + load + replay", "pod", Direct("swf", RICC),
            "first 3 days 2 min 46 s; first 7 days not finished after 10 min", Target("full log ≤ 300 s", whole_s=300)),
    CliCase("RICC-3d-out", "RICC SWF log, first 3 days (--horizon 3d), import + load + replay + --out", "gang", Direct("swf", RICC),
            "24 s, 1.88 GiB", Target("≤ 10 s, ≤ 1 GiB", whole_s=10, rss_mib=1024), args=("--horizon", "3d"), out=True),
    CliCase("NASA-gang", "NASA iPSC SWF, full (18,239 jobs, 310 k pods)", "gang", Direct("swf", NASA), _NASA_TODAY, _NASA_TARGET),
    CliCase("NASA-permit", "NASA iPSC SWF, full (18,239 jobs, 310 k pods)", "permit", Direct("swf", NASA), _NASA_TODAY, _NASA_TARGET),
    CliCase("NASA-pod", "NASA iPSC SWF, full (18,239 jobs, 310 k pods)", "pod", Direct("swf", NASA), _NASA_TODAY, _NASA_TARGET),
    CliCase("HPC2N-pod", "PWA HPC2N excerpt (3,170 jobs, 63,578 pods, 57 days, 240 GPUs), --seed 7", "pod", Direct("swf", HPC2N),
            "4 min 18 s (issue 16); 297 s → 94 s after its first step (README)", Target("≤ 20 s", whole_s=20), args=("--seed", "7")),
    CliCase("Gavel-gang", "Gavel/Philly per-VC traces, all 15 VCs (15,264 jobs), 10 × 8-GPU nodes, durations of seed 0", "gang",
            Imported("gavel", GAVEL, ("--nodes", "10")), "5 min 47 s", Target("≤ 30 s", whole_s=30)),
    CliCase("SB-50k", "scheduler_perf SchedulingBasic shape: 5,000 nodes, 50,000 pods, whole process incl. load", "pod",
            Generated("scheduling_basic", (("nodes", 5000), ("pods", 50_000))), "6.2 s = 8,100 pods/s",
            Target("≥ 11,500 pods/s", pods_per_s=11_500), fast=True, per=("pods", 50_000)),
    CliCase("Gangs-10k", "5,000 nodes, 10,000 gangs of 3, whole process incl. load", "gang",
            Generated("gang", (("nodes", 5000), ("gangs", 10_000), ("size", 3))), "5.2 s = 0.52 ms per gang",
            Target("≤ 0.4 ms per gang", ms_per_gang=0.4), fast=True, per=("gangs", 10_000)),
]  # fmt: skip

BY_KEY = {c.key: c for c in CLI_CASES}
