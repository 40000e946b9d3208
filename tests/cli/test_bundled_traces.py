"""Every bundled trace replays under every policy and tells the story its header promises."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gangsim.cli import app

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted((ROOT / "traces").glob("*.yaml"))
runner = CliRunner()


def summary(trace: str, policy: str, *extra: str) -> dict:
    res = runner.invoke(app, ["run", str(ROOT / "traces" / trace), "--policy", policy, "--format", "json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("trace", [p.name for p in TRACES if p.name != "mixed-day.yaml"])
def test_replays(trace, policy):
    s = summary(trace, policy)
    assert s["policy"] == policy
    assert s["pods"]["total"] > 0


@pytest.mark.parametrize("trace", [p.name for p in TRACES])
def test_bundled_traces_validate_without_errors(trace):
    res = runner.invoke(app, ["validate", str(ROOT / "traces" / trace)])
    assert res.exit_code == 0, res.output
    assert "0 errors" in res.stdout


def test_victims_in_vain_under_permit_but_not_under_gang():
    permit = summary("victims-in-vain.yaml", "permit")["preemption"]
    gang = summary("victims-in-vain.yaml", "gang")["preemption"]
    assert permit["victims"] == 15 and permit["victims_in_vain"] == 15
    assert gang["victims"] == 11 and gang["victims_in_vain"] == 0  # evicted only once all 16 fit


def test_disruption_all_evicts_the_whole_gang_single_one_member():
    single = summary("disruption-single.yaml", "gang")
    whole = summary("disruption-all.yaml", "gang")
    assert single["preemption"]["victims"] == 1
    assert whole["preemption"]["victims"] == 8
    assert single["gpu"]["stranded_s"] > 50 * whole["gpu"]["stranded_s"]


def test_greedy_limit_depends_on_the_scoring_strategy():
    spread = summary("greedy-limit.yaml", "gang")
    binpack = summary("greedy-limit.yaml", "gang", "--config", str(ROOT / "traces" / "configs" / "binpack-gpus.yaml"))
    assert spread["gangs"]["started"] == 1
    assert binpack["gangs"]["started"] == 0  # a landed on the fuller node; b could not follow


def test_allreduce_bench_runs_whole():
    s = summary("allreduce-bench.yaml", "gang")
    assert s["gangs"] == {**s["gangs"], "total": 1, "started": 1, "completed": 1}
    assert s["gpu"]["busy_s"] == 16 * 8 * 45 * 60


def test_mixed_day_has_every_report_column_populated(tmp_path):
    import polars as pl

    out = tmp_path / "out"
    res = runner.invoke(app, ["run", str(ROOT / "traces" / "mixed-day.yaml"), "--policy", "permit", "--out", str(out), "--format", "json"])
    assert res.exit_code == 0
    s = json.loads(res.stdout)
    for section in ("gpu", "preemption"):
        assert all(v > 0 for v in s[section].values()), section
    victims = pl.read_parquet(out / "victims.parquet")
    assert victims.height > 0 and victims["in_vain"].any() and (victims["lost_gpu_s"] > 0).any()
    gangs = pl.read_parquet(out / "gangs.parquet")
    assert (gangs["restarts"] > 0).any() and (gangs["preemptions"] > 0).any() and (gangs["wait_s"] > 0).any()
    events = pl.read_parquet(out / "events.parquet")
    assert {"NodeFailed", "RendezvousTimeout", "Preempted", "GangStarted"} <= set(events["reason"].cast(pl.Utf8).unique())


@pytest.mark.parametrize("trace", ["jobset-gpu.yaml", "lws-gpu.yaml", "pytorchjob.yaml", "volcano-job.yaml"])
def test_workload_traces_strand_gpus_under_pod_and_none_under_gang(trace):
    """README "Bundled traces": each workload kind's trace, `diff -p gang -p pod`."""
    pod, gang = summary(trace, "pod"), summary(trace, "gang")
    assert pod["gpu"]["stranded_s"] > 0 and pod["pods"]["restarts"] > 0
    assert gang["gpu"]["stranded_s"] <= 960  # pytorchjob: the evicted gang's 960 GPU-s before its pods end
    assert gang["gangs"]["completed"] == gang["gangs"]["total"]


def test_jobset_gpu_deadlocks_under_pod():
    pod, gang = summary("jobset-gpu.yaml", "pod"), summary("jobset-gpu.yaml", "gang")
    assert (pod["gangs"]["started"], pod["gpu"]["busy_s"]) == (0, 0)
    assert (gang["gangs"]["completed"], gang["gpu"]["busy_s"]) == (2, 192 * 3600)


def test_pytorchjob_preemption_under_pod_evicts_the_two_pods_it_needs():
    assert summary("pytorchjob.yaml", "pod")["preemption"]["victims"] == 2


def _serving_racks(tmp_path, policy: str) -> dict[str, set[str]]:
    """disaggregated-serving.yaml: the racks each deployment's pods ran in (nodes gpu-0..3 form
    rack-0, gpu-4..7 rack-1)."""
    out = tmp_path / policy
    res = runner.invoke(app, ["run", str(ROOT / "traces" / "disaggregated-serving.yaml"), "--policy", policy, "-o", str(out)])
    assert res.exit_code == 0, res.output
    racks: dict[str, set[str]] = {}
    for line in (out / "pods.csv").read_text().splitlines()[1:]:
        pod, _attempt, _gang, namespace, node = line.split(",")[:5]
        if namespace == "serving" and node:
            racks.setdefault(pod.split("/")[1].split("-")[1], set()).add(f"rack-{int(node.split('-')[1]) // 4}")
    return racks


def test_disaggregated_serving_keeps_each_deployment_in_one_rack_only_as_a_hierarchy(tmp_path):
    assert _serving_racks(tmp_path, "gang+cpg") == {"a": {"rack-0"}, "b": {"rack-1"}}
    assert _serving_racks(tmp_path, "gang+tas") == {"a": {"rack-0", "rack-1"}, "b": {"rack-0", "rack-1"}}
