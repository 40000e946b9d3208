"""``ray.io/v1`` RayCluster and RayJob → a head pod and the worker groups' pods, one PodGroup.

Upstream (ray-project/kuberay ``ray-operator/controllers/ray``): the head pod and, per
``workerGroupSpecs[]``, ``replicas × numOfHosts`` worker pods; names ``<cluster>-head-<random>`` and
``<cluster>-<group>-worker-<random>`` (gangsim: ``-<index>`` instead of the random suffix), labels
``ray.io/cluster``, ``ray.io/node-type`` (head / worker), ``ray.io/group``, ``ray.io/is-ray-node``.
Gang scheduling through a batch scheduler (``batchscheduler/volcano/volcano_scheduler.go``,
DoBatchSchedulingOnSubmission) makes ONE PodGroup per cluster with minMember = 1 (head) + the
desired worker replicas, or + the ``minReplicas`` when ``enableInTreeAutoscaling`` is on.

Grouping: the same PodGroup (``raycluster-<name>-0`` / ``rayjob-<name>-0``) in a Workload. A RayJob
expands its ``rayClusterSpec`` into a cluster named after the RayJob; its submitter pod (a small
Job started once the cluster is ready) is not modelled (warned once); ``clusterSelector`` (a
RayJob on an existing cluster) is an error.
"""

from __future__ import annotations

from gangsim.api.objects import Source
from gangsim.errors import invalid
from gangsim.load.controllers.common import (
    Context, Expansion, check_total, count, gang, in_group, owned_pods, pod_group_name, pod_template, spec_keys,
)  # fmt: skip
from gangsim.load.fields import Obj, duplicate
from gangsim.load.meta import Meta

GROUP = "ray.io"
_CLUSTER_UNMODELLED = {"suspend": "gangsim does not model suspended RayClusters"}
_GROUP_UNMODELLED = {"suspend": "gangsim does not model suspended worker groups"}
_JOB_UNMODELLED = {
    "suspend": "gangsim does not model suspended RayJobs",
    "clusterSelector": "gangsim does not model RayJobs that run on an existing RayCluster: give rayClusterSpec",
}


def decode_cluster(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    return expand(ctx, Expansion("RayCluster", meta.namespace, meta.name), doc.obj("spec", req=True), meta, source)


def decode_job(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec_keys(ctx, "RayJob", spec, {"rayClusterSpec", "submissionMode"}, _JOB_UNMODELLED)
    if spec.enum("submissionMode", ("K8sJobMode", "HTTPMode", "InteractiveMode", "SidecarMode"), "K8sJobMode") == "K8sJobMode":
        ctx.warn("RayJob: the submitter pod (K8sJobMode) is not modelled: only the cluster's pods are replayed")
    return expand(ctx, Expansion("RayJob", meta.namespace, meta.name), spec.obj("rayClusterSpec", req=True), meta, source)


def expand(ctx: Context, owner: Expansion, spec: Obj, meta: Meta, source: Source) -> Expansion:
    kind, cluster = owner.kind, meta.name
    spec_keys(ctx, kind, spec, {"headGroupSpec", "workerGroupSpecs", "enableInTreeAutoscaling"}, _CLUSTER_UNMODELLED)
    autoscaling = spec.bool("enableInTreeAutoscaling")
    head = spec.obj("headGroupSpec", req=True)
    spec_keys(ctx, kind, head, {"template"}, {})
    labels = {"ray.io/cluster": cluster, "ray.io/is-ray-node": "yes"}
    members = [(f"{cluster}-head-0", pod_template(ctx, head.obj("template", req=True), {**labels, "ray.io/node-type": "head", "ray.io/group": "headgroup"}, meta.times))]
    minimum = 1
    names: set[str] = set()
    for wg in spec.objs("workerGroupSpecs"):
        spec_keys(ctx, kind, wg, {"groupName", "replicas", "minReplicas", "maxReplicas", "numOfHosts", "template"}, _GROUP_UNMODELLED)
        name = wg.str("groupName", req=True)
        if name in names:
            raise wg.error("groupName", duplicate(wg.fp("groupName"), name))
        names.add(name)
        lo = count(wg, "minReplicas", 0)
        hi = count(wg, "maxReplicas", 2**31 - 1, maximum=2**31 - 1)
        if lo > hi:
            raise wg.error("minReplicas", invalid(wg.fp("minReplicas"), lo, f"must be less than or equal to maxReplicas ({hi})"))
        replicas = min(max(count(wg, "replicas", lo), lo), hi)  # kuberay clamps replicas into [min, max]
        hosts = count(wg, "numOfHosts", 1)
        check_total(wg, "replicas", len(members) + replicas * hosts)
        minimum += (lo if autoscaling else replicas) * hosts
        template = wg.obj("template", req=True)
        for i in range(replicas * hosts):
            wl = {**labels, "ray.io/node-type": "worker", "ray.io/group": name}
            members.append((f"{cluster}-{name}-worker-{i}", pod_template(ctx, template, wl, meta.times)))
    if not any(s.scheduling_group for _, s in members):
        group = pod_group_name(kind, cluster, 0)
        owner.children.extend(gang(ctx, owner, GROUP, "cluster", [(group, minimum)], members[0][1], meta, source))
        members = [(p, in_group(s, group)) for p, s in members]
    owner.children.append(owned_pods(owner, cluster, members, source))
    return owner
