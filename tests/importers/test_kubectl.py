"""kubectl importer on a hand-written `kubectl get … -o yaml` List: what is kept and dropped, the
warnings, --strict, JSON and stdin input, and the question it answers: do the pending pods fit,
and under which policy?"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.importers.conftest import creates, imported, invoke, read_jsonl

FIXTURE = str(Path(__file__).parent / "fixtures" / "kubectl-cluster.yaml")


def test_objects_kept_in_order_and_stripped():
    recs, stats = imported("kubectl", FIXTURE)
    assert recs[0]["metadata"]["name"] == "kubectl-cluster"
    assert all(r["at"] == 0 for r in recs[1:])
    objs = creates(recs)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("PriorityClass", "batch"),  # system-node-critical is built in: not copied
        ("Node", "node-a"), ("Node", "node-b"),
        ("PodGroup", "llm"),
        ("Pod", "nvidia-device-plugin-x7k2p"), ("Pod", "trainer-0"),  # bound, file order
        ("Pod", "notebook"), ("Pod", "llm-0"), ("Pod", "llm-1"), ("Pod", "llm-2"),  # pending, oldest first
    ]  # fmt: skip
    assert objs[1] == {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a", "nvidia.com/gpu.product": "H100-SXM5-80GB", "topology.kubernetes.io/zone": "zone-1"}},
        "status": {"allocatable": {"cpu": "96", "memory": "1000Gi", "nvidia.com/gpu": "8", "pods": "110", "ephemeral-storage": "900Gi"}},
    }  # fmt: skip
    assert objs[2]["spec"] == {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    assert objs[2]["status"]["allocatable"]["nvidia.com/gpu"] == "8"  # from status.capacity
    assert objs[3] == {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "llm", "namespace": "ml"}, "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}, "priorityClassName": "batch"}}
    # a bound pod keeps its node; its unmodelled fields (spread, host port, PVC) are dropped silently
    assert objs[5] == {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer-0", "namespace": "ml", "labels": {"app": "trainer"}},
        "spec": {"priorityClassName": "batch", "priority": 100, "preemptionPolicy": "Never", "schedulerName": "default-scheduler", "nodeName": "node-a",
                 "containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "4", "cpu": "16", "memory": "128Gi"}}}]},
    }  # fmt: skip
    assert objs[4]["spec"]["priorityClassName"] == "system-node-critical" and "priority" not in objs[4]["spec"]
    # a pending pod: its unknown class is dropped (priority kept), its spread constraint too
    assert objs[6]["spec"] == {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}], "priority": 100, "preemptionPolicy": "Never",
        "containers": [{"name": "lab", "resources": {"requests": {"cpu": "4", "memory": "32Gi"}, "limits": {"nvidia.com/gpu": "4"}}}],
    }  # fmt: skip
    assert stats.counts == {"priority classes": 1, "nodes": 2, "GPUs": 16, "PodGroups": 1, "bound pods": 2, "pending pods": 4, "succeeded pods skipped": 1}
    assert any("topology spread constraints of 1 pending pod (Pod research/notebook)" in n for n in stats.notes)
    assert any("PriorityClass interactive is not in the input" in n for n in stats.notes)
    assert any("skipped 1 Deployment object" in n for n in stats.notes)


def test_cli_warns_on_stderr_and_strict_fails(tmp_path):
    out = tmp_path / "c.jsonl"
    res = invoke("import", "kubectl", FIXTURE, "-o", str(out))
    assert res.exit_code == 0, res.output
    assert "warning: dropped topology spread constraints of 1 pending pod (Pod research/notebook)" in res.stderr
    assert len(read_jsonl(out)) == 11
    res = invoke("import", "kubectl", FIXTURE, "--strict", "-o", str(tmp_path / "s.jsonl"))
    assert res.exit_code == 2
    assert res.stderr.strip() == f"gangsim: error: {FIXTURE}:210: Pod research/notebook: spec.topologySpreadConstraints: Unsupported field: gangsim does not model topology spread constraints; without --strict it is dropped with a warning"
    assert not (tmp_path / "s.jsonl").exists()


def test_json_and_stdin_give_the_same_trace(tmp_path):
    as_yaml = invoke("import", "kubectl", FIXTURE, "--name", "c")
    assert as_yaml.exit_code == 0
    data = yaml.safe_load(Path(FIXTURE).read_text())
    as_json_file = tmp_path / "cluster.json"
    as_json_file.write_text(json.dumps(data, indent=2))
    as_json = invoke("import", "kubectl", str(as_json_file), "--name", "c")
    assert as_json.exit_code == 0 and as_json.stdout == as_yaml.stdout
    piped = invoke("import", "kubectl", "-", "--name", "c", input=Path(FIXTURE).read_text())
    assert piped.exit_code == 0 and piped.stdout == as_yaml.stdout


def test_which_policy_lets_the_pending_gang_in(tmp_path):
    """12 GPUs free, the older notebook takes 4: the 3 x 4-GPU gang cannot fit. `pod` binds two of
    its pods (stranded until the rendezvous timeout), `gang` binds none and says why."""
    trace = tmp_path / "c.jsonl"
    assert invoke("import", "kubectl", FIXTURE, "-o", str(trace)).exit_code == 0
    summary = {}
    for policy in ("pod", "gang"):
        res = invoke("run", str(trace), "--policy", policy, "--format", "json")
        assert res.exit_code == 0, res.output
        summary[policy] = json.loads(res.stdout)
    assert summary["gang"]["pods"]["bound"] == 3 and summary["gang"]["pods"]["pending_at_end"] == 3
    assert summary["gang"]["gpu"]["stranded_s"] == 0
    assert summary["pod"]["gpu"]["stranded_s"] > 0
    assert summary["pod"]["gangs"]["started"] == 0 and summary["gang"]["gangs"]["started"] == 0
    # the same, loaded directly
    res = invoke("run", f"kubectl:{FIXTURE}", "--policy", "gang", "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["pods"] == summary["gang"]["pods"]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {conditions: []}\n", "c.yaml:4: Node n: status.allocatable: Required value"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resources: {requests: {cpu: '1'}}\n  containers: [{name: c}]\n", "c.yaml:5: Pod default/p: spec.resources: Unsupported field: gangsim does not model pod-level resources"),
        ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p\n", "c.yaml:"),
        # what ``run`` would refuse, ``import`` refuses, at the object's place in the dump (issue 17 item 1)
        (
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels: {kubernetes.io/hostname: {nested: n}}\nstatus: {allocatable: {cpu: '1'}}\n",
            'c.yaml:1: Node n: metadata.labels[kubernetes.io/hostname]: Invalid value: {"nested":"n"}: label values must be strings',
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  schedulingGroup: [{podGroupName: g}]\n  containers: [{name: c}]\n",
            'c.yaml:1: Pod ml/p: spec.schedulingGroup: Invalid value: [{"podGroupName":"g"}]: must be an object',
        ),
    ],
)
def test_broken_input_exits_2(tmp_path, doc, message):
    path = tmp_path / "c.yaml"
    path.write_text(doc)
    res = invoke("import", "kubectl", str(path))
    assert res.exit_code == 2
    assert message in res.stderr and res.stderr.count("\n") == 1, res.stderr


def test_repeated_objects_are_imported_once_with_a_note(tmp_path):
    """Overlapping dumps (or one dump given twice): the first copy of an object wins, said once."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 10\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '4', nvidia.com/gpu: '8'}}\n"
    )
    out = tmp_path / "t.jsonl"
    res = invoke("import", "kubectl", str(path), str(path), "-o", str(out))
    assert res.exit_code == 0, res.stderr
    assert "skipped 2 repeated objects (same kind, namespace and name as an earlier one: the first copy is imported)" in res.stderr
    kinds = [rec.get("create", {}).get("kind") for rec in read_jsonl(out)]
    assert kinds == [None, "PriorityClass", "Node"]
    assert invoke("run", str(out), "--horizon", "1h", "--no-progress").exit_code == 0
