"""``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet → ``replicas`` groups of ``size`` pods, one
PodGroup per group.

Upstream (kubernetes-sigs/lws ``pkg/controllers/leaderworkerset_controller.go`` and
``pod_controller.go``): a leader StatefulSet ``<lws>`` makes the leaders ``<lws>-<group>``; each
leader's worker StatefulSet ``<lws>-<group>`` makes the workers ``<lws>-<group>-<1..size-1>``.
Pods carry ``leaderworkerset.sigs.k8s.io/name``, ``group-index`` and ``worker-index`` (0 for the
leader). The leader uses ``leaderTemplate`` (``workerTemplate`` when absent).

Grouping: one PodGroup per group (leader + workers, minCount ``size``): all-or-nothing per group,
as LWS's own gang scheduling does with a scheduler provider (kubernetes-sigs/lws
``keps/407-gang-scheduling``: one PodGroup per group, minMember = size). The Workload API
integration is not released upstream. Names: Workload ``leaderworkerset-<lws>``, PodGroup
``leaderworkerset-<lws>-<group>``. ``restartPolicy: RecreateGroupOnPodRestart`` (the default): a
failed pod (preempted, node lost, rendezvous timeout) makes the controller delete the group's
other pods and recreate all of them (``ControlledJob.recreate_together``, run by
``sim.workloads``); ``None``/``Default``: the failed pod alone is recreated.
"""

from __future__ import annotations

from gangsim.api.objects import Source
from gangsim.errors import unsupported
from gangsim.load.controllers.common import (
    Context, Expansion, check_total, count, forbid_annotations, gang, in_group, owned_pods, pod_group_name, pod_template, spec_keys,
)  # fmt: skip
from gangsim.load.fields import Obj
from gangsim.load.meta import Meta

KIND = "LeaderWorkerSet"
GROUP = "leaderworkerset.x-k8s.io"
PREFIX = "leaderworkerset.sigs.k8s.io/"
_EXCLUSIVE = {
    PREFIX + "exclusive-topology": "gangsim does not model LeaderWorkerSet exclusive placement (the pod affinities it injects)",
    PREFIX + "subgroup-exclusive-topology": "gangsim does not model LeaderWorkerSet subgroup exclusive placement",
}


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    forbid_annotations(doc.obj("metadata"), _EXCLUSIVE)
    spec = doc.obj("spec", req=True)
    spec_keys(ctx, KIND, spec, {"replicas", "leaderWorkerTemplate", "startupPolicy"}, {})
    if spec.enum("startupPolicy", ("LeaderCreated", "LeaderReady"), "LeaderCreated") == "LeaderReady":
        raise spec.error("startupPolicy", unsupported(spec.fp("startupPolicy"), "gangsim does not model LeaderReady (workers created once the leader is ready): use LeaderCreated"))
    replicas = count(spec, "replicas", 1)
    lwt = spec.obj("leaderWorkerTemplate", req=True)
    spec_keys(ctx, KIND, lwt, {"leaderTemplate", "workerTemplate", "size", "restartPolicy"}, {})
    size = count(lwt, "size", 1)
    check_total(spec, "replicas", replicas * size)
    together = lwt.enum("restartPolicy", ("RecreateGroupOnPodRestart", "Default", "None"), "RecreateGroupOnPodRestart") == "RecreateGroupOnPodRestart"
    worker_t = lwt.obj("workerTemplate", req=True)
    leader_t = lwt.obj("leaderTemplate") or worker_t
    owner = Expansion(KIND, meta.namespace, meta.name)
    groups: list[tuple[str, list]] = []
    for g in range(replicas):
        leader_name = f"{meta.name}-{g}"
        labels = {PREFIX + "name": meta.name, PREFIX + "group-index": str(g)}
        members = [(leader_name, pod_template(ctx, leader_t, {**labels, PREFIX + "worker-index": "0"}, meta.times))]
        for w in range(1, size):
            members.append((f"{leader_name}-{w}", pod_template(ctx, worker_t, {**labels, PREFIX + "worker-index": str(w)}, meta.times)))
        groups.append((leader_name, members))
    if not groups:
        return owner
    if not any(spec.scheduling_group for _, members in groups for _, spec in members):
        names = [pod_group_name(KIND, meta.name, g) for g in range(replicas)]
        owner.children.extend(gang(ctx, owner, GROUP, "group", [(n, size) for n in names], groups[0][1][0][1], meta, source))
        groups = [(leader, [(p, in_group(s, pg)) for p, s in members]) for (leader, members), pg in zip(groups, names)]
    owner.children.extend(owned_pods(owner, leader, members, source, recreate_together=together) for leader, members in groups)
    return owner
