"""``gangsim validate``: loader errors (all of them, located) and the pitfall warnings (EXAMPLES §5)."""

from __future__ import annotations

import pytest

from validate.kit import CONFIG, NODE, docs, job, pg, pod, priority_class, trace_events, workload

CLEAN = docs(
    NODE,
    priority_class("ml-high", 1000),
    workload("allreduce", "- {name: worker, schedulingPolicy: {gang: {minCount: 2}}, priorityClassName: ml-high}"),
    pg("allreduce-worker-0", 2, spec="workloadRef: {workloadName: allreduce, templateName: worker}\npriorityClassName: ml-high"),
    job("allreduce", 2, "allreduce-worker-0", spec="priorityClassName: ml-high"),
)

WARNING_CASES = [
    pytest.param(docs(NODE, pg("pg", 1, at="40s"), pod("a")), [
            ('pod-before-podgroup', 'Pod ml/a', 'created 40s before its PodGroup ml/pg: it waits at PreEnqueue until then; create the PodGroup (after its Workload) before the pods'),
        ], id="pod-before-podgroup"),
    pytest.param(docs(NODE, pg("pg", 2, at="40s"), pod("a"), pod("b", at="10s")), [
            ('pod-before-podgroup', 'Pod ml/a', 'created 40s before its PodGroup ml/pg (and 1 more pod like it): it waits at PreEnqueue until then; create the PodGroup (after its Workload) before the pods'),
        ], id="pod-before-podgroup-folded"),
    pytest.param(docs(NODE, pg("pg", 4, at="1m"), job("j", 4, interval="20s")), [
            ('pod-before-podgroup', 'Job ml/j', 'its pods are created up to 1m before their PodGroup ml/pg (3 of 4 pods): they wait at PreEnqueue until then; create the PodGroup (after its Workload) before the pods'),
        ], id="pod-before-podgroup-job"),
    pytest.param(docs(NODE, pg("pg", 2), pod("a", at="5s"), pod("b")), [], id="same-instant-or-later-is-fine"),
    pytest.param(docs(NODE, pod("a", "nope"), pod("b", "nope"), job("j", 2, "nope")), [
            ('podgroup-missing', 'Pod ml/a', 'references PodGroup ml/nope, which the trace never creates (and 1 more pod like it): it waits at PreEnqueue forever; create the PodGroup or drop spec.schedulingGroup'),
            ('podgroup-missing', 'Job ml/j', 'its pods reference PodGroup ml/nope, which the trace never creates: they wait at PreEnqueue forever; create the PodGroup or drop spec.template.spec.schedulingGroup'),
        ], id="podgroup-missing"),
    pytest.param(
        docs(NODE, priority_class("low", 100), priority_class("high", 1000), pg("pg", 2, spec="priorityClassName: low"),
             job("j", 2, spec="priorityClassName: high")),
        [
            ('priority-mismatch', 'Job ml/j', "its pods' priority 1000 (class high) differs from PodGroup ml/pg's priority 100 (class low): every cycle of the group fails with SchedulerError: all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got 1000 (\"j-0\") and 100 (\"ml/pg\"); give pods and PodGroup the same priority value"),
        ], id="priority-mismatch-job"),  # fmt: skip
    pytest.param(
        docs(NODE, pg("pg", 2, spec="priority: 7"), pod("a"), pod("b")),
        [
            ('priority-mismatch', 'Pod ml/a', "priority 0 differs from PodGroup ml/pg's priority 7 (and 1 more pod like it): every cycle of the group fails with SchedulerError: all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got 0 (\"a\") and 7 (\"ml/pg\"); give pods and PodGroup the same priority value"),
        ], id="priority-mismatch-pods-folded"),
    pytest.param(
        docs(NODE, priority_class("a", 100), priority_class("b", 100), pg("pg", 2, spec="priorityClassName: a"),
             job("j", 2, spec="priorityClassName: b")),
        [], id="equal-values-different-class-names-are-fine"),  # fmt: skip
    pytest.param(
        docs(NODE, priority_class("never", 100, "preemptionPolicy: Never\n"), pg("pg", 2, spec="priority: 100"),
             job("j", 2, spec="priorityClassName: never")),
        [
            ('preemption-policy-mismatch', 'Job ml/j', "preemptionPolicy Never differs from PodGroup ml/pg's PreemptLowerPriority: every cycle of the group fails with SchedulerError: all pods in a pod group hierarchy should have the same preemption policy as the root pod group's preemption policy, got Never (\"j-0\") and PreemptLowerPriority (\"ml/pg\"); use the same preemptionPolicy (or PriorityClass) for pods and PodGroup"),
        ], id="preemption-policy-mismatch"),  # fmt: skip
    pytest.param(docs(NODE, pg("pg", 2), pod("a"), pod("b", spec="schedulerName: batch")), [
            ('mixed-scheduler-name', 'PodGroup ml/pg', 'its pods use schedulerName "default-scheduler" (Pod ml/a) and "batch" (Pod ml/b): every cycle of the group fails with SchedulerError: all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "batch" ("b") and "default-scheduler" ("a"); use one scheduler for the whole group'),
        ], CONFIG, id="mixed-scheduler-name"),
    pytest.param(docs(NODE, pod("a", None, spec="schedulerName: my-sched"), pod("b", None, spec="schedulerName: my-sched")), [
            ('unknown-scheduler', 'Pod ml/a', 'schedulerName "my-sched" (and 1 more pod like it) has no profile in the KubeSchedulerConfiguration (profiles: "default-scheduler"): the pod is never scheduled and counts for no gang; add a profile or fix the name'),
        ], id="unknown-scheduler"),
    pytest.param(docs(NODE, pod("a", None, spec="schedulerName: batch")), [], CONFIG, id="profile-from-config-is-known"),
    pytest.param(
        docs(NODE, pg("pg", 2), pod("a", gpu=8, spec="nodeSelector: {gpu: a100}"), pod("b", gpu=2)),
        [
            ('heterogeneous-group', 'PodGroup ml/pg', "its pods differ in requests or node constraints (2 shapes, e.g. Pod ml/a: nvidia.com/gpu: 8; nodeSelector gpu=a100 / Pod ml/b: nvidia.com/gpu: 2): the group's single greedy pass may miss a placement that exists; let the depended-on (hardest to place) pods go first: the cycle orders pods by priority, then creation time, and pod priorities must equal the PodGroup's, so create them first"),
            ('pod-fits-no-node', 'Pod ml/a', 'is ruled out of every node (1 node by nodeSelector/affinity): no node can ever hold one'),
        ], id="heterogeneous-group"),
    pytest.param(
        docs(NODE, pg("pg", 2), pod("a", labels="{app: a}"),
             pod("b", spec="affinity:\n  podAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
                           "    - {labelSelector: {matchLabels: {app: a}}, topologyKey: kubernetes.io/hostname}")),
        [
            ('intra-group-affinity', 'PodGroup ml/pg', "Pod ml/b has required pod affinity to pods of the same group (Pod ml/a): the group's single greedy pass may miss a placement that exists; let the depended-on (hardest to place) pods go first: the cycle orders pods by priority, then creation time, and pod priorities must equal the PodGroup's, so create them first"),
        ], id="intra-group-affinity"),  # fmt: skip
    pytest.param(
        docs(NODE, pg("pg", 2), job("j", 2, labels="{app: j}",
             spec="affinity:\n  podAntiAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
                  "    - {labelSelector: {matchLabels: {app: j}}, topologyKey: kubernetes.io/hostname}")),
        [
            ('intra-group-affinity', 'PodGroup ml/pg', "Job ml/j has required pod anti-affinity to its own sibling pods: the group's single greedy pass may miss a placement that exists; let the depended-on (hardest to place) pods go first: the cycle orders pods by priority, then creation time, and pod priorities must equal the PodGroup's, so create them first"),
        ], id="intra-group-anti-affinity-siblings"),  # fmt: skip
    pytest.param(
        docs(NODE.replace("{name: n1}", "{name: n1, annotations: {gangsim.dev/remove-at: 2h}}"), pg("pg", 2), job("j", 2)),
        [
            ('initially-scheduled-monotonic', 'PodGroup ml/pg', 'members of scheduled PodGroups can be evicted here (Node n1 is deleted at 2h): PodGroupInitiallyScheduled stays True after evictions, so it is no health check; watch the member pods instead (gangsim: the gangs and victims tables)'),
        ], id="initially-scheduled-node-deletion"),
    pytest.param(
        docs(NODE, priority_class("low", 100), priority_class("high", 1000), pg("pg", 2, spec="priorityClassName: low"),
             job("j", 2, spec="priorityClassName: low"), job("urgent", 1, None, spec="priorityClassName: high")),
        [
            ('initially-scheduled-monotonic', 'PodGroup ml/pg', 'members of scheduled PodGroups can be evicted here (PodGroup ml/pg (priority 100) can be preempted by Job ml/urgent (priority 1000)): PodGroupInitiallyScheduled stays True after evictions, so it is no health check; watch the member pods instead (gangsim: the gangs and victims tables)'),
        ], id="initially-scheduled-preemption"),  # fmt: skip
    pytest.param(
        docs(NODE, pg("pg", 4), pod("a"), pod("b"),
             trace_events("- at: 1m\n  patch: {kind: PodGroup, namespace: ml, name: pg, spec: {schedulingPolicy: {gang: {minCount: 2}}}}")),
        [], id="min-count-patched-down-is-fine"),  # fmt: skip
    pytest.param(docs(NODE, pg("pg", 4), pod("a"), pod("b")), [
            ('min-count-unreachable', 'PodGroup ml/pg', 'gang.minCount 4 but only 2 pods ever reference this PodGroup: the gang can never start; lower minCount or create more pods'),
        ], id="min-count-unreachable"),
    pytest.param(docs(NODE, pg("pg", 4), job("j", 2)), [
            ('parallelism-below-min-count', 'Job ml/j', 'parallelism 2 is below gang.minCount 4 of its PodGroup ml/pg: the gang can never start; set parallelism to at least minCount (or lower minCount)'),
        ], id="parallelism-below-min-count"),
    # an SWF-style split: full pods in one Job, the remainder in another, one PodGroup for both
    pytest.param(docs(NODE, pg("pg", 3), job("j", 2), job("j-r", 1)), [], id="split-jobs-add-up"),
    pytest.param(
        docs(NODE, pg("pg", 4), job("j", 2), trace_events("- at: 1m\n  patch: {kind: Job, namespace: ml, name: j, spec: {parallelism: 4}}")),
        [], id="parallelism-patched-up-is-fine"),
    pytest.param(docs(NODE, pg("pg", 2)), [
            ('podgroup-unused', 'PodGroup ml/pg', 'no Pod or Job references this PodGroup (spec.schedulingGroup.podGroupName: pg): check the name for a typo'),
        ], id="podgroup-unused"),
    pytest.param(
        docs(NODE, workload("w", "- {name: worker, schedulingPolicy: {gang: {minCount: 2}}}\n- {name: driver, schedulingPolicy: {basic: {}}}"),
             pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: worker}"), job("j", 2)),
        [
            ('workload-template-unused', 'Workload ml/w', 'podGroupTemplate "driver" is referenced by no PodGroup (spec.workloadRef.templateName): create its PodGroup or remove the template (templates cannot be removed later)'),
        ], id="workload-template-unused"),  # fmt: skip
    pytest.param(docs(NODE, pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: worker}"), job("j", 2)), [
            ('workload-missing', 'PodGroup ml/pg', 'spec.workloadRef names Workload ml/w, which the trace never creates: create it first (Workload → PodGroup → Pods)'),
        ], id="workload-missing"),
    pytest.param(
        docs(NODE, workload("w"), pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: trainer}"), job("j", 2)),
        [
            ('workload-template-unused', 'Workload ml/w', 'podGroupTemplate "worker" is referenced by no PodGroup (spec.workloadRef.templateName): create its PodGroup or remove the template (templates cannot be removed later)'),
            ('workload-template-missing', 'PodGroup ml/pg', 'spec.workloadRef names template "trainer", which Workload ml/w does not have (templates: "worker"); templates cannot be added later'),
        ], id="workload-template-missing"),
    pytest.param(
        docs(NODE, workload("w"), pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: worker}\ndisruptionMode: {all: {}}"), job("j", 2)),
        [
            ('podgroup-template-mismatch', 'PodGroup ml/pg', 'disruptionMode is all here but single in template "worker" of Workload ml/w: a PodGroup copies its template\'s policy; keep them equal'),
        ], id="podgroup-template-mismatch"),
    pytest.param(
        docs(NODE, workload("w", at="30s"), pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: worker}", at="30s"),
             job("j", 2, at="30s"), ),
        [], id="workload-first-same-instant-is-fine"),  # fmt: skip
    pytest.param(
        docs(NODE, workload("w", at="30s"), pg("pg", 2, spec="workloadRef: {workloadName: w, templateName: worker}"), job("j", 2, at="30s")),
        [
            ('podgroup-before-workload', 'PodGroup ml/pg', 'created 30s before its Workload ml/w: create Workload → PodGroup → Pods in that order'),
        ], id="podgroup-before-workload"),
    pytest.param(docs(NODE, pg("pg", 300), job("j", 300, interval="1s")), [
            ('large-gang', 'PodGroup ml/pg', 'a gang of 300 pods starts only once all of them are created, observed and placed (its pods are created over 4m59s): pod start-up SLOs need re-defining for gangs over 256 pods'),
            ('gang-never-fits', 'PodGroup ml/pg', 'needs minCount 300 pods of 1 nvidia.com/gpu; even with the cluster empty at most 8 fit (1 node holds up to 8 each, bounded by nvidia.com/gpu); 300 needed: the gang can never start'),
        ], id="large-gang"),
    pytest.param(docs(NODE, job("j", 8, None)), [
            ('job-without-podgroup', 'Job ml/j', 'parallelism 8 but no PodGroup: its pods are scheduled one by one under every policy, and partial jobs hold GPUs idle until the rendezvous timeout; add a PodGroup with gang.minCount: 8 and set spec.template.spec.schedulingGroup.podGroupName'),
        ], id="job-without-podgroup"),
    pytest.param(docs(NODE, pod("a", None, spec="schedulingGates: [{name: wait}]")), [
            ('scheduling-gated', 'Pod ml/a', 'spec.schedulingGates ["wait"] are never removed by a later patch: the pod is never scheduled; patch the gates away (spec.schedulingGates: null) when it may be scheduled'),
        ], id="scheduling-gated"),
    pytest.param(
        docs(NODE, pod("a", None, spec="schedulingGates: [{name: wait}]"),
             trace_events("- at: 1m\n  patch: {kind: Pod, namespace: ml, name: a, spec: {schedulingGates: null}}")),
        [], id="gates-removed-later-is-fine"),  # fmt: skip
    pytest.param(docs(NODE, job("j", 1, None).replace("parallelism: 1", "parallelism: 1\n  suspend: true")), [
            ('loader-note', 'Job ml/j', 'spec.suspend: true: gangsim has no Kueue or other admission model: replayed as admitted (unsuspended) at creation'),
        ], id="loader-note"),
    # capacity on the empty cluster (issue 13): one 8-GPU node
    pytest.param(docs(NODE, pg("pg", 2), job("j", 2, gpu=8)), [
            ('gang-never-fits', 'PodGroup ml/pg', 'needs minCount 2 pods of 8 nvidia.com/gpu; even with the cluster empty at most 1 fit (1 node holds up to 1 each, bounded by nvidia.com/gpu); 2 needed: the gang can never start'),
        ], id="gang-never-fits"),
    pytest.param(docs(NODE, pod("a", None, gpu=16)), [
            ('pod-fits-no-node', 'Pod ml/a', 'requests 16 nvidia.com/gpu (the most any node has is 8, n1): no node can ever hold one'),
        ], id="pod-fits-no-node"),
    pytest.param(docs(pod("a", None)), [
            ('no-nodes', 'Pod ml/a', 'the trace creates no Node or NodePool: no pod can ever be scheduled'),
        ], id="no-nodes"),
    pytest.param(docs(NODE.replace("status:", "spec: {taints: [{key: k, value: v, effect: NoSchedule}]}\nstatus:"), pg("pg", 1), job("j", 1)), [
            ('pod-fits-no-node', 'Job ml/j', 'its pods are ruled out of every node (1 node by taints): no node can ever hold one'),
        ], id="pod-fits-no-node-taints"),
]


def _triples(findings):
    return [(f.code, f.obj, f.message) for f in findings]


@pytest.mark.parametrize(("text", "want", "config"), [pytest.param(*p.values, None, id=p.id) if len(p.values) == 2 else p for p in WARNING_CASES])
def test_pitfall(validate, text, want, config):
    findings = validate(text, config=config)
    assert all(f.severity == "warning" for f in findings)
    assert _triples(findings) == want


def test_clean_trace_has_no_findings(validate):
    assert validate(CLEAN) == []


def test_warning_points_at_the_object(validate):
    text = docs(NODE, pg("pg", 1, at="40s"), pod("a"))
    (finding,) = validate(text)
    assert (finding.where, finding.severity) == ("t.yaml:15", "warning")
    assert text.split("\n")[14] == "apiVersion: v1"  # line 15 opens the Pod document


def test_exit_code_and_rendering(validate):
    from gangsim.validate import Finding, exit_code, render_findings

    warning = Finding("warning", "podgroup-unused", "t.yaml:5", "PodGroup ml/pg", "no Pod or Job references this PodGroup")
    error = Finding("error", "required", "t.yaml:9", "Pod ml/a", "spec.containers: Required value")
    assert exit_code([]) == 0
    assert exit_code([warning]) == 0
    assert exit_code([warning, error]) == 1
    assert render_findings([error, warning]) == (
        "t.yaml:9: error: Pod ml/a: spec.containers: Required value [required]\n"
        "t.yaml:5: warning: PodGroup ml/pg: no Pod or Job references this PodGroup [podgroup-unused]\n"
        "1 error, 1 warning\n"
    )
    assert render_findings([Finding("error", "input", "", "", "no trace files given")]) == "error: no trace files given [input]\n1 error, 0 warnings\n"
    assert render_findings([]) == "0 errors, 0 warnings\n"


# --- errors ---------------------------------------------------------------------------------------

BAD_DOCS = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg1, namespace: ml}
spec:
  schedulingPolicy: {}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg2, namespace: ml}
spec:
  schedulingPolicy: {gang: {minCount: 0}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: pg3, namespace: ml}
spec:
  schedulingPolicy: {basic: {}}
  disruptionMode: {all: {}}
---
apiVersion: v1
kind: Pod
metadata: {name: ok, namespace: ml}
spec:
  containers: [{name: c}]
---
apiVersion: gangsim.dev/v1alpha1
kind: Trace
metadata: {name: t}
events:
- at: 10s
  patch: {kind: Pod, namespace: ml, name: ok, spec: {schedulerName: other}}
- at: 20s
  patch: {kind: PodGroup, namespace: ml, name: pg1, spec: {}}
- at: 30s
  bogus: 1
- at: 40s
  delete: {kind: Pod, namespace: ml, name: gone}
"""


def _errors(findings):
    return [(f.where, f.obj, f.message, f.code) for f in findings if f.severity == "error"]


def test_every_bad_document_is_reported(validate):
    assert _errors(validate(BAD_DOCS)) == [
        ("t.yaml:5", "PodGroup ml/pg1", 'spec.schedulingPolicy: Invalid value: "": must specify one of: `basic`, `gang`', "invalid"),
        ("t.yaml:11", "PodGroup ml/pg2", "spec.schedulingPolicy.gang.minCount: Required value", "required"),
        ("t.yaml:18", "PodGroup ml/pg3", "spec.disruptionMode.all: Invalid value: {}: the disruptionMode `all` is not supported with the Basic scheduling policy", "invalid"),
        ("t.yaml:31", "Pod ml/ok", 'spec.schedulerName: Invalid value: "other": field is immutable', "immutable"),
        # the patch of the broken pg1 (line 33) is not reported again
        ("t.yaml:35", "Trace t", 'events[2].bogus: Unsupported field: unknown field "bogus"', "unknown-field"),
        ("t.yaml:37", "Pod ml/gone", "not found: nothing to delete at 40s", "not-found"),
    ]


def test_errors_across_files_in_command_line_order(write):
    from gangsim.validate import validate_paths

    b = write("b.yaml", docs(NODE, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"))
    a = write("a.yaml", docs(NODE, pod("x", None, spec="priorityClassName: nope")))
    found = validate_paths([b, "missing.yaml", a])
    assert [(f.where, f.obj, f.message) for f in found if f.severity == "error"] == [
        ("b.yaml:7", "Deployment d", 'kind: Unsupported value: "Deployment": supported values: "Node", "NodePool", "PriorityClass", '
         '"PodDisruptionBudget", "Workload", "PodGroup", "CompositePodGroup", "Pod", "Job", "KubeSchedulerConfiguration", "Trace"'),
        ("missing.yaml", "", "no such file or directory"),
        ("a.yaml:1", "Node n1", 'metadata.name: Duplicate value: "n1": already exists (created at b.yaml:1)'),
        ("a.yaml:13", "Pod ml/x", 'spec.priorityClassName: Invalid value: "nope": no PriorityClass with name nope was found'),
    ]


def test_yaml_syntax_errors_do_not_hide_other_documents(validate):
    text = docs(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a\nspec: {}\n",
        pod("b", "missing-group"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\nspec:\n  bad: [\n",
    )
    findings = validate(text)
    assert [(f.where, f.code) for f in findings] == [("t.yaml:4", "syntax"), ("t.yaml:6", "podgroup-missing"), ("t.yaml:20", "syntax")]
    assert findings[0].message == "invalid YAML: did not find expected ',' or '}' (while parsing a flow mapping)"


def test_json_lines_are_checked_line_by_line(validate):
    text = (
        '{"at": 0, "create": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}], "schedulingGroup": {"podGroupName": "pg"}}}}\n'
        "{not json\n"
        '{"at": 0, "create": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containerz": []}}}\n'
        '{"at": "5m", "delete": {"kind": "Pod", "name": "b"}}\n'
    )
    findings = validate(text, name="t.jsonl")
    assert [(f.where, f.severity, f.code) for f in findings] == [
        ("t.jsonl:1", "warning", "podgroup-missing"),
        ("t.jsonl:2", "error", "syntax"),
        ("t.jsonl:3", "error", "unknown-field"),  # and its delete on line 4 is not reported again
    ]


def test_broken_priority_class_is_reported_once(validate):
    text = docs(NODE, priority_class("high", 2_000_000_000), pg("pg", 2, spec="priorityClassName: high"), job("j", 2, spec="priorityClassName: high"))
    assert _errors(validate(text)) == [
        ("t.yaml:9", "PriorityClass high", "value: Forbidden: maximum allowed value of a user defined priority is 1000000000", "forbidden"),
    ]


def test_second_scheduler_configuration(validate):
    findings = validate(docs(CONFIG, CONFIG, NODE, pod("a", None, spec="schedulerName: batch")))
    assert _errors(findings) == [
        ("t.yaml:7", "KubeSchedulerConfiguration", "a second KubeSchedulerConfiguration (the first is at t.yaml:1): give only one, in the trace or with --config", "input"),
    ]
    assert [f.code for f in findings if f.severity == "warning"] == []  # the first config's "batch" profile counts


def _loader_cases():
    try:
        from load.test_errors import CASES
    except ImportError:  # pragma: no cover - the loader's tests moved
        return []
    return CASES


@pytest.mark.parametrize(("text", "message"), _loader_cases())
def test_same_message_as_the_loader(validate, text, message):
    errors = [f for f in validate(text) if f.severity == "error"]
    assert errors, "validate missed an error the loader reports"
    first = errors[0]
    assert ": ".join(p for p in (first.where, first.obj, first.message) if p) == message


@pytest.mark.parametrize("path", sorted(__import__("pathlib").Path(__file__).parents[2].joinpath("traces").glob("*.yaml")), ids=lambda p: p.name)
def test_bundled_traces_have_no_errors(path):
    from gangsim.validate import exit_code, validate_paths

    findings = validate_paths([path])
    assert [f for f in findings if f.severity == "error"] == []
    assert exit_code(findings) == 0


def test_messages_match_the_scheduler():
    from gangsim import validate
    from gangsim.scheduler import schedule_podgroup

    assert validate.MSG_PRIORITY == schedule_podgroup.MSG_PRIORITY
    assert validate.MSG_SCHEDULER_NAME == schedule_podgroup.MSG_SCHEDULER_NAME
    assert validate.MSG_PREEMPTION_POLICY == schedule_podgroup.MSG_PREEMPTION_POLICY


def test_codes_are_declared(validate):
    from gangsim.validate import ERROR_CODES, WARNING_CODES

    seen = {code for p in WARNING_CASES for code, _, _ in p.values[1]}
    assert seen <= set(WARNING_CODES)
    assert {f.code for f in validate(BAD_DOCS)} <= set(ERROR_CODES) | set(WARNING_CODES)


def test_node_deletion_and_preemption_give_one_warning(validate):
    node = NODE.replace("{name: n1}", "{name: n1, annotations: {gangsim.dev/remove-at: 2h}}")
    text = docs(node, priority_class("low", 100), priority_class("high", 1000), pg("pg", 2, spec="priorityClassName: low"),
                job("j", 2, spec="priorityClassName: low"), job("urgent", 1, None, spec="priorityClassName: high"))  # fmt: skip
    assert _triples(validate(text)) == [
        (
            "initially-scheduled-monotonic",
            "PodGroup ml/pg",
            "members of scheduled PodGroups can be evicted here (Node n1 is deleted at 2h; PodGroup ml/pg (priority 100) can be "
            "preempted by Job ml/urgent (priority 1000)): PodGroupInitiallyScheduled stays True after evictions, so it is no "
            "health check; watch the member pods instead (gangsim: the gangs and victims tables)",
        )
    ]


def test_no_paths(write):
    from gangsim.validate import validate_paths

    assert [(f.severity, f.where, f.message) for f in validate_paths([])] == [("error", "", "no trace files given")]
