"""openb importer: the full default trace (published counts), exact first objects, variants,
broken CSVs, and a full replay under `pod`."""

from __future__ import annotations

import csv
import json

import pytest

from tests.importers.conftest import creates, dataset, imported, invoke, read_jsonl

OPENB = ("alibaba-gpu-v2023-openb",)


def _dir() -> str:
    return dataset(*OPENB)


def test_default_trace_matches_the_published_figures():
    recs, stats = imported("openb", _dir())
    nodes = creates(recs, "Node")
    pods = creates(recs, "Pod")
    assert len(nodes) == 1523
    assert len(pods) == 8152
    assert sum(int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) for n in nodes) == 6212
    assert sum(1 for n in nodes if "nvidia.com/gpu" in n["status"]["allocatable"]) == 1213
    # GPU request: gpu-milli summed over the pods equals num_gpu * gpu_milli summed over the file
    with open(dataset(*OPENB, "openb_pod_list_default.csv")) as f:
        want = sum(int(r["num_gpu"]) * int(r["gpu_milli"]) for r in csv.DictReader(f))
    got = sum(int(p["spec"]["containers"][0].get("resources", {}).get("limits", {}).get("alibaba.com/gpu-milli", 0)) for p in pods)
    assert got == want == 6_086_800
    assert stats.counts["GPU-milli requested"] == want
    # whole GPUs asked for: num_gpu of the non-shared pods (README: 3,911 + 2*16 + 4*15 + 8*44)
    assert sum(int(p["spec"]["containers"][0].get("resources", {}).get("limits", {}).get("nvidia.com/gpu", 0)) for p in pods) == 3911 + 32 + 60 + 352
    assert stats.counts["shared-GPU pods"] == 3078
    # the 897 Pending pods never ran: no duration, deleted at their deletion time
    deletes = [r for r in recs if "delete" in r]
    assert len(deletes) == 897
    assert sum(1 for p in pods if "annotations" not in p["metadata"]) == 897
    # cluster objects first, then arrivals in order
    times = [r["at"] for r in recs[1:]]
    assert times == sorted(times)
    assert all(r["create"]["kind"] == "Node" for r in recs[1:1524])


def test_first_objects_are_exact():
    recs, _ = imported("openb", _dir())
    assert recs[0] == {"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": "openb-default"}, "events": []}
    assert recs[1] == {"at": 0, "create": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "openb-node-0000"}, "status": {"allocatable": {"cpu": "32", "memory": "256Gi"}}}}
    gpu_node = next(n for n in creates(recs, "Node") if n["metadata"]["name"] == "openb-node-0234")
    assert gpu_node == {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "openb-node-0234", "annotations": {"gangsim.dev/gpu-share": "alibaba.com/gpu-milli"}, "labels": {"alibaba.com/gpu-model": "G2"}},
        "status": {"allocatable": {"cpu": "96", "memory": "384Gi", "nvidia.com/gpu": "8", "alibaba.com/gpu-milli": "8000"}},
    }  # fmt: skip
    first_pods = [r for r in recs if "create" in r and r["create"]["kind"] == "Pod"][:2]
    assert first_pods[0] == {
        "at": 0,
        "create": {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "openb-pod-0000", "namespace": "openb", "labels": {"alibaba.com/qos": "LS"}, "annotations": {"gangsim.dev/duration": "3482h38m16s"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "resources": {"requests": {"cpu": "12", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": "1", "alibaba.com/gpu-milli": "1000"}}}]},
        },
    }  # fmt: skip
    # openb-pod-0001: 460 milli of one GPU, created 427061, deleted 12902960 (duration = deletion - scheduled)
    assert first_pods[1]["at"] == 427061
    assert first_pods[1]["create"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "6", "memory": "12Gi"}, "limits": {"alibaba.com/gpu-milli": "460"}}
    assert first_pods[1]["create"]["metadata"]["annotations"] == {"gangsim.dev/duration": f"{(12902960 - 427061) // 3600}h{(12902960 - 427061) % 3600 // 60}m{(12902960 - 427061) % 60}s"}


def test_a_pending_pod_is_created_then_deleted_at_its_deletion_time():
    recs, _ = imported("openb", _dir())
    first_delete = next(r for r in recs if "delete" in r)
    name = first_delete["delete"]["name"]
    created = next(r for r in recs if "create" in r and r["create"]["metadata"]["name"] == name)
    with open(dataset(*OPENB, "openb_pod_list_default.csv")) as f:
        row = next(r for r in csv.DictReader(f) if r["name"] == name)
    assert row["pod_phase"] == "Pending" and row["scheduled_time"] == ""
    assert created["at"] == int(row["creation_time"])
    assert first_delete == {"at": int(row["deletion_time"]), "delete": {"kind": "Pod", "namespace": "openb", "name": name}}
    assert "annotations" not in created["create"]["metadata"]


def test_limit_gpu_node_list_and_whole_gpu_option():
    recs, stats = imported("openb", _dir(), dataset(*OPENB, "openb_node_list_gpu_node.csv"), limit=3, shared_gpu="whole")
    assert recs[0]["metadata"]["name"] == "openb-default"
    assert len(creates(recs, "Node")) == 1213
    pods = creates(recs, "Pod")
    assert [p["metadata"]["name"] for p in pods] == ["openb-pod-0000", "openb-pod-0001", "openb-pod-0002"]
    assert pods[1]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1", "alibaba.com/gpu-milli": "1000"}
    assert "shared-GPU pods" not in stats.counts


def test_gpu_spec_becomes_node_selector_or_affinity():
    recs, _ = imported("openb", _dir(), dataset(*OPENB, "openb_pod_list_gpuspec33.csv"))
    assert recs[0]["metadata"]["name"] == "openb-gpuspec33"
    with open(dataset(*OPENB, "openb_pod_list_gpuspec33.csv")) as f:
        specs = {r["name"]: r["gpu_spec"] for r in csv.DictReader(f)}
    pods = {p["metadata"]["name"]: p for p in creates(recs, "Pod")}
    multi = next(n for n, s in specs.items() if "|" in s)
    single = next(n for n, s in specs.items() if s and "|" not in s)
    assert pods[single]["spec"]["nodeSelector"] == {"alibaba.com/gpu-model": specs[single]}
    term = pods[multi]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {"matchExpressions": [{"key": "alibaba.com/gpu-model", "operator": "In", "values": specs[multi].split("|")}]}
    assert sum(1 for s in specs.values() if s) == sum(1 for p in pods.values() if "nodeSelector" in p["spec"] or "affinity" in p["spec"])


def test_multigpu_files_without_times_place_everything_at_zero():
    recs, _ = imported("openb", _dir(), dataset(*OPENB, "openb_pod_list_multigpu20.csv"))
    pods = [r for r in recs if "create" in r and r["create"]["kind"] == "Pod"]
    assert all(r["at"] == 0 and "annotations" not in r["create"]["metadata"] for r in pods)
    assert not [r for r in recs if "delete" in r]


def test_qos_priorities_are_opt_in():
    recs, _ = imported("openb", _dir(), limit=50, priorities={"LS": 1000, "BE": 0})
    classes = creates(recs, "PriorityClass")
    assert [(c["metadata"]["name"], c["value"]) for c in classes] == [("openb-ls", 1000), ("openb-be", 0)]
    pods = creates(recs, "Pod")
    assert {p["spec"].get("priorityClassName") for p in pods if p["metadata"]["labels"]["alibaba.com/qos"] == "LS"} == {"openb-ls"}
    plain, _ = imported("openb", _dir(), limit=50)
    assert not creates(plain, "PriorityClass")
    assert all("priorityClassName" not in p["spec"] for p in creates(plain, "Pod"))


def test_cli_import_is_deterministic_and_loads(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (a, b):
        res = invoke("import", "openb", _dir(), "-o", str(out))
        assert res.exit_code == 0, res.output
    assert a.read_bytes() == b.read_bytes()
    assert "1,523 nodes, 6,212 GPUs, 8,152 pods" in res.stderr
    assert len(read_jsonl(a)) == 1 + 1523 + 8152 + 897


POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
NODE_CSV = "sn,cpu_milli,memory_mib,gpu,model\nn-0,32000,262144,2,T4\n"
GOOD = "p-0,4000,1024,1,500,,BE,Running,10,100,12\n"
BROKEN = {
    "truncated-line": (GOOD + "p-1,4000,1024,1,5", "pods.csv:3: pod p-1: expected 11 columns"),
    "wrong-column-count": (GOOD + "p-1,4000,1024,1,500,,BE,Running,10,100,12,99\n", "pods.csv:3: pod p-1: expected 11 columns (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time), found 12"),
    "negative-cpu": ("p-0,-4000,1024,1,500,,BE,Running,10,100,12\n", 'pods.csv:2: pod p-0: cpu_milli: Invalid value: "-4000": must not be negative'),
    "not-a-number": ("p-0,4000,lots,1,500,,BE,Running,10,100,12\n", 'pods.csv:2: pod p-0: memory_mib: Invalid value: "lots": must be an integer'),
    "gpu-milli-too-big": ("p-0,4000,1024,1,1500,,BE,Running,10,100,12\n", 'pods.csv:2: pod p-0: gpu_milli: Invalid value: "1500": must be at most 1000'),
    "shared-multi-gpu": ("p-0,4000,1024,2,500,,BE,Running,10,100,12\n", 'pods.csv:2: pod p-0: gpu_milli: Invalid value: "500": must be 1000 when num_gpu is 2'),
    "deleted-before-scheduled": ("p-0,4000,1024,1,500,,BE,Running,10,11,12\n", 'pods.csv:2: pod p-0: deletion_time: Invalid value: "11": must not be before scheduled_time (12)'),
    "duplicate-name": (GOOD + GOOD, 'pods.csv:3: pod p-0: name: Invalid value: "p-0": duplicate pod name'),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_pod_lists_exit_2_naming_line_and_field(tmp_path, case):
    body, message = BROKEN[case]
    (tmp_path / "nodes.csv").write_text(NODE_CSV)
    (tmp_path / "pods.csv").write_text(POD_HEADER + body)
    out = tmp_path / "out.jsonl"
    res = invoke("import", "openb", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"), "-o", str(out))
    assert res.exit_code == 2, res.output
    line = res.stderr.strip()
    assert "\n" not in line and "Traceback" not in res.output
    assert line.startswith("gangsim: error: ") and message in line, line
    assert not out.exists() and not list(tmp_path.glob(".gangsim-*"))


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (POD_HEADER.replace("creation_time", "inf"), "column 9 is 'inf', expected 'creation_time'"),
        (POD_HEADER.replace(",scheduled_time", ""), "column 11 ('scheduled_time') is missing"),
        (POD_HEADER.replace("scheduled_time", "scheduled_time,extra"), "column 12 ('extra') is not an openb pod column"),
        (POD_HEADER.replace("qos", "q" * 10_000), f"column 7 is '{'q' * 39}…', expected 'qos'"),
    ],
    ids=["renamed", "missing", "extra", "10000-characters"],
)
def test_unexpected_header_names_the_first_wrong_column(tmp_path, header, message):
    """One column named, not both headers echoed: the line stays short (issue 17 item 3)."""
    (tmp_path / "nodes.csv").write_text(NODE_CSV)
    (tmp_path / "pods.csv").write_text(header + GOOD)
    res = invoke("import", "openb", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert line.startswith(f"gangsim: error: {tmp_path / 'pods.csv'}:1: unexpected CSV header: {message} (an openb pod list has "), line
    assert "\n" not in line and len(line) <= 300


def test_broken_node_list_names_line_and_field(tmp_path):
    (tmp_path / "nodes.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\nn-0,32000,262144,2,T4\nn-1,32000,262144,-2,T4\n")
    (tmp_path / "pods.csv").write_text(POD_HEADER + GOOD)
    res = invoke("import", "openb", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"))
    assert res.exit_code == 2
    assert 'nodes.csv:3: node n-1: gpu: Invalid value: "-2": must not be negative' in res.stderr
    assert res.stdout == ""


def test_small_hand_made_cluster_replays(tmp_path):
    (tmp_path / "nodes.csv").write_text(NODE_CSV)
    rows = [GOOD, "p-1,4000,1024,1,600,,BE,Running,20,200,20\n", "p-2,4000,1024,1,1000,T4,LS,Running,30,300,30\n", "p-3,4000,1024,1,1000,,LS,Pending,40,400,\n"]
    (tmp_path / "pods.csv").write_text(POD_HEADER + "".join(rows))
    trace = tmp_path / "t.jsonl"
    assert invoke("import", "openb", str(tmp_path / "nodes.csv"), str(tmp_path / "pods.csv"), "-o", str(trace)).exit_code == 0
    out = tmp_path / "report"
    res = invoke("run", str(trace), "--policy", "pod", "--format", "json", "--out", str(out))
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    # 500 + 600 milli share the node's 2000; p-2 needs a whole GPU (1000 milli) and 900 are left:
    # it waits for p-0 to end (t=10+88); p-3 (whole GPU, never scheduled in the trace) then waits
    # for p-1 (t=200) and is deleted at its deletion time (t=400)
    assert s["pods"]["total"] == 4 and s["pods"]["bound"] == 4
    import polars as pl

    pods = pl.read_csv(out / "pods.csv").sort("pod")
    assert pods["bound_s"].to_list() == [10.0, 20.0, 98.0, 200.0]
    assert pods["ended_s"].to_list() == [98.0, 200.0, 368.0, 400.0]
    assert pods["end_reason"].to_list() == ["Completed", "Completed", "Completed", "Deleted"]


def test_full_default_replay_under_pod_is_complete_and_stable(tmp_path):
    """The issue's cross-check: every pod bound or pending with a reason; same summary twice."""
    import polars as pl

    summaries = []
    for i in range(2):
        out = tmp_path / f"r{i}"
        res = invoke("run", f"openb:{_dir()}", "--policy", "pod", "--format", "json", "--out", str(out))
        assert res.exit_code == 0, res.output
        summaries.append(res.stdout)
    assert summaries[0] == summaries[1]
    s = json.loads(summaries[0])
    assert s["pods"]["total"] == 8152
    pods = pl.read_csv(out / "pods.csv", infer_schema_length=None)
    unbound = pods.filter(pl.col("bound_s").is_null())
    assert s["pods"]["bound"] + unbound.height == 8152
    for row in unbound.iter_rows(named=True):
        assert row["end_reason"] == "Deleted" or row["waiting_reason"], row


def test_priority_for_an_unknown_qos_is_a_usage_error():
    res = invoke("import", "openb", _dir(), "--limit", "5", "--priority", "Gold=7")
    assert res.exit_code == 2 and "--priority: no pods with qos Gold" in res.stderr
