"""Broken input: exit 2, one line on stderr naming file (and line), object and field, no
traceback, and nothing written to --out."""

import subprocess
import sys

import pytest

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi}}
"""

CASES = {
    "bad-quantity": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: lots}}\n", "t.yaml:7: Pod default/p: spec.containers[0].resources.requests[cpu]"),
    "fractional-gpu": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 0.5}}\n", "nvidia.com/gpu"),
    "negative-quantity": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {memory: -1Gi}}\n", "memory"),
    "unknown-kind": ("apiVersion: v1\nkind: Deployment\nmetadata: {name: d}\n", "kind"),
    "wrong-api-version": ("apiVersion: v2\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n", "apiVersion"),
    "missing-name": ("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec: {containers: [{name: c}]}\n", "metadata.name"),
    "typo-field": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelecter: {a: b}\n  containers: [{name: c}]\n", "nodeSelecter"),
    "topology-spread": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n  containers: [{name: c}]\n", "spec.topologySpreadConstraints[0].maxSkew"),
    "bad-duration": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {gangsim.dev/duration: forever}}\nspec: {containers: [{name: c}]}\n", "gangsim.dev/duration"),
    "unknown-priority-class": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: gold\n  containers: [{name: c}]\n", "priorityClassName"),
    "yaml-syntax": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p\n", "t.yaml:"),
    "node-without-size": ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "Node n"),
    "bad-taint-effect": ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {taints: [{key: a, effect: Sometimes}]}\nstatus: {allocatable: {cpu: '1'}}\n", "effect"),
    "min-count-zero": ("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 0}}}\n", "minCount"),
    "basic-and-all": ("apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {basic: {}}, disruptionMode: {all: {}}}\n", "the disruptionMode `all` is not supported with the Basic scheduling policy"),
    "duplicate-object": (NODE + "---" + NODE, "Node n1"),
    "delete-missing": ("apiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: t}\nevents:\n- at: 5s\n  delete: {kind: Node, name: ghost}\n", "ghost"),
    "bad-scoring-strategy": ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Random}}\n", "Random"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_broken_input_exits_2_with_one_line_and_no_output(name, tmp_path):
    text, needle = CASES[name]
    trace = tmp_path / "t.yaml"
    trace.write_text(text)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "gangsim.cli", "run", "t.yaml", "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("gangsim: error: t.yaml")
    assert needle in lines[0]
    assert proc.stdout == ""
    assert not out.exists()


def test_usage_errors_exit_2(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gangsim.cli", "run", "missing.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "gangsim: error: missing.yaml: no such file or directory"
    proc = subprocess.run([sys.executable, "-m", "gangsim.cli", "run", "x.yaml", "--policy", "nope"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2
