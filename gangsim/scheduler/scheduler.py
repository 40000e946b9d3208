"""The scheduler: informer-side handlers (``on_<object>_<event>``) and the cycle loop.

The simulator calls the handlers as objects change and ``run_cycles`` in the SCHEDULE phase of
every instant at which there may be work. It builds one ``Framework`` per profile from the
policy's plugin lists and the plugin registry, and it is the Handle the cycle drivers use
(``cycle_handle.SchedulerHandle``) and the shared state the frameworks lend their plugins
(``framework.runtime.Services``). Cluster events move unschedulable entities through queueing
hints (SEMANTICS §4.5): each event names the plugins that registered for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import CompositePodGroup, Node, Pod, PodDisruptionBudget, PodGroup
from gangsim.eventlog import EventLog, EventReason
from gangsim.scheduler.binding import WaitingPodsMap
from gangsim.scheduler.cache.node_table import NodeTable
from gangsim.scheduler.cache.snapshot import Snapshot
from gangsim.scheduler.fastpath.gated_members import GatedPrefix, grow_prefix, move_members
from gangsim.scheduler.fastpath.pre_enqueue import PreEnqueueMemo
from gangsim.scheduler.framework.handle import ClusterAPI
from gangsim.scheduler.framework.interface import ClusterEvent, Status
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import (
    NO_NODE,
    Hierarchies,
    PluginArgs,
    PodGroupState,
    PodInfo,
    PodPhase,
    QueuedEntity,
    QueueLocation,
    ResourceIndex,
)
from gangsim.scheduler.plugins.registry import REGISTRY
from gangsim.scheduler.pod_infos import PodInfos, pod_signature, pod_static_key
from gangsim.scheduler.profiles import PLACEMENT_SCORE_WEIGHTS, Policy
from gangsim.scheduler.queue.nominator import Nominator
from gangsim.scheduler.queue.scheduling_queue import SchedulingQueue
from gangsim.scheduler.schedule_composite import run_root, schedule_composite
from gangsim.scheduler.schedule_one import schedule_one
from gangsim.scheduler.schedule_podgroup import schedule_podgroup

# enum members the per-pod paths read, as module names: read through its class, a member costs
# ~100 ns on Python 3.11 (EnumType's __getattr__ hook), a module name ~10 ns
GATED_EVENT = EventReason.GATED
BOUND = PodPhase.BOUND
ENDED = PodPhase.ENDED
WAITING = PodPhase.WAITING
ASSIGNED_POD_ADD = ClusterEvent.ASSIGNED_POD_ADD
ASSIGNED_POD_DELETE = ClusterEvent.ASSIGNED_POD_DELETE
NOMINATED_POD_DELETE = ClusterEvent.NOMINATED_POD_DELETE
POD_GROUP = ClusterEvent.POD_GROUP
GATED = QueueLocation.GATED
IN_FLIGHT = QueueLocation.IN_FLIGHT

MAX_CYCLES_PER_INSTANT = 2_000_000


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
        self._gated_siblings = config.effective_fast_path.gated_siblings  # see _group_event
        self._sibling_activation = config.effective_fast_path.sibling_activation  # read once here: activation_epoch asks it on every Permit wait
        self._gated_prefix = self._gated_siblings and config.effective_fast_path.gated_prefix
        self._prefixes: dict[str, GatedPrefix] = {}  # group key -> what its last group event found
        self._member_removals = 0  # members removed from any group so far (``_prefix_stamp``)
        self.policy = policy
        self.features = policy.features
        self.cluster = cluster
        self.log = log
        self.rng = rng
        self.resources = resources
        self.nodes = NodeTable(resources)
        self.snapshot = Snapshot(self.nodes, self.victim_priority)
        self.nominator = Nominator()
        self.waiting_pods = WaitingPodsMap(self)
        self.generation = 0
        self.release_generation = 0
        self._bind_generation: dict[int, int] = {}  # victim priority -> generation of its last bind
        self.pods: dict[int, PodInfo] = {}  # every live pod incarnation by uid
        self._entity_of: dict[int, QueuedEntity] = {}
        self._pdbs: dict[str, PodDisruptionBudget] = {}
        self.group_states: dict[str, PodGroupState] = {}
        # CompositePodGroup gate (KEP-6012): PodGroup trees; None: parent links are dropped
        self.hierarchy: Hierarchies | None = Hierarchies(self.group_states) if config.composite_pod_group and self.features.workload_scheduling_cycle else None
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            args = PluginArgs(profile, config, self.features)
            plugins = policy.plugins(profile, topology_aware=config.topology_aware_workload_scheduling)
            self.frameworks[profile.scheduler_name] = Framework(plugins, profile.score_weights, args, self, REGISTRY, run_root, PLACEMENT_SCORE_WEIGHTS)
        # queueing hints: which plugins registered for each event, over every profile
        self.hints: dict[ClusterEvent, frozenset[str]] = {}
        for fw in self.frameworks.values():
            for event, names in fw.events_to_register().items():
                self.hints[event] = self.hints.get(event, frozenset()) | names
        first = next(iter(self.frameworks.values()))  # every profile shares the queue's sort (as upstream requires)
        spec_only = all(fw.pre_enqueue_spec_only for fw in self.frameworks.values())  # PreEnqueue reads pod specs only
        self._pre_enqueue_passed = config.effective_fast_path.pre_enqueue_passed and spec_only  # see pre_enqueue
        self.queue = SchedulingQueue(
            config,
            now=cluster.clock, is_stale=self.is_stale, wake_at=self._wake_at, pre_enqueue=self.pre_enqueue,
            sort_key=first.queue_sort.sort_key,
            entity_of=self._entity_of,  # FastPath.pod_runs (needs repeated_failure), joined_runs: see the queue
            pod_runs=config.effective_fast_path.pod_runs and config.effective_fast_path.repeated_failure,
            join_runs=config.effective_fast_path.joined_runs,
            group_runs=not self.features.gang_scheduling, join_group_runs=spec_only,  # runs of a PodGroup's pods
        )
        self.cycles = 0
        self._cycles_now = 0
        self._cycles_at = -1
        self._wakes: set[int] = set()
        self._gated_message: dict[int, str] = {}
        self._pod_updates = 0  # pod spec updates so far (a ``PreEnqueueMemo`` holds while none came)
        self.kept_unbound: list[tuple[PodInfo, int]] = []  # ``schedule_podgroup``'s kept placements not bound yet
        self.pod_infos = PodInfos(resources)
        self.make_pod_info = self.pod_infos.make  # (a bound method: no frame of its own per pod)

    # ---- the Handle's shared state (framework.runtime.Services, cycle_handle.SchedulerHandle) --
    def framework_for(self, scheduler_name: str) -> Framework | None:
        return self.frameworks.get(scheduler_name)

    def has_profile(self, scheduler_name: str) -> bool:
        return scheduler_name in self.frameworks

    def pod_group(self, key: str) -> PodGroupState | None:
        return self.group_states.get(key)

    def pdbs(self) -> Iterator[PodDisruptionBudget]:
        for key in sorted(self._pdbs):
            yield self._pdbs[key]

    def entity_of(self, pod: PodInfo) -> QueuedEntity | None:
        return self._entity_of.get(pod.uid)

    def activate(self, pods: list[PodInfo]) -> None:
        for pod in pods:
            e = self.queue.single(self._entity_of.get(pod.uid), pod)
            if e is not None:
                self.queue.activate(e)

    def activation_epoch(self) -> int | None:
        return self.queue.activation_epoch if self._sibling_activation else None

    def victim_priority(self, pod: PodInfo) -> int:
        """A group member's priority as a victim is its PodGroup's (``GetPodPriority``, §1.5); in
        a CompositePodGroup tree the root's (``traverseHierarchyUp``, SEMANTICS §11.1)."""
        if self.features.generic_workload and pod.group_key:
            st = self.group_states.get(pod.group_key)
            if st is not None and st.group is not None:
                if self.hierarchy is not None and st.group.parent is not None:
                    root = self.hierarchy.root(st.key)[0]
                    if root is not None and root.group is not None:
                        return root.group.priority
                return st.group.priority
        return pod.priority

    def bump(self, *, release: bool = True) -> None:
        """The cluster changed. ``release``: the change can make a failed attempt succeed (capacity
        freed, a node added or changed, a nomination or group changed); binds cannot, except by
        offering a lower-priority preemption victim, which ``note_bind`` tracks. Sleepers wake first."""
        self.queue.wake_all()  # (FastPath.bulk_retries: their next attempts may go differently)
        self.generation += 1
        if release:
            self.release_generation = self.generation

    def note_bind(self, pod: PodInfo) -> None:
        self._entity_of.pop(pod.uid, None)
        self.bump(release=bool(self.snapshot.affinity_pods))  # pod affinity: a bind can help others
        self._bind_generation[self.victim_priority(pod)] = self.generation

    def move_for(self, event: ClusterEvent) -> None:
        if self.queue.unschedulable:  # (else nothing to move: each bind and end asks, and a ClusterEvent hashes in Python)
            self.queue.move_for_plugins(self.hints.get(event, ()))

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

    # ---- PreEnqueue ---------------------------------------------------------------------------
    def pre_enqueue(self, e: QueuedEntity) -> Status | None:
        """Every PreEnqueue plugin for every pod; a group entity is gated if any pod is (§4.4).
        PreEnqueue reads a pod's spec and its group only, so a pod sharing the previous pod's spec
        (a Job's pods share their template's) and group is not asked again: the plugins run on
        the first pod of each run of such pods, in order, until one gates.

        A PodGroup entity is asked again each time a pod joins it (pods are only appended to an
        entity, or removed), so what the last call found for the pods it saw is kept on the
        entity (``PreEnqueueMemo``) and only the new pods are looked at: the runs, and the pods
        to tell the Gated message when it is the one the others were told (``_tell_gated``
        tells each pod a message once anyway). O(1) per joining pod instead of O(group).

        ``FastPath.pre_enqueue_passed``: when every PreEnqueue plugin reads the spec only, pods that
        passed with no spec update since pass again: only the runs of pods added since are asked."""
        pods = e.pods
        memo = e.pre_enqueue_memo
        asked = 0  # the runs before this one passed on this call already
        passed = memo.passed_before(pods, self._pod_updates) if self._pre_enqueue_passed and isinstance(memo, PreEnqueueMemo) else 0
        if passed == len(pods) and passed:
            return None  # every pod passed before, none new, no spec updated: the memo stays as it is
        if passed:
            start, runs, told = passed, memo.runs, ""  # (runs[-1]: the run of the last pod that passed)
            asked = len(runs)
        elif isinstance(memo, PreEnqueueMemo) and memo.covers(pods, self._pod_updates):
            start, runs, told = memo.count, memo.runs, memo.told
        else:
            start, runs, told = 0, [], ""
        for pod in pods[start:] if start else pods:
            last = runs[-1] if runs else None
            if last is None or pod.spec is not last.spec or pod.group_key != last.group_key:
                runs.append(pod)
        status = None
        for pod in runs[asked:] if asked else runs:
            fw = self.frameworks.get(pod.spec.scheduler_name)
            if fw is not None:
                status = fw.run_pre_enqueue(pod)
                if status is not None:
                    break
        if status is not None:
            message = status.message  # (joined from the reasons on each read)
            for pod in pods[start:] if message == told else pods:
                self._tell_gated(pod, message)
            told = message
        else:
            told = ""  # the new pods were told nothing
        e.pre_enqueue_memo = PreEnqueueMemo(len(pods), pods[-1], runs, told, self._pod_updates, status is None) if pods else None
        return status

    def _tell_gated(self, pod: PodInfo, message: str) -> None:
        """A Gated event when a pod starts waiting at PreEnqueue or its reason changes."""
        if self._gated_message.get(pod.uid) == message:
            return
        self._gated_message[pod.uid] = message
        self.log.event(self.cluster.now, "Pod", pod.key, "", GATED_EVENT, message)
        self.cluster.gated(pod, message)

    # ---- nodes -------------------------------------------------------------------------------
    def on_node_add(self, node: Node) -> None:
        self.nodes.add_node(node)
        self.bump()
        self.move_for(ClusterEvent.NODE_ADD)
        self.cluster.request_cycle()

    def on_node_update(self, old: Node, new: Node) -> None:
        self.nodes.update_node(new)
        self.bump()
        events: list[ClusterEvent] = []
        if any(new.allocatable.get(k, 0) > old.allocatable.get(k, 0) for k in new.allocatable):
            events.append(ClusterEvent.NODE_ALLOCATABLE_UP)
        if old.unschedulable and not new.unschedulable:
            events.append(ClusterEvent.NODE_SCHEDULABLE)
        if old.taints != new.taints:
            events.append(ClusterEvent.NODE_TAINT)
        if old.labels != new.labels:
            events.append(ClusterEvent.NODE_LABEL)
        if events:
            self.queue.move_for_plugins(frozenset().union(*(self.hints.get(ev, frozenset()) for ev in events)))
            self.cluster.request_cycle()

    def on_node_delete(self, name: str) -> None:
        """Call after the node's pods were deleted (``on_pod_delete``)."""
        row = self.nodes.row_of[name]
        for _ in self.nominator.forget_row(row):
            self.bump()
        self.nodes.remove_node(name)
        self.bump()

    # ---- pods --------------------------------------------------------------------------------
    def on_pod_add(self, pod: Pod, uid: int) -> PodInfo:
        """An unscheduled pod appeared. Pods with no matching profile are never queued."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        self.bump(release=False)  # a new pending pod helps only its own entity (marked below)
        if pod.spec.scheduler_name not in self.frameworks:
            return info  # no profile: this scheduler never sees the pod (INTERFACE rule 7)
        if self.features.gang_scheduling and info.group_key:
            st = self._group_state(info.group_key)
            st.members[uid] = info
            if self.features.workload_scheduling_cycle:
                self._add_to_group_entity(st, info)
                if self.hierarchy is not None and st.group is not None and st.group.parent is not None:
                    self._hierarchy_event(st.key)
                self.cluster.request_cycle()
                return info
        self._entity_of[uid] = self.queue.add_pod(info)
        if self.features.gang_scheduling and info.group_key:
            self._group_event(info.group_key, joined=info)  # hint: UnscheduledPod/Add of the group
        self.cluster.request_cycle()
        return info

    def on_pod_assigned(self, pod: Pod, uid: int, node: str) -> PodInfo:
        """A pod that arrives already bound (``spec.nodeName`` admitted by the kubelet, or a dump)."""
        info = self.make_pod_info(pod, uid, self.cluster.now)
        self.pods[uid] = info
        later = self.kept_unbound  # a bind of a kept PodGroup pass made the kubelet admit it:
        for p, _ in reversed(later):  # it goes before the ones not bound yet, as without keeping
            self.snapshot.unassign(p)
        self.snapshot.assign(info, self.nodes.row_of[node])
        for p, row in later:
            self.snapshot.assign(p, row)
        info.phase = BOUND
        info.start_ms = self.cluster.now
        if self.features.gang_scheduling and info.group_key and pod.spec.scheduler_name in self.frameworks:
            self._group_state(info.group_key).members[uid] = info
            self._group_event(info.group_key)  # hint: AssignedPod/Add of the group
        self.bump()
        self.move_for(ASSIGNED_POD_ADD)
        return info

    def on_pod_update(self, info: PodInfo, pod: Pod) -> None:
        """A pod's labels, scheduling gates or tolerations changed (the rest is immutable):
        its filter inputs and batching signature change with them."""
        info.spec = pod.spec
        self._pod_updates += 1
        info.static_key = pod_static_key(pod)
        info.signature = pod_signature(pod, info.demand)
        self.bump()
        e = self.queue.single(self._entity_of.get(info.uid), info)
        if e is not None:
            self.queue.move_entity(e)
            self.cluster.request_cycle()

    def on_pod_delete(self, info: PodInfo) -> None:
        """The pod is gone (finished, deleted, victim terminated, node failed)."""
        self.queue.wake_all()  # (before its group's entity loses it: a sleeper's backoff reads its size)
        if info.phase is WAITING:
            self.waiting_pods.forget(info)
        self.pods.pop(info.uid, None)
        self._gated_message.pop(info.uid, None)
        e = self._entity_of.pop(info.uid, None)
        if e is not None and not e.is_group:
            self.queue.leave(e, info)
        if info.group_key:
            st = self.group_states.get(info.group_key)
            if st is not None:
                st.members.pop(info.uid, None)
                self._member_removals += 1
                if not st.members:
                    st.members = {}  # (a fresh dict: see ``gangsim.sim.jobs``, "emptied")
                ge = st.entity
                if ge is not None and info in ge.pods:
                    ge.pods.remove(info)
                    if not ge.pods:
                        self.queue.done(ge)
                        st.entity = None
        had_nomination = self.nominator.clear(info)
        if info.node_row != NO_NODE:
            self.snapshot.unassign(info)
            self.move_for(ASSIGNED_POD_DELETE)
        elif had_nomination:
            self.move_for(NOMINATED_POD_DELETE)
        info.phase = ENDED
        self.bump()
        self.cluster.request_cycle()

    def reject_waiting_pod(self, info: PodInfo, message: str) -> None:
        """A pod waiting at Permit lost its node (deleted): unreserve it and requeue."""
        self.waiting_pods.reject(info, message, plugin="", to_backoff=True)

    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None:
        self._pdbs[pdb.key] = pdb
        self.bump()

    def on_pdb_delete(self, key: str) -> None:
        self._pdbs.pop(key, None)
        self.bump()

    # ---- pod groups (scheduling them: gangsim.scheduler.schedule_podgroup) --------------------
    def _group_state(self, key: str) -> PodGroupState:
        st = self.group_states.get(key)
        if st is None:
            st = PodGroupState(key)
            self.group_states[key] = st
        return st

    def _set_group(self, key: str, group: PodGroup | None) -> PodGroupState:
        self.queue.wake_all()  # (before a sleeper's priority changes: the bump after wakes it too late)
        st = self._group_state(key)
        if group is not None and group.policy.topology_keys and not self.config.topology_aware_workload_scheduling:
            # the TopologyAwareWorkloadScheduling gate off: the API server drops
            # spec.schedulingConstraints (dropDisabledFields), so the scheduler never sees it
            group = replace(group, policy=replace(group.policy, topology_keys=()))
        st.group = group
        if st.entity is not None:
            st.entity.group = group
        if self.hierarchy is not None:
            self.hierarchy.link(key, group)
        elif group is not None and group.parent is not None:
            # the CompositePodGroup gate off: the API server drops parentCompositePodGroupName
            st.group = group = replace(group, parent=None)
            if st.entity is not None:
                st.entity.group = group
        return st

    def on_podgroup_add(self, pg: PodGroup) -> None:
        st = self._set_group(pg.key, pg)
        self.snapshot.reindex(list(st.members.values()))
        self.bump()
        self._group_event(pg.key)
        if self.hierarchy is not None and st.group is not None and st.group.parent is not None:
            self._hierarchy_event(pg.key)

    # ---- composite pod groups (KEP-6012; scheduling them: gangsim.scheduler.schedule_composite) --
    def on_composite_pod_group_add(self, cpg: CompositePodGroup) -> None:
        """Create or update (the spec is immutable): with the gate off the API does not serve the
        kind, so the scheduler never sees it."""
        if self.hierarchy is None:
            return
        self.hierarchy.set_composite(cpg)
        self.bump()
        self._hierarchy_event(cpg.key)

    def on_composite_pod_group_delete(self, key: str) -> None:
        if self.hierarchy is None:
            return
        self.hierarchy.delete_composite(key)
        self.bump()

    def _hierarchy_event(self, key: str) -> None:
        """GangScheduling's hints with hierarchies (``areSameHierarchy``): a pod or group added
        anywhere in a tree can complete its quorum, so every PodGroup of the tree moves on."""
        tree = self.hierarchy
        assert tree is not None
        root, _ = tree.root(key)
        if root is None:
            return
        for leaf in tree.leaves(root):
            if leaf.key != key:
                self._group_event(leaf.key)

    def on_podgroup_update(self, old: PodGroup | None, new: PodGroup) -> None:
        self._set_group(new.key, new)
        self.bump()
        # GangScheduling's hint: PodGroup/Update queues only when minCount decreased
        if old is None or new.policy.min_count < old.policy.min_count:
            self._group_event(new.key)

    def on_podgroup_delete(self, key: str) -> None:
        st = self.group_states.get(key)
        if st is not None:
            self._set_group(key, None)
            self.snapshot.reindex(list(st.members.values()))
        self.bump()

    def _add_to_group_entity(self, st: PodGroupState, info: PodInfo) -> None:
        """The Workload Scheduling Cycle: a pod joins its group's queue entity (created at the
        first arrival)."""
        e = st.entity
        if e is None:
            e = QueuedEntity(key="pg:" + st.key, pods=[info], group=st.group, group_key=st.key, timestamp_ms=self.cluster.now)
            st.entity = e
            self._entity_of[info.uid] = e
            self.queue.add(e)
            return
        e.pods.append(info)
        e.last_attempt_generation = -1  # new member: its next attempt may go differently
        self._entity_of[info.uid] = e
        if e.where is GATED:
            self.queue.move_entity(e)
            if e.where is GATED:  # still held: tell this pod why, as its siblings were told
                self._tell_gated(info, e.gated_message)

    def _group_event(self, key: str, joined: PodInfo | None = None) -> None:
        """``ClusterEvent.POD_GROUP`` for group ``key``: its entity, or its members' entities that
        are gated or were rejected by a plugin registered for the event, move on."""
        st = self.group_states.get(key)
        if st is None:
            return
        if st.entity is not None:
            self.queue.move_entity(st.entity)
        else:  # each member its own entity (``pod``, ``permit``): fastpath.gated_members
            prefix = self._prefixes.get(key) if joined is not None and self._gated_prefix else None
            if prefix is None or not grow_prefix(prefix, st.members, self._entity_of, joined, self._prefix_stamp):  # type: ignore[arg-type]
                plugins = self.hints.get(POD_GROUP, frozenset())
                stamp = self._prefix_stamp if self._gated_prefix else None
                prefix = move_members(st.members, self._entity_of, self.queue.move_entity, plugins, siblings=self._gated_siblings, prefix=self._prefixes.pop(key, None), stamp=stamp, joined=joined, let_go=self._let_go)
                if prefix is not None:
                    self._prefixes[key] = prefix
        self.cluster.request_cycle()

    def _let_go(self, *entities: QueuedEntity) -> None:
        """The moves of gated entities (one pod each), in order, when PreEnqueue is known to pass
        them (siblings of a spec and group that just passed, ``fastpath.gated_members``): what
        ``pre_enqueue`` leaves on a pass (its memo: the pod passed, told nothing), then the
        queue's moves."""
        updates = self._pod_updates
        for e in entities:
            pod = e.pods[0]
            e.pre_enqueue_memo = PreEnqueueMemo(1, pod, [pod], "", updates, True)
        self.queue.move_passed(*entities)

    def _prefix_stamp(self) -> tuple[int, int, int]:  # a GatedPrefix holds while this is unchanged
        return (self.queue.gate_changes, self._pod_updates, self._member_removals)

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
                st = self._group_state(e.group_key)
                root = self.hierarchy.root(st.key)[0] if self.hierarchy is not None and st.group is not None and st.group.parent is not None else None
                if root is not None:
                    schedule_composite(self, e, root)
                else:
                    schedule_podgroup(self, e, st)
            else:
                more = schedule_one(self, e) - 1  # a PodRun's other pods failing with the first
                self.cycles += more
                self._cycles_now += more

    def is_settled(self) -> bool:
        """Nothing left that a retry could change: every queued entity is gated or was last
        tried against the current cluster state (retrying would repeat the same outcome)."""
        if self.queue.has_active():
            return False
        for e in self.queue.entities.values():
            if e.where in (GATED, IN_FLIGHT, QueueLocation.WAITING):
                continue
            if self.is_stale(e):
                return False
        return True

    # ---- what the replay reports ----------------------------------------------------------------
    def counters(self) -> dict[str, int]:
        frameworks = self.frameworks.values()
        return {
            "scheduling_cycles": self.cycles,
            "batch_hits": sum(fw.signatures.hits for fw in frameworks if fw.signatures is not None),
            "filter_rows_evaluated": sum(fw.filter_rows_evaluated for fw in frameworks),
            "filter_rows_computed": sum(fw.filter_rows_computed for fw in frameworks),
            "doomed_passes": sum(fw.doomed_passes for fw in frameworks),
            "counted_passes": sum(fw.counted_passes for fw in frameworks),
            "repeated_failures": sum(fw.repeated_failures.replays for fw in frameworks if fw.repeated_failures is not None),
            "post_filters_repeated": sum(fw.repeated_failures.post_filters_repeated for fw in frameworks if fw.repeated_failures is not None),
        }

    def check_invariants(self) -> None:
        """Raise if a node is over-committed (tests replay with this after every instant)."""
        self.nodes.check_invariants()
