"""Invariants of every replay, checked from its report tables (and the trace's nodes) over
generated traces and the bundled ones, under every policy:

- no node is ever over-committed by the pods bound to it (cpu, memory, GPUs, pod slots;
  the ``pods`` table carries each pod's requests for this);
- all-or-nothing under ``gang``: whenever pods of a gang bind, at least ``minCount`` of its pods
  run right after;
- every pod is accounted for: each incarnation is created, then bound or not, then ended or not,
  in that order; incarnations of one pod never overlap and are numbered 0, 1, 2 …;
- the summary equals what the tables count.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim.api.objects import Node
from gangsim.api.trace import Op, Trace
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec, generate, write_jsonl
from gangsim.report import Report, build_report
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ("pod", "permit", "gang")
GI = 2**30


def node_capacity(trace: Trace) -> dict[str, dict[str, int]]:
    """Each node's allocatable (cpu in millicores, memory in bytes, GPUs, pod slots) as created."""
    out: dict[str, dict[str, int]] = {}
    for ev in trace.events:
        if ev.op is Op.CREATE and isinstance(ev.obj, Node):
            a = ev.obj.allocatable
            out[ev.obj.name] = {"milli_cpu": a.get("cpu", 0), "memory_bytes": a.get("memory", 0), "gpus": a.get("nvidia.com/gpu", 0), "pods": a.get("pods", 0)}
    return out


def check_no_overcommit(report: Report, capacity: dict[str, dict[str, int]]) -> None:
    pods = report.tables["pods"].filter(pl.col("bound_s").is_not_null())
    changes: dict[str, list[tuple[float, int, dict[str, int]]]] = defaultdict(list)
    for p in pods.iter_rows(named=True):
        demand = {"milli_cpu": p["milli_cpu"], "memory_bytes": p["memory_bytes"], "gpus": p["gpus"], "pods": 1}
        changes[p["node"]].append((p["bound_s"], 1, demand))
        if p["ended_s"] is not None:
            changes[p["node"]].append((p["ended_s"], 0, demand))  # at one instant, ends come first
    for node, events in changes.items():
        used = dict.fromkeys(capacity[node], 0)
        for t, sign, demand in sorted(events, key=lambda e: (e[0], e[1])):
            for r, amount in demand.items():
                used[r] += amount if sign else -amount
            over = {r: (used[r], capacity[node][r]) for r in used if used[r] > capacity[node][r]}
            assert not over, f"node {node} over-committed at t={t}s: {over}"


def check_all_or_nothing(report: Report) -> None:
    gangs = report.tables["gangs"].filter(pl.col("kind") == "PodGroup")
    min_count = dict(zip(gangs["gang"].to_list(), gangs["min_count"].to_list()))
    pods = report.tables["pods"].filter(pl.col("gang").is_in(list(min_count)) & pl.col("bound_s").is_not_null())
    for (gang,), rows in pods.group_by(["gang"], maintain_order=True):
        spans = list(zip(rows["bound_s"].to_list(), rows["ended_s"].to_list()))
        for t in sorted({b for b, _ in spans}):
            running = sum(1 for b, e in spans if b <= t and (e is None or e > t))
            assert running >= min_count[gang], f"gang {gang}: {running} pods running after the binds at t={t}s, minCount {min_count[gang]}"


def check_every_pod_accounted_for(report: Report) -> None:
    pods = report.tables["pods"]
    for (pod,), rows in pods.group_by(["pod"], maintain_order=True):
        rows = rows.sort("attempt")
        assert rows["attempt"].to_list() == list(range(rows.height)), pod
        previous_end = None
        for r in rows.iter_rows(named=True):
            assert r["bound_s"] is None or r["bound_s"] >= r["created_s"], r
            assert r["ended_s"] is None or r["ended_s"] >= (r["bound_s"] if r["bound_s"] is not None else r["created_s"]), r
            assert previous_end is None or r["created_s"] >= previous_end, f"{pod}: incarnations overlap"
            previous_end = r["ended_s"] if r["ended_s"] is not None else float("inf")


def check_summary_equals_tables(report: Report) -> None:
    s, t = report.summary, report.tables
    pods, gangs, victims = t["pods"], t["gangs"], t["victims"]
    assert s["pods"] == {
        "total": pods["pod"].n_unique(),
        "bound": pods.filter(pl.col("bound_s").is_not_null())["pod"].n_unique(),
        "pending_at_end": pods.filter(pl.col("bound_s").is_null() & pl.col("ended_s").is_null()).height,
        "restarts": pods.filter(pl.col("attempt") > 0).height,
    }
    assert (s["gangs"]["total"], s["gangs"]["started"], s["gangs"]["completed"]) == (
        gangs.height,
        gangs.filter(pl.col("started_s").is_not_null()).height,
        gangs.filter(pl.col("state") == "Completed").height,
    )
    assert (s["preemption"]["victims"], s["preemption"]["victims_in_vain"]) == (victims.height, victims.filter(pl.col("in_vain")).height)


def check_all(trace: Trace, policy: str) -> None:
    report = build_report(replay(trace, policy, check_invariants=True))
    check_no_overcommit(report, node_capacity(trace))
    if policy == "gang":
        check_all_or_nothing(report)
    check_every_pod_accounted_for(report)
    check_summary_equals_tables(report)


def generated(tmp_path: Path, spec: GeneratorSpec) -> Trace:
    path = tmp_path / f"gen-{spec.seed}.jsonl"
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    trace = load_trace([path])
    trace.horizon_ms = 6 * 3_600_000
    return trace


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", ["deadlock", "disruption-all", "disruption-single", "victims-in-vain", "greedy-limit", "allreduce-bench"])
def test_bundled_traces_keep_the_invariants(name, policy):
    check_all(load_trace([ROOT / "traces" / f"{name}.yaml"]), policy)


@settings(max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    nodes=st.integers(2, 12),
    gpus=st.sampled_from((4, 8)),
    failures=st.integers(0, 2),
    policy=st.sampled_from(POLICIES),
)
def test_generated_traces_keep_the_invariants(tmp_path_factory, seed, nodes, gpus, failures, policy):
    """Congested generated clusters: big gangs, two priorities, node failures."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", nodes, cpu=32, memory_gi=256, gpus=gpus),),
        jobs=20,
        hours=2,
        gang_sizes=((1, 0.4), (2, 0.2), (4, 0.2), (8, 0.2)),
        gpus_per_pod=((1, 0.4), (2, 0.3), (4, 0.3)),
        priorities=(("low", 0, 0.6), ("high", 1000, 0.4)),
        duration_median_s=1800,
        node_failures=min(failures, nodes - 1),
    )
    check_all(generated(tmp_path_factory.mktemp("inv"), spec), policy)
