"""The simulated API server's handling of trace events: each create, patch or delete of a Node,
Pod, Job, PodGroup, CompositePodGroup or PodDisruptionBudget updates the object store, and the
watchers of that kind learn of it — the scheduler's informer, the Job controller, the kubelets.

The cluster (``sim.cluster.Cluster``) keeps the state they act on (nodes, pods, gangs, the GPU
accounting) and the pod lifecycle; this module only routes each event to what it changes. Kinds
with no runtime effect (PriorityClass, Workload) are not handled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gangsim.api.devices import GPU, share_per_device
from gangsim.api.objects import Node, Pod, PodGroup
from gangsim.api.trace import Op, TraceEvent
from gangsim.eventlog import EndReason, EventReason
from gangsim.sim.pods import WAITING, SimPod

if TYPE_CHECKING:
    from gangsim.sim.cluster import Cluster


class APIServer:
    """Applies trace events to ``cluster``'s object store (see the module)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._handlers: dict[tuple[Op, str], Callable[[TraceEvent], None]] = {
            (Op.CREATE, "Node"): self._create_node,
            (Op.PATCH, "Node"): self._patch_node,
            (Op.DELETE, "Node"): self._delete_node,
            (Op.CREATE, "Pod"): self._create_pod,
            (Op.PATCH, "Pod"): self._patch_pod,
            (Op.DELETE, "Pod"): self._delete_pod,
            (Op.CREATE, "Job"): self._create_job,
            (Op.PATCH, "Job"): self._patch_job,
            (Op.DELETE, "Job"): self._delete_job,
            (Op.CREATE, "PodGroup"): self._create_podgroup,
            (Op.PATCH, "PodGroup"): self._patch_podgroup,
            (Op.DELETE, "PodGroup"): self._delete_podgroup,
            (Op.CREATE, "CompositePodGroup"): self._create_composite,
            (Op.PATCH, "CompositePodGroup"): self._create_composite,
            (Op.DELETE, "CompositePodGroup"): self._delete_composite,
            (Op.CREATE, "PodDisruptionBudget"): self._create_pdb,
            (Op.PATCH, "PodDisruptionBudget"): self._create_pdb,
            (Op.DELETE, "PodDisruptionBudget"): self._delete_pdb,
        }

    def apply(self, ev: TraceEvent) -> bool:
        """Apply ``ev``; False: its kind has no runtime effect."""
        handler = self._handlers.get((ev.op, ev.kind))
        if handler is None:
            return False
        handler(ev)
        return True

    # nodes
    def _create_node(self, ev: TraceEvent) -> None:
        c = self.cluster
        node: Node = ev.obj  # type: ignore[assignment]
        c.next_uid()
        c.nodes[node.name] = node
        if node.gpu_share and node.allocatable.get(GPU, 0):
            c.shares.setdefault(node.gpu_share, share_per_device(node.allocatable, node.gpu_share))
        c.kubelets.add_node(node)
        c.scheduler.on_node_add(node)

    def _patch_node(self, ev: TraceEvent) -> None:
        c = self.cluster
        new: Node = ev.obj  # type: ignore[assignment]
        old = c.nodes[new.name]
        c.nodes[new.name] = new
        c.kubelets.update_node(new)
        c.scheduler.on_node_update(old, new)
        c.log.event(c.now, "Node", new.name, new.name, EventReason.NODE_UPDATED, "")

    def _delete_node(self, ev: TraceEvent) -> None:
        c = self.cluster
        name = ev.name
        if name not in c.nodes:
            return
        c.log.event(c.now, "Node", name, name, EventReason.NODE_FAILED, "node failed and was deleted")
        for sp in c.kubelets.pods_on(name):
            assert isinstance(sp, SimPod)
            if sp.state == WAITING:
                c.scheduler.reject_waiting_pod(sp.info, "node deleted")  # type: ignore[arg-type]
            else:
                c.end_pod(sp, EndReason.NODE_FAILED)
        del c.nodes[name]
        c.kubelets.remove_node(name)
        c.scheduler.on_node_delete(name)

    # pods
    def _create_pod(self, ev: TraceEvent) -> None:
        self.cluster.create_pod(ev.obj)  # type: ignore[arg-type]

    def _patch_pod(self, ev: TraceEvent) -> None:
        c = self.cluster
        pod: Pod = ev.obj  # type: ignore[assignment]
        sp = c.pods.get(pod.key)
        if sp is None:
            return
        sp.pod = pod
        if sp.info is not None:
            c.scheduler.on_pod_update(sp.info, pod)

    def _delete_pod(self, ev: TraceEvent) -> None:
        c = self.cluster
        sp = c.pods.get(f"{ev.namespace}/{ev.name}")
        if sp is not None:
            c.end_pod(sp, EndReason.DELETED, recreate=False)

    # jobs
    def _create_job(self, ev: TraceEvent) -> None:
        self.cluster.next_uid()
        self.cluster.job_controller.create(ev.obj)  # type: ignore[arg-type]

    def _patch_job(self, ev: TraceEvent) -> None:
        self.cluster.job_controller.patch(ev.obj)  # type: ignore[arg-type]

    def _delete_job(self, ev: TraceEvent) -> None:
        self.cluster.job_controller.delete(f"{ev.namespace}/{ev.name}")

    # pod groups
    def _create_podgroup(self, ev: TraceEvent) -> None:
        c = self.cluster
        pg: PodGroup = ev.obj  # type: ignore[assignment]
        c.next_uid()
        c.pod_groups[pg.key] = pg
        g = c.gang_for_group(pg.key, submitted_ms=c.now)
        c.configure_group_gang(g, pg)
        if g.record is not None:
            g.record.submitted_ms = max(g.record.submitted_ms, c.now)
        c.scheduler.on_podgroup_add(pg)

    def _patch_podgroup(self, ev: TraceEvent) -> None:
        c = self.cluster
        pg: PodGroup = ev.obj  # type: ignore[assignment]
        old = c.pod_groups.get(pg.key)
        c.pod_groups[pg.key] = pg
        g = c.gang_for_group(pg.key, submitted_ms=c.now)
        c.configure_group_gang(g, pg)
        if old is not None and old.policy.min_count != pg.policy.min_count:
            c.log.event(c.now, "PodGroup", pg.key, "", EventReason.MIN_COUNT_CHANGED, f"minCount {old.policy.min_count} -> {pg.policy.min_count}")
        c.scheduler.on_podgroup_update(old, pg)

    def _delete_podgroup(self, ev: TraceEvent) -> None:
        key = f"{ev.namespace}/{ev.name}"
        self.cluster.pod_groups.pop(key, None)
        self.cluster.scheduler.on_podgroup_delete(key)

    def _create_composite(self, ev: TraceEvent) -> None:
        """Create or patch (its spec is immutable but for nothing the scheduler reads)."""
        self.cluster.scheduler.on_composite_pod_group_add(ev.obj)  # type: ignore[arg-type]

    def _delete_composite(self, ev: TraceEvent) -> None:
        self.cluster.scheduler.on_composite_pod_group_delete(f"{ev.namespace}/{ev.name}")

    # PDBs
    def _create_pdb(self, ev: TraceEvent) -> None:
        """Create or patch: the PDB as it is now."""
        self.cluster.scheduler.on_pdb_add(ev.obj)  # type: ignore[arg-type]

    def _delete_pdb(self, ev: TraceEvent) -> None:
        self.cluster.scheduler.on_pdb_delete(f"{ev.namespace}/{ev.name}")
