"""Report-byte golden cases: the behaviour-preserving guard of the scheduler redesign.

``reports.json`` holds, per case, the sha256 of every CSV table and ``summary.json`` of the
report (plus the replay's ``filter_rows_evaluated``, the work upstream's serial search would do),
recorded on ``main`` *before* the framework redesign (issue 11). A case is a trace (bundled,
generated and stored in ``traces/``, or imported at test time from ``../shared/traces-data``),
a policy spec (``gang+no-batching`` switches every speed shortcut off) and an optional seed.

Re-record (only when a change of behaviour is intended, and say so in the commit):
``python -m tests.golden.record``.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# ../shared/traces-data from the repository root, or from a parent of it (a git worktree nested
# deeper than the main checkout finds the same data)
SHARED = next((p / "shared" / "traces-data" for p in ROOT.parents if (p / "shared" / "traces-data").is_dir()), ROOT.parent / "shared" / "traces-data")
BUNDLED = ["allreduce-bench", "deadlock", "disruption-all", "disruption-single", "greedy-limit", "mixed-day", "victims-in-vain"]
GENERATED = sorted(p.name for p in (HERE / "traces").iterdir() if p.suffix in (".jsonl", ".yaml"))
POLICIES = ["pod", "permit", "gang", "gang+no-batching"]


@dataclass(frozen=True)
class Case:
    id: str
    sources: tuple[str, ...]  # paths relative to ROOT, or "swf:<shared path>"-style import specs
    policy: str
    seed: int | None = None
    config: str | None = None  # a KubeSchedulerConfiguration file, relative to ROOT
    horizon: str | None = None
    shared: bool = False  # needs ../shared/traces-data


def cases() -> list[Case]:
    out: list[Case] = []
    for name in BUNDLED:
        for policy in POLICIES:
            out.append(Case(f"{name}/{policy}", (f"traces/{name}.yaml",), policy))
    out.append(Case("greedy-limit/gang/binpack", ("traces/greedy-limit.yaml",), "gang", config="traces/configs/binpack-gpus.yaml"))
    out.append(Case("greedy-limit/pod/binpack", ("traces/greedy-limit.yaml",), "pod", config="traces/configs/binpack-gpus.yaml"))
    for policy in ("pod", "gang"):
        out.append(Case(f"mixed-day/{policy}/seed7", ("traces/mixed-day.yaml",), policy, seed=7))
    # KEP-5732: the same rack-constrained gangs without and with the TopologyAwareWorkloadScheduling gate
    out.append(Case("rack-local/gang", ("traces/rack-local.yaml",), "gang"))
    out.append(Case("rack-local/gang/tas", ("traces/rack-local.yaml",), "gang", config="traces/configs/tas.yaml"))
    for name in GENERATED:
        # congested traces livelock under pod/permit (rendezvous timeouts): cut them at 8 h
        horizon = "8h" if "congested" in name else None
        for policy in POLICIES:
            out.append(Case(f"{name}/{policy}", (f"tests/golden/traces/{name}",), policy, horizon=horizon))
    out.append(Case("gen-congested-1.jsonl/gang/seed3", ("tests/golden/traces/gen-congested-1.jsonl",), "gang", seed=3, horizon="8h"))
    for policy in POLICIES:
        out.append(Case(f"hpc2n-head-600/{policy}", ("swf:pwa-hpc2n-2002-head/hpc2n.swf",), policy, horizon="3d", shared=True))
    for policy in ("pod", "gang"):
        out.append(Case(f"openb-default-400/{policy}", ("openb:alibaba-gpu-v2023-openb",), policy, shared=True))
    return out


def _load(case: Case):
    from gangsim.load import load_trace

    if not case.shared:
        return load_trace([ROOT / s for s in case.sources], config_path=(ROOT / case.config) if case.config else None)
    from gangsim.load.importers import ImportOptions, records, write_jsonl

    kind, _, rel = case.sources[0].partition(":")
    limit = 600 if kind == "swf" else 400
    opts = ImportOptions(limit=limit)
    if kind == "openb":
        src = SHARED / rel
        sources = [str(src / "openb_node_list_gpu_node.csv"), str(src / "openb_pod_list_default.csv")]
    else:
        sources = [str(SHARED / rel)]
    buf = io.BytesIO()
    write_jsonl(records(kind, sources, opts), buf)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{kind}.jsonl"
        path.write_bytes(buf.getvalue())
        return load_trace([path])


def fingerprint(case: Case, *, drop: dict[str, tuple[str, ...]] | None = None) -> dict[str, str | int]:
    """sha256 of each CSV and summary.json of the case's report, and its Filter work.
    ``drop``: table -> columns left out first (``same_placements`` compares without new columns)."""
    from gangsim.api.duration import parse_duration_ms
    from gangsim.report import build_report, write_report
    from gangsim.sim.replay import replay
    from gangsim.whatif.variants import parse_policy_spec

    trace = _load(case)
    spec = parse_policy_spec(case.policy)
    config = spec.config(trace.config)
    horizon = parse_duration_ms(case.horizon) if case.horizon else None
    log = replay(trace, spec.policy, seed=case.seed, horizon_ms=horizon, config=config)
    report = build_report(log)
    for table, columns in (drop or {}).items():
        report.tables[table] = report.tables[table].drop(columns, strict=False)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        write_report(report, out)
        digest: dict[str, str | int] = {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir()) if p.suffix in (".csv", ".json")
        }
    digest["filter_rows_evaluated"] = log.counters.get("filter_rows_evaluated", 0)
    return digest
