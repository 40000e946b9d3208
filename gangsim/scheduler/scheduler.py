"""The scheduler: informer-side handlers (``on_<object>_<event>``) and the cycle loop.

The simulator calls the handlers as objects change and ``run_cycles`` in the SCHEDULE phase of
every instant at which there may be work. Cluster events move unschedulable entities through
queueing hints (SEMANTICS §4.5): each event names the plugins whose hints say Queue for it.
"""

from __future__ import annotations

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Node, Pod, PodDisruptionBudget, PodGroup
from gangsim.eventlog import EventLog
from gangsim.scheduler.cache.node_table import NodeTable, ResourceIndex
from gangsim.scheduler.cache.snapshot import Snapshot
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, PodPhase, QueuedEntity
from gangsim.scheduler.interface import ClusterAPI
from gangsim.scheduler.plugins import names
from gangsim.scheduler.preemption.classic import Evaluator
from gangsim.scheduler.preemption.units import VictimUnit
from gangsim.scheduler.profiles import Policy
from gangsim.scheduler.queue.nominator import Nominator
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.scheduler.schedule_one import schedule_one

# Plugins whose queueing hints return Queue for each cluster event (coarse EventsToRegister).
ALL_FILTERS = (
    names.NODE_RESOURCES_FIT,
    names.NODE_UNSCHEDULABLE,
    names.NODE_NAME,
    names.TAINT_TOLERATION,
    names.NODE_AFFINITY,
    names.INTER_POD_AFFINITY,
)
EVENT_NODE_ADD = ALL_FILTERS
EVENT_ASSIGNED_POD_DELETE = (names.NODE_RESOURCES_FIT, names.INTER_POD_AFFINITY)
EVENT_ASSIGNED_POD_ADD = (names.INTER_POD_AFFINITY,)
EVENT_NOMINATED_POD_DELETE = (names.NODE_RESOURCES_FIT,)
MAX_CYCLES_PER_INSTANT = 2_000_000

SCHEDULING_GATES_MSG = "waiting for scheduling gates: [{}]"


def pod_static_key(pod: Pod) -> tuple:
    s = pod.spec
    aff = s.affinity
    return (
        s.tolerations,
        tuple(sorted(s.node_selector.items())),
        aff.node_required if aff else None,
        aff.node_preferred if aff else (),
        s.node_name,
    )


def pod_signature(pod: Pod, demand: np.ndarray) -> tuple:
    """KEP-5598 signature: pods with equal signatures get equal Filter/Score results.
    Pods with pod (anti-)affinity are unsignable (empty tuple)."""
    s = pod.spec
    if s.affinity is not None and s.affinity.has_pod_affinity:
        return ()
    return (pod_static_key(pod), demand.tobytes(), s.nonzero_milli_cpu, s.nonzero_memory, s.scheduler_name)


class Scheduler:
    def __init__(
        self,
        config: SchedulerConfig,
        policy: Policy,
        resources: ResourceIndex,
        cluster: ClusterAPI,
        log: EventLog,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.config = config
        self.policy = policy
        self.cluster = cluster
        self.log = log
        self.rng = rng
        self.resources = resources
        self.nodes = NodeTable(resources)
        self.snapshot = Snapshot(self.nodes)
        self.nominator = Nominator()
        self.generation = 0
        self.frameworks: dict[str, Framework] = {}
        self.evaluators: dict[str, Evaluator] = {}
        for profile in config.profiles:
            fw = Framework(profile, config, self.snapshot, rng)
            fw.nominator = self.nominator
            self.frameworks[profile.scheduler_name] = fw
            if profile.preemption_enabled:
                ev = Evaluator(
                    fw,
                    self.snapshot,
                    units_on_row=self.victim_units_on_row,
                    pdbs=self.pdb_budgets,
                    rng=rng,
                    min_candidate_nodes_percentage=profile.min_candidate_nodes_percentage,
                    min_candidate_nodes_absolute=profile.min_candidate_nodes_absolute,
                )
                ev.victim_priority = self.victim_priority  # type: ignore[method-assign]
                self.evaluators[profile.scheduler_name] = ev
        self.queue = SchedulingQueue(
            config,
            now=lambda: self.cluster.now,
            generation=lambda: self.generation,
            wake_at=self._wake_at,
            pre_enqueue=self.pre_enqueue,
        )
        self.pods: dict[int, PodInfo] = {}  # every live pod incarnation by uid
        self.entity_of: dict[int, QueuedEntity] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.pod_groups: dict[str, PodGroup] = {}
        self.cycles = 0
        self._cycles_now = 0
        self._cycles_at = -1
        self._wakes: set[int] = set()

    # ---- plumbing ----------------------------------------------------------------------------
    def bump(self) -> None:
        """The cluster changed in a way that can change a scheduling outcome."""
        self.generation += 1

    def _wake_at(self, t_ms: int) -> None:
        if t_ms in self._wakes:
            return
        self._wakes.add(t_ms)
        self.cluster.call_at(max(t_ms, self.cluster.now), lambda t=t_ms: self._on_wake(t))

    def _on_wake(self, t_ms: int) -> None:
        self._wakes.discard(t_ms)
        self.queue.flush_backoff()
        self.queue.flush_unschedulable()
        self.cluster.request_cycle()

    def framework_for(self, pod: PodInfo) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name)

    # ---- PreEnqueue ---------------------------------------------------------------------------
    def pre_enqueue(self, e: QueuedEntity) -> Status | None:
        for pod in e.pods:
            if pod.spec.scheduling_gates:
                return Status.unresolvable(SCHEDULING_GATES_MSG.format(" ".join(pod.spec.scheduling_gates)), plugin=names.SCHEDULING_GATES)
        return None

    # ---- nodes -------------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        self.nodes.add_node(node)
        self.bump()
        self.queue.move_for_plugins(EVENT_NODE_ADD)
        self.cluster.request_cycle()

    def on_node_update(self, old: Node, new: Node) -> None:
        self.nodes.update_node(new)
        self.bump()
        plugins: list[str] = []
        if any(new.allocatable.get(k, 0) > old.allocatable.get(k, 0) for k in new.allocatable):
            plugins.append(names.NODE_RESOURCES_FIT)
        if old.unschedulable and not new.unschedulable:
            plugins.append(names.NODE_UNSCHEDULABLE)
        if old.taints != new.taints:
            plugins.append(names.TAINT_TOLERATION)
        if old.labels != new.labels:
            plugins += [names.NODE_AFFINITY, names.INTER_POD_AFFINITY]
        if plugins:
            self.queue.move_for_plugins(plugins)
            self.cluster.request_cycle()

    def on_node_delete(self, name: str) -> None:
        """Call after the node's pods were deleted (``on_pod_delete``)."""
        row = self.nodes.row_of[name]
        for pod in self.nominator.forget_row(row):
            self.bump()
        self.nodes.remove_node(name)
        self.bump()

    # ---- pods --------------------------------------------------------------------------------
    def make_pod_info(self, pod: Pod, uid: int, now: int) -> PodInfo:
        demand = self.resources.vector(pod.spec.requests, pod=True)
        cols = np.flatnonzero(demand).astype(np.int64)
        info = PodInfo(
            uid=uid,
            namespace=pod.namespace,
            name=pod.name,
            spec=pod.spec,
            demand=demand,
            fit_cols=cols,
            fit_amounts=demand[cols],
            created_ms=now,
            group_key=f"{pod.namespace}/{pod.spec.scheduling_group}" if pod.spec.scheduling_group else "",
            static_key=pod_static_key(pod),
        )
        info.signature = pod_signature(pod, demand)
        return info

    def on_pod_add(self, pod: Pod, uid: int) -> PodInfo:
        """An unscheduled pod appeared. Pods with no matching profile are never queued."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        self.bump()
        if pod.spec.scheduler_name not in self.frameworks:
            return info
        e = QueuedEntity(key=str(uid), pods=[info], timestamp_ms=self.cluster.now)
        self.entity_of[uid] = e
        self.queue.add(e)
        self.cluster.request_cycle()
        return info

    def on_pod_assigned(self, pod: Pod, uid: int, row: int) -> PodInfo:
        """A pod that arrives already bound (``spec.nodeName`` or a cluster dump)."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        self.snapshot.assign(info, row)
        info.phase = PodPhase.BOUND
        info.start_ms = self.cluster.now
        self.bump()
        self.queue.move_for_plugins(EVENT_ASSIGNED_POD_ADD)
        return info

    def on_pod_update(self, info: PodInfo, pod: Pod) -> None:
        """A pod's labels or scheduling gates changed (the rest of the spec is immutable)."""
        info.spec = pod.spec
        self.bump()
        e = self.entity_of.get(info.uid)
        if e is not None:
            self.queue.move_entity(e)
            self.cluster.request_cycle()

    def on_pod_delete(self, info: PodInfo) -> None:
        """The pod is gone (finished, deleted, victim terminated, node failed)."""
        self.pods.pop(info.uid, None)
        e = self.entity_of.pop(info.uid, None)
        if e is not None:
            self.queue.remove(e)
        had_nomination = self.nominator.clear(info)
        if info.node_row != NO_NODE:
            self.snapshot.unassign(info)
            self.queue.move_for_plugins(EVENT_ASSIGNED_POD_DELETE)
        elif had_nomination:
            self.queue.move_for_plugins(EVENT_NOMINATED_POD_DELETE)
        info.phase = PodPhase.ENDED
        self.bump()
        self.cluster.request_cycle()

    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None:
        self.pdbs[pdb.key] = pdb
        self.bump()

    def on_pdb_delete(self, key: str) -> None:
        self.pdbs.pop(key, None)
        self.bump()

    # ---- pod groups (scheduling them: gangsim.scheduler.schedule_podgroup) --------------------
    def group_exists(self, key: str) -> bool:
        return key in self.pod_groups

    def on_podgroup_add(self, pg: PodGroup) -> None:
        self.pod_groups[pg.key] = pg
        self.bump()

    def on_podgroup_update(self, old: PodGroup | None, new: PodGroup) -> None:
        self.pod_groups[new.key] = new
        self.bump()

    def on_podgroup_delete(self, key: str) -> None:
        self.pod_groups.pop(key, None)
        self.bump()

    # ---- Permit (the v1.35 barrier lives in gangsim.scheduler.plugins.gangscheduling) ----------
    def run_permit(self, pod: PodInfo, row: int) -> Status | None:
        """None: allowed, bind now. A WAIT status: the pod keeps its reservation and waits."""
        return None

    def reject_waiting(self, pod: PodInfo, reason: str) -> None:
        """A pod waiting at Permit is rejected: unreserve and requeue."""

    def forget_waiting(self, pod: PodInfo) -> None:
        """A pod waiting at Permit was deleted."""

    def on_assigned(self, pod: PodInfo) -> None:
        self.queue.move_for_plugins(EVENT_ASSIGNED_POD_ADD)

    # ---- preemption helpers -------------------------------------------------------------------
    def preempt_victims(self, victims: list[PodInfo], preemptor: str, priority: int, message: str) -> None:
        """Actuate one decision: waiting pods are rejected at Permit, others are deleted."""
        deletions = []
        for v in victims:
            if v.phase is PodPhase.WAITING:
                self.reject_waiting(v, "preempted")
            else:
                v.terminating = True
                deletions.append((v, v.node_row))
        if deletions:
            self.cluster.preempt(deletions, preemptor, priority, message)

    def victim_priority(self, pod: PodInfo) -> int:
        return pod.priority

    def victim_units_on_row(self, preemptor: PodInfo, row: int) -> list[VictimUnit]:
        """§5 step 3a: pods on the node with priority lower than the preemptor's."""
        units = []
        for q in self.snapshot.pods_on(row):
            p = self.victim_priority(q)
            if p < preemptor.priority:
                units.append(VictimUnit([q], p).finish(self.policy.generic_workload))
        return units

    def pdb_budgets(self) -> list[tuple[PodDisruptionBudget, int]]:
        """Allowed disruptions per PDB from the matching running pods (INTERFACE rule 8)."""
        out = []
        for key in sorted(self.pdbs):
            pdb = self.pdbs[key]
            healthy = 0
            if pdb.selector is not None and not pdb.selector.empty:
                for q in self.snapshot.assigned.values():
                    if q.phase is PodPhase.BOUND and not q.terminating and q.namespace == pdb.namespace and pdb.selector.matches(q.labels):
                        healthy += 1
            out.append((pdb, allowed_disruptions(pdb, healthy)))
        return out

    # ---- the loop ----------------------------------------------------------------------------
    def run_cycles(self) -> None:
        now = self.cluster.now
        if self._cycles_at != now:
            self._cycles_at = now
            self._cycles_now = 0
        while True:
            e = self.queue.pop()
            if e is None:
                return
            self._cycles_now += 1
            if self._cycles_now > MAX_CYCLES_PER_INSTANT:
                raise RuntimeError(f"scheduler did not settle at t={now} ms (livelock)")
            self.cycles += 1
            schedule_one(self, e)

    def is_settled(self) -> bool:
        """Nothing left that a retry could change: every queued entity is gated or was last
        tried against the current cluster state (retrying would repeat the same outcome)."""
        if self.queue.has_active():
            return False
        gen = self.generation
        for e in self.queue.entities.values():
            if e.where in ("gated", "inflight"):
                continue
            if e.last_attempt_generation != gen:
                return False
        return True

    def requeue_failed(self, e: QueuedEntity, status: Status) -> None:
        """handleSchedulingFailure's queue part (§4.5)."""
        if status.code == Code.ERROR:
            e.consecutive_errors += 1
        else:
            e.consecutive_errors = 0
            e.unschedulable_count += 1
        self.queue.requeue_after_failure(e, to_backoff=False)


def allowed_disruptions(pdb: PodDisruptionBudget, healthy: int) -> int:
    """The disruption controller's ``disruptionsAllowed`` with expected = healthy pods."""
    expected = healthy

    def scaled(v: int | str) -> int:
        if isinstance(v, str):
            pct = int(v.rstrip("%"))
            return -((-pct * expected) // 100)  # round up, as GetScaledValueFromIntOrPercent(roundUp=true)
        return v

    if pdb.min_available is not None:
        desired = scaled(pdb.min_available)
    elif pdb.max_unavailable is not None:
        desired = expected - scaled(pdb.max_unavailable)
    else:
        desired = expected
    return max(0, healthy - max(desired, 0))
