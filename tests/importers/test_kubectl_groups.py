"""kubectl importer, issue 12 item 4: dumped pods grouped as their controller would (Job owners,
LeaderWorkerSet labels, v1.35 v1alpha1 Workloads), loud warnings about missing nodes, and a dump
split over several files and formats."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gangsim.load import load_trace
from gangsim.sim.replay import replay
from tests.importers.conftest import creates, imported, invoke

FIXTURE = str(Path(__file__).parent / "fixtures" / "kubectl-owners.yaml")


def by_name(objs):
    return {(o["kind"], o["metadata"]["name"]): o for o in objs}


def test_pods_are_grouped_as_their_controllers_would():
    recs, stats = imported("kubectl", FIXTURE)
    objs = by_name(creates(recs))
    # Job owner in the dump (parallelism == completions): the pods keep the controller reference
    assert objs["Pod", "train-0-abcde"]["metadata"]["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "controller": True}]
    assert ("Job", "train") not in objs  # the Job itself is not replayed
    # LeaderWorkerSet: one PodGroup per group, minCount from the size annotation
    assert objs["PodGroup", "lws-0"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert [objs["Pod", p]["spec"]["schedulingGroup"] for p in ("lws-0", "lws-0-1")] == [{"podGroupName": "lws-0"}] * 2
    # v1.35 Workload: podGroup "workers" of Workload wl -> PodGroup wl-workers, pods point at it
    assert objs["PodGroup", "wl-workers"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 2}}
    assert [objs["Pod", p]["spec"]["schedulingGroup"] for p in ("w-0", "w-1")] == [{"podGroupName": "wl-workers"}] * 2
    assert ("Workload", "wl") not in objs and all("workloadRef" not in o.get("spec", {}) for o in objs.values())
    assert "read 1 Job to group their pods (the Jobs are not replayed: gangsim recreates none of the dumped pods)" in stats.notes


def test_the_replay_sees_one_gang_per_owner(tmp_path):
    out = tmp_path / "t.jsonl"
    assert invoke("import", "kubectl", FIXTURE, "-o", str(out)).exit_code == 0
    log = replay(load_trace([out], default_duration_ms=3_600_000), "permit")
    assert sorted((g.gang, g.kind, g.pods, g.min_count) for g in log.gangs) == [
        ("ml/lws-0", "PodGroup", 2, 2),
        ("ml/train", "Job", 2, 2),
        ("ml/wl-workers", "PodGroup", 2, 2),
    ]


def test_missing_nodes_are_said_loudly(tmp_path):
    res = invoke("import", "kubectl", FIXTURE, "-o", str(tmp_path / "t.jsonl"))
    assert "gangsim: warning: 1 bound pod on 1 node absent from the dump (gpu-9): it replays as Rejected, not running; dump those nodes too\n" in res.stderr
    no_nodes = tmp_path / "pods.yaml"
    data = yaml.safe_load(Path(FIXTURE).read_text())
    data["items"] = [i for i in data["items"] if i["kind"] != "Node"]
    no_nodes.write_text(yaml.safe_dump(data))
    res = invoke("run", f"kubectl:{no_nodes}", "--format", "json", "--no-progress")
    assert res.exit_code == 0
    assert "warning: the dump has no nodes: pending pods can never be scheduled and bound pods are rejected; dump them too (kubectl get nodes,pods,jobs -A -o yaml)" in res.stderr


def test_a_dump_in_several_files_and_formats_is_one_trace(tmp_path):
    data = yaml.safe_load(Path(FIXTURE).read_text())
    nodes = {"apiVersion": "v1", "kind": "List", "items": [i for i in data["items"] if i["kind"] == "Node"]}
    rest = {"apiVersion": "v1", "kind": "List", "items": [i for i in data["items"] if i["kind"] != "Node"]}
    (tmp_path / "nodes.json").write_text(json.dumps(nodes))
    (tmp_path / "rest.yaml").write_text(yaml.safe_dump(rest))
    whole, _ = imported("kubectl", FIXTURE)
    split, _ = imported("kubectl", str(tmp_path / "nodes.json"), str(tmp_path / "rest.yaml"))
    assert creates(split) == creates(whole)


def test_a_bad_lws_size_is_one_line(tmp_path):
    text = Path(FIXTURE).read_text().replace('{leaderworkerset.sigs.k8s.io/size: "2"}', '{leaderworkerset.sigs.k8s.io/size: "999999"}', 1)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    res = invoke("import", "kubectl", str(path), "-o", str(tmp_path / "t.jsonl"))
    assert res.exit_code == 2
    assert res.stderr == f"gangsim: error: {path}:45: Pod ml/lws-0: metadata.annotations[leaderworkerset.sigs.k8s.io/size]: Invalid value: 999999: must be an integer between 0 and 100000\n"
