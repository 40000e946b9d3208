"""``kubeflow.org/v1`` PyTorchJob → its Master and Worker pods, one PodGroup.

Upstream (kubeflow/training-operator ``pkg/controller.v1/pytorch``, ``pkg/controller.v1/common``):
pods ``<job>-<replica type, lower case>-<index>`` (``train-master-0``, ``train-worker-3``), labelled
``training.kubeflow.org/job-name``, ``replica-type``, ``replica-index``, ``operator-name``
(``pytorchjob-controller``) and ``job-role: master`` on the Master. With gang scheduling
(``--gang-scheduler-name``: volcano or scheduler-plugins) the operator creates one PodGroup per
job whose minMember is ``runPolicy.schedulingPolicy.minAvailable``, else every replica
(``common/job.go`` ReconcileJobs); ``schedulingPolicy.priorityClass`` is the PodGroup's class.

Grouping: the same, as a Workload (``pytorchjob-<job>``) + PodGroup (``pytorchjob-<job>-0``).
The pods run under kube-scheduler (gangsim's policies) whatever ``schedulerName`` the operator
would set.
"""

from __future__ import annotations

from gangsim.api.objects import Source
from gangsim.load.controllers.common import (
    Context, Expansion, check_total, count, gang, group_priority, in_group, min_available, owned_pods, pod_group_name, pod_template, spec_keys,
)  # fmt: skip
from gangsim.load.fields import Obj, not_supported
from gangsim.load.meta import Meta

KIND = "PyTorchJob"
GROUP = "kubeflow.org"
PREFIX = "training.kubeflow.org/"
REPLICA_TYPES = ("Master", "Worker")  # creation order
_UNMODELLED = {
    "elasticPolicy": "gangsim does not model elastic PyTorchJobs (a replica count between minReplicas and maxReplicas)",
}
_RUN_UNMODELLED = {"suspend": "gangsim does not model suspended PyTorchJobs"}


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec_keys(ctx, KIND, spec, {"pytorchReplicaSpecs", "runPolicy"}, _UNMODELLED)
    specs = spec.obj("pytorchReplicaSpecs", req=True)
    for key in specs.d:
        if key not in REPLICA_TYPES:
            raise specs.error(key, not_supported(specs.fp(key), key, REPLICA_TYPES))
    owner = Expansion(KIND, meta.namespace, meta.name)
    members = []
    total = 0
    for rtype in REPLICA_TYPES:
        rs = specs.obj(rtype)
        if rs is None:
            continue
        spec_keys(ctx, KIND, rs, {"replicas", "template"}, {})
        replicas = count(rs, "replicas", 1)
        total += replicas
        check_total(rs, "replicas", total)
        low = rtype.lower()
        for i in range(replicas):
            labels = {
                PREFIX + "job-name": meta.name,
                PREFIX + "operator-name": "pytorchjob-controller",
                PREFIX + "replica-type": low,
                PREFIX + "replica-index": str(i),
            }
            if rtype == "Master":
                labels[PREFIX + "job-role"] = "master"
            members.append((f"{meta.name}-{low}-{i}", pod_template(ctx, rs.obj("template", req=True), labels, meta.times)))
    minimum = total
    group_spec = members[0][1] if members else None
    run = spec.obj("runPolicy")
    if run is not None:
        spec_keys(ctx, KIND, run, {"schedulingPolicy"}, _RUN_UNMODELLED)
        sp = run.obj("schedulingPolicy")
        if sp is not None:
            spec_keys(ctx, KIND, sp, {"minAvailable", "priorityClass"}, {})
            minimum = min_available(sp, "minAvailable", total)
            if group_spec is not None:
                group_spec = group_priority(ctx, sp, "priorityClass", group_spec)
    if not members:
        return owner
    if not any(s.scheduling_group for _, s in members):
        name = pod_group_name(KIND, meta.name, 0)
        owner.children.extend(gang(ctx, owner, GROUP, "job", [(name, minimum)], group_spec, meta, source))
        members = [(p, in_group(s, name)) for p, s in members]
    owner.children.append(owned_pods(owner, meta.name, members, source))
    return owner
