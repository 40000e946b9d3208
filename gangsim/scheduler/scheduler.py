"""The scheduler: informer-side handlers (``on_<object>_<event>``) and the cycle loop.

The simulator calls the handlers as objects change and ``run_cycles`` in the SCHEDULE phase of
every instant at which there may be work. Cluster events move unschedulable entities through
queueing hints (SEMANTICS §4.5): each event names the plugins whose hints say Queue for it.
"""

from __future__ import annotations

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Node, Pod, PodDisruptionBudget, PodGroup
from gangsim.eventlog import EventLog, EventReason
from gangsim.scheduler.cache.node_table import NodeTable, ResourceIndex
from gangsim.scheduler.cache.podgroup_state import PodGroupState
from gangsim.scheduler.cache.snapshot import Snapshot
from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import NO_NODE, PodInfo, PodPhase, QueuedEntity
from gangsim.scheduler.interface import ClusterAPI
from gangsim.scheduler.plugins import gangscheduling, names
from gangsim.scheduler.preemption.classic import Evaluator
from gangsim.scheduler.preemption.podgroup import preempt_podgroup, unit_for
from gangsim.scheduler.preemption.units import VictimUnit
from gangsim.scheduler.profiles import Policy
from gangsim.scheduler.queue.nominator import Nominator
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.scheduler.permit import PermitBarrier
from gangsim.scheduler.schedule_one import actuate_group_preemption, schedule_one
from gangsim.scheduler.schedule_podgroup import schedule_podgroup

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
        self.snapshot.victim_priority = self.victim_priority
        self.nominator = Nominator()
        self.generation = 0
        self.release_generation = 0
        self._bind_generation: dict[int, int] = {}  # victim priority -> generation of its last bind
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
            is_stale=self.is_stale,
            wake_at=self._wake_at,
            pre_enqueue=self.pre_enqueue,
        )
        self.pods: dict[int, PodInfo] = {}  # every live pod incarnation by uid
        self.entity_of: dict[int, QueuedEntity] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.pod_groups: dict[str, PodGroup] = {}
        self.group_states: dict[str, PodGroupState] = {}
        self.permit = PermitBarrier(self) if policy.permit_barrier else None
        self.cycles = 0
        self._cycles_now = 0
        self._cycles_at = -1
        self._wakes: set[int] = set()
        self._gated_message: dict[int, str] = {}
        self._spec_cache: dict[int, tuple] = {}

    # ---- plumbing ----------------------------------------------------------------------------
    def bump(self, *, release: bool = True) -> None:
        """The cluster changed. ``release``: the change can make a failed attempt succeed (capacity
        freed, a node added or changed, a nomination or group changed); binds cannot, except by
        offering a lower-priority preemption victim, which ``note_bind`` tracks."""
        self.generation += 1
        if release:
            self.release_generation = self.generation

    def note_bind(self, pod: PodInfo) -> None:
        self.bump(release=bool(self.snapshot.affinity_pods))  # pod affinity: a bind can help others
        self._bind_generation[self.victim_priority(pod)] = self.generation

    def is_stale(self, e: QueuedEntity) -> bool:
        """Could a new attempt of ``e`` end differently from its last one? Cycles are
        deterministic, so only if something that can help it happened since: a release, its own
        pods changed, or a bind of a pod it could preempt (SEMANTICS §4.3 pop-from-backoffQ)."""
        g = e.last_attempt_generation
        if g < self.release_generation:
            return True
        prio = e.priority
        return any(gen > g and p < prio for p, gen in self._bind_generation.items())
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
        """SchedulingGates, then GangScheduling; a group entity is gated if any pod is (§4.4)."""
        status = None
        admitted_group = ""  # the gang gate depends only on the group: ask it once per entity
        for pod in e.pods:
            if pod.spec.scheduling_gates:
                status = Status.unresolvable(SCHEDULING_GATES_MSG.format(" ".join(pod.spec.scheduling_gates)), plugin=names.SCHEDULING_GATES)
                break
            if self.policy.gang_pre_enqueue and pod.group_key and pod.group_key != admitted_group:
                status = gangscheduling.pre_enqueue(self.group_states.get(pod.group_key), pod.spec.scheduling_group)
                if status is not None:
                    break
                admitted_group = pod.group_key
        if status is not None:
            for pod in e.pods:
                self._tell_gated(pod, status.message)
        return status

    def _tell_gated(self, pod: PodInfo, message: str) -> None:
        """A Gated event when a pod starts waiting at PreEnqueue or its reason changes."""
        if self._gated_message.get(pod.uid) == message:
            return
        self._gated_message[pod.uid] = message
        self.log.event(self.cluster.now, "Pod", pod.key, "", EventReason.GATED, message)
        self.cluster.gated(pod, message)

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
        # Job pods share their template's PodSpec: derive its vectors and keys once per spec
        derived = self._spec_cache.get(id(pod.spec))
        if derived is None or derived[0] is not pod.spec:
            demand = self.resources.vector(pod.spec.requests, pod=True)
            cols = np.flatnonzero(demand).astype(np.int64)
            derived = (pod.spec, demand, cols, demand[cols], pod_static_key(pod), pod_signature(pod, demand))
            if len(self._spec_cache) > 65536:
                self._spec_cache.clear()
            self._spec_cache[id(pod.spec)] = derived
        _, demand, cols, amounts, static_key, signature = derived
        return PodInfo(
            uid=uid,
            namespace=pod.namespace,
            name=pod.name,
            spec=pod.spec,
            demand=demand,
            fit_cols=cols,
            fit_amounts=amounts,
            created_ms=now,
            group_key=f"{pod.namespace}/{pod.spec.scheduling_group}" if pod.spec.scheduling_group else "",
            static_key=static_key,
            signature=signature,
        )

    def on_pod_add(self, pod: Pod, uid: int) -> PodInfo:
        """An unscheduled pod appeared. Pods with no matching profile are never queued."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        self.bump(release=False)  # a new pending pod helps only its own entity (marked below)
        if pod.spec.scheduler_name not in self.frameworks:
            return info  # no profile: this scheduler never sees the pod (INTERFACE rule 7)
        if self.policy.gang_pre_enqueue and info.group_key:
            st = self.group_state(info.group_key)
            st.members[uid] = info
            if self.policy.group_entities:
                self._add_to_group_entity(st, info)
                self.cluster.request_cycle()
                return info
        e = QueuedEntity(key=str(uid), pods=[info], timestamp_ms=self.cluster.now)
        self.entity_of[uid] = e
        self.queue.add(e)
        if self.policy.gang_pre_enqueue and info.group_key:
            self._gang_event(info.group_key)  # GangScheduling hint: UnscheduledPod/Add of the group
        self.cluster.request_cycle()
        return info

    def on_pod_assigned(self, pod: Pod, uid: int, row: int) -> PodInfo:
        """A pod that arrives already bound (``spec.nodeName`` or a cluster dump)."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        self.snapshot.assign(info, row)
        info.phase = PodPhase.BOUND
        info.start_ms = self.cluster.now
        if self.policy.gang_pre_enqueue and info.group_key and pod.spec.scheduler_name in self.frameworks:
            self.group_state(info.group_key).members[uid] = info
            self._gang_event(info.group_key)  # GangScheduling hint: AssignedPod/Add of the group
        self.bump()
        self.queue.move_for_plugins(EVENT_ASSIGNED_POD_ADD)
        return info

    def on_pod_update(self, info: PodInfo, pod: Pod) -> None:
        """A pod's labels, scheduling gates or tolerations changed (the rest is immutable):
        its filter inputs and batching signature change with them."""
        info.spec = pod.spec
        info.static_key = pod_static_key(pod)
        info.signature = pod_signature(pod, info.demand)
        self.bump()
        e = self.entity_of.get(info.uid)
        if e is not None:
            self.queue.move_entity(e)
            self.cluster.request_cycle()

    def on_pod_delete(self, info: PodInfo) -> None:
        """The pod is gone (finished, deleted, victim terminated, node failed)."""
        self.pods.pop(info.uid, None)
        self._gated_message.pop(info.uid, None)
        e = self.entity_of.pop(info.uid, None)
        if e is not None and not e.is_group:
            self.queue.remove(e)
        if info.group_key:
            st = self.group_states.get(info.group_key)
            if st is not None:
                st.members.pop(info.uid, None)
                st.waiting.pop(info.uid, None)
                ge = st.entity
                if ge is not None and info in ge.pods:
                    ge.pods.remove(info)
                    if not ge.pods:
                        self.queue.remove(ge)
                        st.entity = None
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

    def group_state(self, key: str) -> PodGroupState:
        st = self.group_states.get(key)
        if st is None:
            st = PodGroupState(key, self.pod_groups.get(key))
            self.group_states[key] = st
        return st

    def on_podgroup_add(self, pg: PodGroup) -> None:
        self.pod_groups[pg.key] = pg
        st = self.group_state(pg.key)
        st.group = pg
        if st.entity is not None:
            st.entity.group = pg
        self.snapshot.reindex(list(st.members.values()))
        self.bump()
        self._gang_event(pg.key)

    def on_podgroup_update(self, old: PodGroup | None, new: PodGroup) -> None:
        self.pod_groups[new.key] = new
        st = self.group_state(new.key)
        st.group = new
        if st.entity is not None:
            st.entity.group = new
        self.bump()
        # GangScheduling hint: PodGroup/Update queues only when minCount decreased
        if old is None or new.policy.min_count < old.policy.min_count:
            self._gang_event(new.key)

    def on_podgroup_delete(self, key: str) -> None:
        self.pod_groups.pop(key, None)
        st = self.group_states.get(key)
        if st is not None:
            st.group = None
            if st.entity is not None:
                st.entity.group = None
            self.snapshot.reindex(list(st.members.values()))
        self.bump()

    def _add_to_group_entity(self, st: PodGroupState, info: PodInfo) -> None:
        """Gang policy: a pod joins its group's queue entity (created at the first arrival)."""
        e = st.entity
        if e is None:
            e = QueuedEntity(key="pg:" + st.key, pods=[info], group=st.group, group_key=st.key, timestamp_ms=self.cluster.now)
            st.entity = e
            self.entity_of[info.uid] = e
            self.queue.add(e)
            return
        e.pods.append(info)
        e.last_attempt_generation = -1  # new member: its next attempt may go differently
        self.entity_of[info.uid] = e
        if e.where == "gated":
            self.queue.move_entity(e)
            if e.where == "gated":  # still held: tell this pod why, as its siblings were told
                self._tell_gated(info, e.gated_message)

    def _gang_event(self, key: str) -> None:
        """A cluster event the GangScheduling queueing hints answer with Queue for group ``key``."""
        st = self.group_states.get(key)
        if st is None:
            return
        if st.entity is not None:
            self.queue.move_entity(st.entity)
        else:
            for member in list(st.members.values()):
                e = self.entity_of.get(member.uid)
                if e is not None and (e.where == "gated" or (e.where == "unschedulable" and names.GANG_SCHEDULING in e.unschedulable_plugins)):
                    self.queue.move_entity(e)
        self.cluster.request_cycle()

    # ---- Permit (the v1.35 barrier lives in gangsim.scheduler.plugins.gangscheduling) ----------
    def run_permit(self, pod: PodInfo, row: int) -> Status | None:
        """None: allowed, bind now. A WAIT status: the pod keeps its reservation and waits."""
        if self.permit is None:
            return None
        return self.permit.permit(pod, row)

    def reject_waiting(self, pod: PodInfo, reason: str) -> None:
        """A pod waiting at Permit is rejected: unreserve and requeue."""
        if self.permit is not None:
            self.permit.reject(pod, reason)

    def forget_waiting(self, pod: PodInfo) -> None:
        """A pod waiting at Permit was deleted."""
        if self.permit is not None:
            self.permit.forget(pod)

    def on_assigned(self, pod: PodInfo) -> None:
        self.queue.move_for_plugins(EVENT_ASSIGNED_POD_ADD)

    def pod_group_post_filter(self, fw: Framework, st: PodGroupState, pods: list[PodInfo], status: Status) -> tuple[str, Status, dict[int, int] | None]:
        """PodGroupPostFilter (§8.1 step 6): workload-aware preemption for a failed group cycle.

        Returns the outcome (waiting_on_preemption or unschedulable), the group status with the
        preemption message appended, and the nominations to apply (None: clear them all).
        """
        from gangsim.scheduler.schedule_podgroup import UNSCHEDULABLE, WAITING_ON_PREEMPTION

        if not self.policy.workload_aware_preemption or not fw.profile.preemption_enabled:
            return UNSCHEDULABLE, status, None
        res = preempt_podgroup(self, fw, st, pods)
        self.log.count("podgroup_preemption_attempts")
        reasons = status.reasons + tuple(r for r in res.status.reasons if r)
        if res.status.code != Code.SUCCESS:
            return UNSCHEDULABLE, Status(status.code, reasons, status.plugin), None
        if res.victims:
            self.log.count("podgroup_preemption_victims", sum(len(u.pods) for u in res.victims))
            actuate_group_preemption(self, st, res)
        return WAITING_ON_PREEMPTION, Status(Code.UNSCHEDULABLE, reasons, status.plugin), res.nominations

    # ---- preemption helpers -------------------------------------------------------------------
    def preempt_victims(self, victims: list[PodInfo], preemptor: str, priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        """Actuate one decision: waiting pods are rejected at Permit, others are deleted."""
        if not victims:
            return
        waiting = [v for v in victims if v.phase is PodPhase.WAITING]
        for v in victims:
            if v.phase is not PodPhase.WAITING:
                v.terminating = True
        self.cluster.preempt([(v, v.node_row) for v in victims], preemptor, priority, message, preemptor_kind=preemptor_kind)
        for v in waiting:
            self.reject_waiting(v, "preempted")

    def victim_priority(self, pod: PodInfo) -> int:
        """A group member's priority as a victim is its PodGroup's (``GetPodPriority``, §1.5)."""
        if self.policy.generic_workload and pod.group_key:
            group = self.pod_groups.get(pod.group_key)
            if group is not None:
                return group.priority
        return pod.priority

    def victim_units_on_row(self, preemptor: PodInfo, row: int) -> list[VictimUnit]:
        """§5 step 3a / §11.3: units on the node with priority lower than the preemptor's; an
        ``all`` group is one unit with all its scheduled pods, wherever they run."""
        units = []
        seen: set[int] = set()
        for q in self.snapshot.pods_on(row):
            if self.victim_priority(q) >= preemptor.priority:
                continue
            unit = unit_for(self, q, seen)
            if unit is not None:
                units.append(unit)
        return units

    def victim_units(self, below: int) -> list[VictimUnit]:
        """Every unit in the cluster with priority lower than ``below`` (WAP step 1)."""
        units = []
        seen: set[int] = set()
        for q in self.snapshot.assigned_below(below):
            unit = unit_for(self, q, seen)
            if unit is not None:
                units.append(unit)
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
            if e.is_group:
                schedule_podgroup(self, e)
            else:
                schedule_one(self, e)

    def is_settled(self) -> bool:
        """Nothing left that a retry could change: every queued entity is gated or was last
        tried against the current cluster state (retrying would repeat the same outcome)."""
        if self.queue.has_active():
            return False
        for e in self.queue.entities.values():
            if e.where in ("gated", "inflight", "waiting"):
                continue
            if self.is_stale(e):
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
