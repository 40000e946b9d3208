"""``batch.volcano.sh/v1alpha1`` Job (gangsim calls it VolcanoJob) → its tasks' pods, one PodGroup.

Upstream (volcano-sh/volcano ``pkg/controllers/job``: ``job_controller_actions.go`` createJobPod /
createOrUpdatePodGroup, ``jobhelpers.MakePodName``): pods ``<job>-<task>-<index>``, annotated
and labelled ``volcano.sh/job-name``, ``volcano.sh/task-spec``, ``volcano.sh/task-index``; one
PodGroup per Job whose minMember is ``spec.minAvailable`` (default: the sum of the tasks'
replicas). The pods are scheduled by ``spec.schedulerName`` (default ``volcano``).

gangsim replays them under kube-scheduler's gang scheduling instead, to compare: the PodGroup
becomes a Workload (``volcanojob-<job>``) + gang PodGroup (``volcanojob-<job>-0``, minCount =
minAvailable), and ``schedulerName`` is ignored (warned once). Task-level ``minAvailable``
(sub-gangs) is not modelled (an error), nor are ``policies`` or ``plugins`` that would change
scheduling (``svc``/``ssh``/``env`` plugins only add networking, so they are ignored).
"""

from __future__ import annotations

from dataclasses import replace

from gangsim.api.objects import DEFAULT_SCHEDULER, Source
from gangsim.load.controllers.common import (
    Context, Expansion, check_total, count, gang, group_priority, in_group, min_available, owned_pods, pod_group_name, pod_template, spec_keys,
)  # fmt: skip
from gangsim.load.fields import Obj, duplicate
from gangsim.load.meta import Meta

KIND = "VolcanoJob"
GROUP = "batch.volcano.sh"
_TASK_UNMODELLED = {
    "minAvailable": "gangsim does not model a task's own minAvailable (a gang inside the gang)",
    "dependsOn": "gangsim does not model task dependencies (tasks started after others)",
    "topologyPolicy": "gangsim does not model Volcano's NUMA topology policy",
}
_UNMODELLED = {
    "networkTopology": "gangsim does not model Volcano's network-topology-aware scheduling",
    "minSuccess": "gangsim does not model minSuccess (a job that completes with part of its pods)",
}


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec_keys(ctx, KIND, spec, {"tasks", "minAvailable", "schedulerName", "priorityClassName"}, _UNMODELLED)
    if spec.str("schedulerName", "volcano") != DEFAULT_SCHEDULER:
        ctx.warn(f"{KIND}: replayed under kube-scheduler (the --policy) to compare with Volcano's gang scheduling: spec.schedulerName (default volcano) is ignored")
    owner = Expansion(KIND, meta.namespace, meta.name)
    members = []
    names: set[str] = set()
    total = 0
    for task in spec.objs("tasks"):
        spec_keys(ctx, KIND, task, {"name", "replicas", "template"}, _TASK_UNMODELLED)
        name = task.str("name", req=True)
        if name in names:
            raise task.error("name", duplicate(task.fp("name"), name))
        names.add(name)
        replicas = count(task, "replicas", 1)
        total += replicas
        check_total(task, "replicas", total)
        for i in range(replicas):
            labels = {"volcano.sh/job-name": meta.name, "volcano.sh/task-spec": name, "volcano.sh/task-index": str(i)}
            pod = pod_template(ctx, task.obj("template", req=True), labels, meta.times)
            members.append((f"{meta.name}-{name}-{i}", replace(pod, scheduler_name=DEFAULT_SCHEDULER)))
    if not members:
        return owner
    minimum = min_available(spec, "minAvailable", total)
    if not any(s.scheduling_group for _, s in members):
        group = pod_group_name(KIND, meta.name, 0)
        group_spec = group_priority(ctx, spec, "priorityClassName", members[0][1])
        owner.children.extend(gang(ctx, owner, GROUP, "job", [(group, minimum)], group_spec, meta, source))
        members = [(p, in_group(s, group)) for p, s in members]
    owner.children.append(owned_pods(owner, meta.name, members, source))
    return owner
