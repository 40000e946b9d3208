"""SWF importer: header and job counts of every SWF log in traces-data (as their READMEs give
them), exact first objects, gang splitting, statuses, broken inputs."""

from __future__ import annotations

import gzip
import json

import pytest

from gangsim.load.importers import ImportOptions, Stats
from gangsim.load.importers import swf as swf_mod
from tests.importers.conftest import creates, dataset, imported, invoke

RICC = ("pwa-ricc-2010", "RICC-2010-2.swf.gz")
NASA = ("pwa-nasa-ipsc-1993", "NASA-iPSC-1993-3.1-cln.swf.gz")
HPC2N = ("pwa-hpc2n-2002-head", "hpc2n.swf")


def _parse(path: str, **options):
    stats = Stats()
    header, jobs = swf_mod.parse(path, ImportOptions(**options), stats)
    return header, jobs, stats


def test_ricc_header_and_job_count_match_the_readme():
    path = dataset(*RICC)
    header, jobs, stats = _parse(path)
    assert header.int("MaxProcs", path) == 8192 and header.int("MaxNodes", path) == 1024
    assert swf_mod.cluster_shape(header, ImportOptions(), path) == (1024, 8)
    # 447,794 job lines: 431,549 completed + 16,245 cancelled, of which 8 never ran (run time 0)
    assert len(jobs) + stats.counts["cancelled-before-start jobs skipped"] == 447_794
    assert len(jobs) == 447_786
    assert stats.counts["jobs cancelled while running (replayed for their run time)"] == 16_245 - 8
    assert max(jobs.procs) == 8192
    assert sum(1 for p in jobs.procs if p == 1) == 346_268  # the README's most common size
    assert all(jobs.submit[i] <= jobs.submit[i + 1] for i in range(len(jobs) - 1))


def test_nasa_and_hpc2n_and_lublin_counts_match_their_readmes():
    path = dataset(*NASA)
    header, jobs, stats = _parse(path)
    assert header.int("MaxProcs", path) == 128 and len(jobs) == 18_239
    assert swf_mod.cluster_shape(header, ImportOptions(), path) == (128, 1)
    path = dataset(*HPC2N)
    header, jobs, stats = _parse(path)
    assert header.int("MaxProcs", path) == 240
    assert len(jobs) == 3_145 and stats.counts["jobs skipped (unknown run time)"] == 25
    assert swf_mod.cluster_shape(header, ImportOptions(cores_per_node=2), path) == (120, 2)
    for name in ("lublin_256.swf", "lublin_256_new2", "lublin-aaroh.swf"):
        path = dataset("lublin-model-swf", name)
        header, jobs, stats = _parse(path)
        assert header.int("MaxNodes", path) == 256 and header.int("MaxProcs", path) is None
        assert len(jobs) == 10_000, name
        assert swf_mod.cluster_shape(header, ImportOptions(), path) == (256, 1)


def test_ricc_first_objects_are_exact():
    recs, stats = imported("swf", dataset(*RICC), limit=2)
    assert recs[0] == {"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": "RICC-2010-2"}, "events": []}
    assert recs[1] == {"at": 0, "create": {
        "apiVersion": "gangsim.dev/v1alpha1", "kind": "NodePool", "metadata": {"name": "swf"},
        "spec": {"count": 1024, "template": {"metadata": {"labels": {"swf.gangsim.dev/machine": "swf"}}, "status": {"allocatable": {"cpu": "8", "nvidia.com/gpu": "8"}}}},
    }}  # fmt: skip
    # job 1: 80 processors (10 pods of 8), run 222 s, wait 0; job 2: 128 processors at 1136 s
    assert recs[2] == {"at": 0, "create": {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "j1", "namespace": "swf"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 10}}}}}
    assert recs[3] == {"at": 0, "create": {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "j1", "namespace": "swf", "annotations": {"gangsim.dev/duration": "3m42s", "swf.gangsim.dev/wait": "0s"}},
        "spec": {"parallelism": 10, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "8"}}}], "schedulingGroup": {"podGroupName": "j1"}}}},
    }}  # fmt: skip
    assert recs[4]["at"] == 1136 and recs[5]["create"]["spec"]["parallelism"] == 16
    assert len(recs) == 6
    assert stats.counts["jobs"] == 2 and stats.counts["pods"] == 26


SWF_HEADER = "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 32\n; MaxQueues: 2\n"


def _line(job: int, submit: int, wait: int, run: int, procs: int, status: int = 1, queue: int = 1, req: int = -1) -> str:
    fields = [job, submit, wait, run, procs, -1, -1, req, 3600, -1, status, 1, 1, -1, queue, 1, -1, -1]
    return " ".join(str(f) for f in fields) + "\n"


def test_remainder_pods_cancelled_jobs_duplicates_and_queue_priorities(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(
        SWF_HEADER
        + _line(1, 0, 5, 100, 12)  # 8 + 4 processors: PodGroup j1, Job j1 (1 pod of 8), Job j1-r (1 pod of 4)
        + _line(2, 10, 0, 50, 3, queue=2)  # one pod of 3: a lone Job
        + _line(3, 20, 30, 0, 8, status=5)  # cancelled before it started
        + _line(4, 30, 0, 60, -1, req=16, status=0)  # failed after 60 s; size from field 8
        + _line(4, 40, 0, 70, 2)  # the same job number again (a partial execution)
        + _line(5, 50, 0, -1, 2)  # unknown run time: skipped
    )
    recs, stats = imported("swf", str(path), priorities={"2": 500})
    objs = creates(recs)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("PriorityClass", "swf-queue-2"), ("NodePool", "swf"),
        ("PodGroup", "j1"), ("Job", "j1"), ("Job", "j1-r"),
        ("Job", "j2"),
        ("PodGroup", "j4"), ("Job", "j4"),
        ("Job", "j4-2"),
    ]  # fmt: skip
    by = {(o["kind"], o["metadata"]["name"]): o for o in objs}
    assert by[("PodGroup", "j1")]["spec"] == {"schedulingPolicy": {"gang": {"minCount": 2}}}
    assert by[("Job", "j1")]["spec"]["parallelism"] == 1
    assert by[("Job", "j1-r")]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "4"}
    assert by[("Job", "j1-r")]["spec"]["template"]["spec"]["schedulingGroup"] == {"podGroupName": "j1"}
    assert by[("Job", "j2")]["spec"]["template"]["spec"]["priorityClassName"] == "swf-queue-2"
    assert by[("Job", "j4")]["spec"]["parallelism"] == 2 and by[("Job", "j4")]["metadata"]["annotations"]["gangsim.dev/duration"] == "1m"
    assert stats.counts["cancelled-before-start jobs skipped"] == 1
    assert stats.counts["jobs skipped (unknown run time)"] == 1
    assert stats.counts["failed jobs (replayed for their run time)"] == 1
    # --cancelled delete: job 3 is created at 20 and deleted at its cancellation (20 + 30)
    recs, stats = imported("swf", str(path), cancelled="delete", resource="cpu")
    j3 = [r for r in recs if ("create" in r and r["create"]["metadata"]["name"] == "j3") or ("delete" in r and r["delete"]["name"] == "j3")]
    assert j3[0]["at"] == 20 and j3[0]["create"]["metadata"]["annotations"] == {"swf.gangsim.dev/wait": "30s"}  # no duration
    assert j3[0]["create"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "8"}
    assert j3[1] == {"at": 50, "delete": {"kind": "Job", "namespace": "swf", "name": "j3"}}


def test_tiny_log_replays_under_every_policy(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(1, 0, 0, 100, 12) + _line(2, 10, 0, 50, 32) + _line(3, 20, 0, 10, 1))
    trace = tmp_path / "tiny.jsonl"
    assert invoke("import", "swf", str(path), "-o", str(trace)).exit_code == 0
    for policy in ("pod", "permit", "gang"):
        res = invoke("run", str(trace), "--policy", policy, "--format", "json")
        assert res.exit_code == 0, res.output
        s = json.loads(res.stdout)
        assert s["gangs"]["completed"] == 3 and s["gpu"]["capacity_s"] > 0
    res = invoke("run", f"swf:{path}", "--policy", "gang", "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["gangs"]["completed"] == 3


BROKEN = {
    "truncated-line": (_line(1, 0, 0, 10, 4) + "2 10 0 50", "tiny.swf:6: job 2: expected 18 whitespace-separated fields, found 4"),
    "wrong-field-count": (_line(1, 0, 0, 10, 4).strip() + " 7 7\n", "tiny.swf:5: job 1: expected 18 whitespace-separated fields, found 20"),
    "negative-size": (_line(1, 0, 0, 10, -3), 'tiny.swf:5: job 1: field 5 (allocated processors): Invalid value: "-3": must be positive'),
    "negative-run": (_line(1, 0, 0, -7, 4), 'tiny.swf:5: job 1: field 4 (run time): Invalid value: "-7": must not be negative'),
    "not-a-number": (_line(1, 0, 0, 10, 4).replace(" 3600 ", " 1h "), 'tiny.swf:5: job 1: field 9 (requested time): Invalid value: "1h": must be a number'),
    "zero-size": (_line(1, 0, 0, 10, 0), 'tiny.swf:5: job 1: field 5 (allocated processors): Invalid value: "0": must be positive'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_logs_exit_2_naming_line_and_field(tmp_path, case):
    body, message = BROKEN[case]
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + body)
    out = tmp_path / "out.jsonl"
    res = invoke("import", "swf", str(path), "-o", str(out))
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and message in res.stderr, res.stderr
    assert not out.exists()


def test_truncated_gzip_is_an_input_error(tmp_path):
    data = gzip.compress((SWF_HEADER + _line(1, 0, 0, 10, 4) * 2000).encode())
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(data[: len(data) // 2])
    res = invoke("import", "swf", str(path))
    assert res.exit_code == 2
    assert "cut.swf.gz" in res.stderr and "truncated gzip data: the file ends inside the compressed stream" in res.stderr
    assert res.stdout == ""


def test_header_without_sizes_needs_nodes(tmp_path):
    path = tmp_path / "bare.swf"
    path.write_text(_line(1, 0, 0, 10, 4))
    res = invoke("import", "swf", str(path))
    assert res.exit_code == 2 and "give --nodes" in res.stderr
    res = invoke("import", "swf", str(path), "--nodes", "2", "--cores-per-node", "4")
    assert res.exit_code == 0 and '"count":2' in res.stdout


def test_options_of_other_importers_are_usage_errors(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(1, 0, 0, 10, 4))
    res = invoke("import", "swf", str(path), "--shared-gpu", "whole")
    assert res.exit_code == 2 and "--shared-gpu: not an option of the swf importer" in res.stderr
    res = invoke("import", "swf", str(path), "--pod-size", "16")
    assert res.exit_code == 2 and "--pod-size" in res.stderr


def test_priority_for_a_queue_without_jobs_is_a_usage_error(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(1, 0, 0, 10, 4, queue=1))
    res = invoke("import", "swf", str(path), "--priority", "9=100")
    assert res.exit_code == 2 and "--priority: no jobs in queue 9 (field 15)" in res.stderr


@pytest.mark.parametrize(
    ("body", "notes"),
    [
        # 32 processors; 32 x 1 h asked over a 1 h arrival window: 100 %
        (_line(1, 0, 0, 3600, 32) + _line(2, 3600, 0, 0, 1),
         ["offered load 100.0%: 32 GPU-hours asked over 1.0 h of arrivals on 32 GPUs"]),
        # 2 x 100 s asked over 1 h: 0.2 %, a mostly idle cluster
        (_line(1, 0, 0, 100, 1) + _line(2, 3600, 0, 100, 1),
         ["offered load 0.2%: 0 GPU-hours asked over 1.0 h of arrivals on 32 GPUs",
          "warning: offered load below 10%: the cluster is mostly idle and every policy will start almost every job at once, "
          "so a comparison shows little (shrink it with --nodes)"]),
        # every job at t=0: a batch has no rate, nothing said
        (_line(1, 0, 0, 100, 1), []),
    ],
    ids=["full", "idle", "batch"],
)
def test_offered_load_is_noted_and_low_load_warned(tmp_path, body, notes):
    path = tmp_path / "load.swf"
    path.write_text(SWF_HEADER + body)
    _, stats = imported("swf", str(path))
    assert [n for n in stats.notes if "offered load" in n] == notes
    res = invoke("import", "swf", str(path), "-o", str(tmp_path / "t.jsonl"))
    assert res.exit_code == 0
    assert [line.removeprefix("gangsim: ") for line in res.stderr.splitlines() if "offered load" in line] == notes
