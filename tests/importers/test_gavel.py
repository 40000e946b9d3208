"""gavel importer: the 15 Philly-derived per-VC streams (counts from the dataset README), exact
first objects, gangs on 8-GPU nodes, the three duration sources, broken inputs."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from tests.importers.conftest import creates, dataset, imported, invoke

GAVEL = ("microsoft-philly-partial", "gavel-per-vc-traces-seed0")


def _gpus_of(recs: list[dict]) -> collections.Counter:
    """GPUs per job, summed over a job's Jobs (j<n> and j<n>-r)."""
    per_job: dict[tuple[str, str], int] = collections.Counter()
    for job in creates(recs, "Job"):
        key = (job["metadata"]["namespace"], job["metadata"]["name"].removesuffix("-r"))
        limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
        per_job[key] += job["spec"]["parallelism"] * int(limits["nvidia.com/gpu"])
    return collections.Counter(per_job.values())


def test_all_vcs_match_the_readme():
    recs, stats = imported("gavel", dataset(*GAVEL))
    assert stats.counts["jobs"] == 15_264
    assert {j["metadata"]["namespace"] for j in creates(recs, "Job")} == {f"vc-{h}" for h in ("0e4a51", "103959", "11cb48", "23dbec", "2869ce", "51b7ef", "6214e9", "6c71a0", "795a4c", "7f04ca", "925e2b", "b436b2", "e13805", "ed69ec", "ee9e8c")}
    assert _gpus_of(recs) == {1: 10_480, 2: 463, 4: 2_044, 7: 2, 8: 1_916, 12: 6, 16: 255, 20: 1, 24: 5, 32: 91, 64: 1}
    pool = creates(recs, "NodePool")[0]
    assert pool["spec"]["count"] == 63  # cluster_specs.json: 500 V100s on 8-GPU nodes
    # gangs: every multi-pod job has a PodGroup whose minCount is its pod count
    groups = {(g["metadata"]["namespace"], g["metadata"]["name"]): g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in creates(recs, "PodGroup")}
    pods: dict = collections.Counter()
    for job in creates(recs, "Job"):
        pods[(job["metadata"]["namespace"], job["metadata"]["name"].removesuffix("-r"))] += job["spec"]["parallelism"]
    assert groups == {k: v for k, v in pods.items() if v > 1}
    times = [r["at"] for r in recs[1:]]
    assert times == sorted(times)


def test_first_objects_are_exact():
    recs, _ = imported("gavel", dataset(*GAVEL, "0e4a51.trace"), nodes=4, limit=3)
    assert recs[0]["metadata"]["name"] == "philly-gavel-0e4a51"
    assert recs[1] == {"at": 0, "create": {"apiVersion": "gangsim.dev/v1alpha1", "kind": "NodePool", "metadata": {"name": "philly"}, "spec": {"count": 4, "template": {"status": {"allocatable": {"nvidia.com/gpu": "8"}}}}}}
    assert recs[2]["at"] == 0
    assert recs[2]["create"]["metadata"] == {"name": "j0", "namespace": "vc-0e4a51", "annotations": {"gangsim.dev/duration": "4h", "gavel.gangsim.dev/job-type": "Transformer (batch size 128)"}}
    assert recs[2]["create"]["spec"] == {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}
    assert [r["at"] for r in recs[2:]] == [0, 6, 6]


def test_a_twelve_gpu_job_is_a_gang_of_8_plus_4():
    recs, _ = imported("gavel", dataset(*GAVEL))
    rest = next(j for j in creates(recs, "Job") if j["metadata"]["name"].endswith("-r"))
    ns, name = rest["metadata"]["namespace"], rest["metadata"]["name"].removesuffix("-r")
    objs = [o for o in creates(recs) if o["metadata"].get("namespace") == ns and o["metadata"]["name"] in (name, f"{name}-r")]
    assert [o["kind"] for o in objs] == ["PodGroup", "Job", "Job"]
    sizes = [(o["spec"]["parallelism"], o["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]) for o in objs[1:]]
    assert sum(n * int(g) for n, g in sizes) in (12, 20)
    assert sizes[-1] == (1, "4")
    # --pod-size 1: one pod per GPU
    recs, _ = imported("gavel", dataset(*GAVEL), pod_size=1)
    assert _gpus_of(recs)[64] == 1
    assert max(g["spec"]["schedulingPolicy"]["gang"]["minCount"] for g in creates(recs, "PodGroup")) == 64


def test_duration_sources(tmp_path):
    src = dataset(*GAVEL, "0e4a51.trace")
    seeded = [j["metadata"]["annotations"]["gangsim.dev/duration"] for j in creates(imported("gavel", src, nodes=4)[0], "Job")]
    assert set(seeded) <= {"1h", "2h", "3h", "4h"} and len(set(seeded)) == 4
    assert seeded == [j["metadata"]["annotations"]["gangsim.dev/duration"] for j in creates(imported("gavel", src, nodes=4, seed=0)[0], "Job")]
    assert seeded != [j["metadata"]["annotations"]["gangsim.dev/duration"] for j in creates(imported("gavel", src, nodes=4, seed=1)[0], "Job")]
    # first line: 95121 steps of Transformer (batch size 128) on 1 GPU
    by_rate = creates(imported("gavel", src, nodes=4, limit=1, steps_per_second=10.0)[0], "Job")
    assert by_rate[0]["metadata"]["annotations"]["gangsim.dev/duration"] == "2h38m33s"  # 9512.1 s, rounded up to whole seconds
    tputs = tmp_path / "tputs.json"
    tputs.write_text(json.dumps({"v100": {"('Transformer (batch size 128)', 1)": {"null": 95121 / 600}}}))
    by_table = creates(imported("gavel", src, nodes=4, limit=1, throughputs=str(tputs))[0], "Job")
    assert by_table[0]["metadata"]["annotations"]["gangsim.dev/duration"] == "10m"
    res = invoke("import", "gavel", src, "--nodes", "4", "--limit", "2", "--throughputs", str(tputs))
    assert res.exit_code == 2 and "0e4a51.trace:2: vc-0e4a51/j1: column 1 (job type)" in res.stderr and "no v100 throughput" in res.stderr


BROKEN = {
    "truncated-line": ("A3C\tcmd\t-n\t1\t100\t0.0\t1\nA3C\tcmd\t-n\t1\t10", "vc.trace:2: vc-vc/j1: expected 7 tab-separated columns, found 5"),
    "negative-gpus": ("A3C\tcmd\t-n\t1\t100\t0.0\t-2\n", 'vc.trace:1: vc-vc/j0: column 7 (scale factor): Invalid value: "-2": must be at least 1'),
    "bad-arrival": ("A3C\tcmd\t-n\t1\t100\tsoon\t1\n", 'vc.trace:1: vc-vc/j0: column 6 (arrival time): Invalid value: "soon": must be a number'),
    "negative-arrival": ("A3C\tcmd\t-n\t1\t100\t-5\t1\n", 'vc.trace:1: vc-vc/j0: column 6 (arrival time): Invalid value: "-5": must not be negative'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_streams_exit_2_naming_line_and_field(tmp_path, case):
    body, message = BROKEN[case]
    (tmp_path / "vc.trace").write_text(body)
    res = invoke("import", "gavel", str(tmp_path / "vc.trace"), "--nodes", "2")
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and message in res.stderr, res.stderr
    assert res.stdout == ""


def test_cluster_size_priorities_and_replay(tmp_path):
    (tmp_path / "vc.trace").write_text("A3C\tcmd\t-n\t1\t100\t0.0\t16\nA3C\tcmd\t-n\t1\t100\t5\t4\n")
    res = invoke("import", "gavel", str(tmp_path / "vc.trace"))
    assert res.exit_code == 2 and "give --nodes" in res.stderr
    res = invoke("import", "gavel", str(tmp_path / "vc.trace"), "--nodes", "2", "--priority", "other=5")
    assert res.exit_code == 2 and "--priority: no VC named other" in res.stderr
    trace = tmp_path / "t.jsonl"
    res = invoke("import", "gavel", str(tmp_path / "vc.trace"), "--nodes", "2", "--priority", "vc=100", "--steps-per-second", "1", "-o", str(trace))
    assert res.exit_code == 0, res.output
    res = invoke("run", str(trace), "--policy", "gang", "--format", "json")
    s = json.loads(res.stdout)
    # the 16-GPU gang takes both nodes for 100 s; the 4-GPU job waits for it
    assert s["gangs"]["completed"] == 2 and s["gangs"]["wait_max_s"] == 95.0


def test_offered_load_is_printed():
    # the fixture: 3 jobs, 52 GPU-hours of work arriving within 0.1 h on 16 GPUs (heavily overloaded)
    fixture = Path(__file__).parent / "fixtures" / "gavel"
    res = invoke("import", "gavel", str(fixture / "a.trace"), str(fixture / "cluster_specs.json"))
    assert res.exit_code == 0, res.stderr
    assert "gangsim: offered load 3900.0%: 52 GPU-hours asked over 0.1 h of arrivals on 16 GPUs\n" in res.stderr
    assert "below 10%" not in res.stderr
