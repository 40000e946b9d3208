"""CompositePodGroup input (KEP-6012): upstream's validation of Workload
``compositePodGroupTemplates`` (pkg/apis/scheduling/validation ``ValidateWorkloadSpec``), of the
v1alpha3 CompositePodGroup (``+k8s:required`` workloadRef, ``minimum=1`` minGroupCount) and of
the runtime trees (parent present, no cycle, depth ≤ 4, with the diagnostics of upstream's
``TestHierarchyValidation`` integration test). Each is one line naming file:line, object and field."""

from __future__ import annotations

import pytest

CPG = "---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  workloadRef: {{workloadName: w, templateName: {name}}}\n  schedulingPolicy: {{basic: {{}}}}\n{extra}"
PG = "---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  workloadRef: {{workloadName: w, templateName: {name}}}\n  schedulingPolicy: {{basic: {{}}}}\n{extra}"
WL = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: Workload\nmetadata: {name: w, namespace: ml}\nspec:\n"


def cpg(name, parent=None):
    return CPG.format(name=name, extra=f"  parentCompositePodGroupName: {parent}\n" if parent else "")


def pg(name, parent=None):
    return PG.format(name=name, extra=f"  parentCompositePodGroupName: {parent}\n" if parent else "")


def nest(depth: int) -> str:
    """A Workload whose composite templates nest ``depth`` levels, a PodGroupTemplate at the bottom."""
    text, pad = WL + "  compositePodGroupTemplates:\n", "  "
    for level in range(depth):
        text += f"{pad}- name: c{level}\n{pad}  schedulingPolicy: {{gang: {{minGroupCount: 1}}}}\n"
        text += f"{pad}  {'compositePodGroupTemplates' if level < depth - 1 else 'podGroupTemplates'}:\n"
        pad += "  "
    return text + f"{pad}- name: leaf\n{pad}  schedulingPolicy: {{gang: {{minCount: 2}}}}\n"


CASES = [
    pytest.param(
        cpg("root") + pg("pa", "nope"),
        't.yaml:9: PodGroup ml/pa: spec.parentCompositePodGroupName: Invalid value: "nope": ml/nope not found in workload forest',
        id="unknown-parent",
    ),
    pytest.param(
        cpg("c1", "c2") + cpg("c2", "c1") + pg("pa", "c1"),
        't.yaml:2: CompositePodGroup ml/c1: spec.parentCompositePodGroupName: Invalid value: "c2": cycle detected in hierarchy',
        id="cycle",
    ),
    pytest.param(
        cpg("c0") + cpg("c1", "c0") + cpg("c2", "c1") + cpg("c3", "c2") + pg("pa", "c3"),
        't.yaml:33: PodGroup ml/pa: spec.parentCompositePodGroupName: Invalid value: "c3": hierarchy depth 5 exceeds maximum allowed depth 4',
        id="tree-depth",
    ),
    pytest.param(
        nest(4),
        "t.yaml:5: Workload ml/w: spec.compositePodGroupTemplates[0]: Invalid value: [\"c1\"]: maximum template hierarchy depth is 4",
        id="template-depth",
    ),
    pytest.param(
        WL + "  compositePodGroupTemplates:\n  - name: c\n    schedulingPolicy: {basic: {}}\n",
        't.yaml:6: Workload ml/w: spec.compositePodGroupTemplates[0]: Invalid value: "c": must have at least one child PodGroupTemplate or CompositePodGroupTemplate',
        id="template-without-child",
    ),
    pytest.param(
        WL + "  compositePodGroupTemplates:\n  - name: c\n    schedulingPolicy: {basic: {}}\n    priority: 5\n    podGroupTemplates:\n    - name: a\n      schedulingPolicy: {basic: {}}\n",
        "t.yaml:5: Workload ml/w: spec: Invalid value: null: all priority and priorityClassName values must be identical, detected multiple values",
        id="template-priorities",
    ),
    pytest.param(
        WL + "  compositePodGroupTemplates:\n  - name: a\n    schedulingPolicy: {basic: {}}\n    podGroupTemplates:\n    - name: a\n      schedulingPolicy: {basic: {}}\n",
        't.yaml:5: Workload ml/w: spec.compositePodGroupTemplates[0].podGroupTemplates[0].name: Duplicate value: "a": must be unique',
        id="template-names",
    ),
    pytest.param(
        WL + "  podGroupTemplates:\n  - name: a\n    schedulingPolicy: {basic: {}}\n  compositePodGroupTemplates:\n  - name: c\n    schedulingPolicy: {basic: {}}\n    podGroupTemplates:\n    - name: b\n      schedulingPolicy: {basic: {}}\n",
        't.yaml:8: Workload ml/w: spec: Invalid value: "{`podGroupTemplates`, `compositePodGroupTemplates`}": exactly one of `podGroupTemplates`, `compositePodGroupTemplates` is required, but multiple fields are set',
        id="template-union",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: c, namespace: ml}\nspec:\n  schedulingPolicy: {gang: {minGroupCount: 1}}\n",
        "t.yaml:5: CompositePodGroup ml/c: spec.workloadRef: Required value",
        id="cpg-workload-ref",
    ),
    pytest.param(
        "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: c, namespace: ml}\nspec:\n  workloadRef: {workloadName: w, templateName: c}\n  schedulingPolicy: {gang: {minGroupCount: 0}}\n",
        "t.yaml:6: CompositePodGroup ml/c: spec.schedulingPolicy.gang.minGroupCount: Required value",
        id="cpg-min-group-count",
    ),
]


@pytest.mark.parametrize(("text", "message"), CASES)
def test_broken_composite_input(load_error, text, message):
    assert load_error(text) == message


def test_the_gate_needs_topology_aware_scheduling(load_error):
    """algorithm_podgroup.go schedules a hierarchy only through placements."""
    config = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n  - name: GangScheduling\n    args: {compositePodGroup: true}\n"
    assert load_error(config) == "t.yaml:7: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.compositePodGroup: Invalid value: true: CPG requires TopologyAwareWorkloadScheduling feature to be enabled"


def test_a_valid_tree_loads(load):
    trace = load(WL + "  compositePodGroupTemplates:\n  - name: c\n    schedulingPolicy: {gang: {minGroupCount: 1}}\n    podGroupTemplates:\n    - name: a\n      schedulingPolicy: {gang: {minCount: 2}}\n" + cpg("root") + pg("pa", "root"), "t.yaml", None)
    kinds = [ev.kind for ev in trace.events]
    assert kinds == ["Workload", "CompositePodGroup", "PodGroup"]
    assert trace.events[2].obj.parent == "root"
    assert trace.events[0].obj.composite_templates[0].pod_group_templates[0].policy.min_count == 2


def test_a_composite_pod_group_carries_disruption_mode_and_preemption_policy(load):
    """Newest upstream reads ``cpg.Spec.DisruptionMode`` (``GenericPodGroup.HasDisruptionModeAll``:
    the highest ``all`` ancestor is one victim unit) and ``cpg.Spec.PreemptionPolicy``
    (``GenericPodGroup.GetPreemptionPolicy``: the tree's as a preemptor)."""
    gang = "apiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {name: c, namespace: ml}\nspec:\n  workloadRef: {workloadName: w, templateName: c}\n  schedulingPolicy: {gang: {minGroupCount: 1}}\n"
    obj = load(gang + "  disruptionMode: {all: {}}\n  preemptionPolicy: Never\n").events[0].obj
    assert (obj.policy.disruption_mode.value, obj.policy.preemption_policy.value) == ("all", "Never")
    assert load(gang).events[0].obj.policy.disruption_mode.value == "single"
