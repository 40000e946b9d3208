"""GangScheduling (``framework/plugins/gangscheduling``), messages exactly as upstream:

- PreEnqueue (§4.4): a member pod waits until its PodGroup exists and, for a gang, until
  ``minCount`` member pods exist; in a CompositePodGroup tree (gate on) until the root has
  ``minGroupCount`` ready children (§9);
- Reserve/Permit, the v1.35 barrier (§7, ``--policy permit``): a reserved gang member waits at
  Permit until ``|assumed ∪ bound| >= minCount``; the group shares one deadline (300 s by
  default), created at the first Wait and reused by later Waits (gangsim's reading of the
  per-group timeout); at the deadline every waiting member is rejected;
- PlacementFeasible (§8.4, ``--policy gang``): stop the PodGroup pass once minCount is out of reach;
- EnqueueExtensions: a PodGroup change or a new member pod can admit the group's pods.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle, Timer
from gangsim.scheduler.framework.interface import (
    ClusterEvent,
    Code,
    EnqueueExtensions,
    PermitPlugin,
    PlacementFeasiblePlugin,
    PreEnqueuePlugin,
    ReservePlugin,
    Status,
)
from gangsim.scheduler.framework.types import PluginArgs, PodGroupState, PodInfo, PodPhase
from gangsim.scheduler.plugins import names

# enum members the per-pod paths read, as module names: read through its class, a member costs
# ~100 ns on Python 3.11 (EnumType's __getattr__ hook), a module name ~10 ns
PENDING = PodPhase.PENDING

NAME = names.GANG_SCHEDULING
# ``GangScheduling.PreEnqueue`` (gangscheduling.go, ``preEnqueueHierarchiesDisabled`` and
# ``preEnqueueWithHierarchies``): upstream's spelling "pods's" in every stored version, the newest
# (with ``checkCPGHierarchyReadiness`` and PlacementFeasible) included, and in its TestPreEnqueue
WAITING_FOR_GROUP = 'waiting for pods\'s pod group "{}" to appear in scheduling queue'
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
# ``GangScheduling.Permit`` of the PodGroup-API barrier (v1.36 gangscheduling.go, before Permit moved
# into the PodGroup cycle); the v1.35 Workload-API code said "... to be waiting on permit"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"
# ``GangScheduling.checkCPGHierarchyReadiness`` (preEnqueueWithHierarchies): the root's name, or
# the missing ancestor's while the tree is incomplete
WAITING_FOR_TREE = 'waiting for composite pod group "{}" tree to meet quorum'
# preEnqueueWithHierarchies (gangscheduling.go) with the CompositePodGroup gate on: a pod whose
# PodGroup is not known yet fails BuildHierarchySnapshotFromPod before the PodGroup lookup, so the
# message is the snapshot error's, naming the EntityKey ("podgroup/<namespace>/<name>"); pinned by
# gangscheduling_test.go TestPreEnqueue "gang pod fails PreEnqueue when pod group is not yet created
# (CPG enabled: true)". gangsim's group keys are "<namespace>/<name>".
NO_GROUP_IN_SNAPSHOT = "failed to build hierarchy snapshot: pod group object not found in state for podgroup/{}"
# the two verdicts given once per pod (a Status is frozen: one object serves every pod)
_GATED_FOR_MIN_COUNT = Status.unresolvable(WAITING_FOR_MIN_COUNT, plugin=NAME)
_WAIT_AT_PERMIT = Status(Code.WAIT, (WAITING_AT_PERMIT,), NAME)
CANNOT_BE_SATISFIED = "minCount ({}) cannot be satisfied: {} scheduled, {} remaining"
NOT_YET_SATISFIED = "minCount ({}) is not yet satisfied: {} scheduled, {} remaining"
MAX_VERDICTS = 4096  # PlacementFeasible verdicts kept (``GangScheduling._verdicts``), cleared past this


def go_duration(ms: int) -> str:
    """Go's ``time.Duration.String()`` for whole milliseconds (``5m0s``, ``1.5s``, ``300ms``)."""
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, milli = divmod(rem, 1000)
    sec = f"{s}.{milli:03d}".rstrip("0").rstrip(".") if milli else f"{s}"
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


def permit_timeout_message(wait_ms: int) -> str:
    """The framework's Permit-timeout rejection (``framework/runtime/waiting_pods_map.go``)."""
    return f"rejected due to timeout after waiting {go_duration(wait_ms)} at plugin {NAME}"


@dataclass(slots=True, eq=False)
class _Barrier:
    """One gang's Permit state: its waiting members and the shared deadline."""

    waiting: dict[int, PodInfo] = field(default_factory=dict)
    wait_ms: dict[int, int] = field(default_factory=dict)  # uid -> the timeout its Wait was given
    deadline_ms: int | None = None
    timer: Timer | None = None
    # the Handle's activation epoch after the last activation of the group's pods, when that
    # activation left it unchanged (None: none such): activating them again would do nothing
    activated: int | None = None
    # ``FastPath.permit_counts``: (``id`` of the members dict — not the dict, which an emptied
    # gang replaces and must not keep —, the node table's generation, the count) of the last
    # Permit's ``scheduled_count``
    counted: tuple[int, int, int] | None = None


class GangScheduling(PreEnqueuePlugin, ReservePlugin, PermitPlugin, PlacementFeasiblePlugin, EnqueueExtensions):
    NAME = NAME
    PRE_ENQUEUE_SPEC_ONLY = False  # reads the PodGroup and how many pods it has

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.handle = handle
        self.permit_timeout_ms = args.config.permit_timeout_ms
        self._permit_counts = args.config.effective_fast_path.permit_counts
        self.counts_reused = 0  # Permits that took the count from the previous one (tests)
        self._barriers: dict[str, _Barrier] = {}
        # PlacementFeasible's non-success statuses by (minCount, scheduled, remaining): a Status is
        # frozen, and a stuck gang asks the same few counts twice per attempt, for hours
        self._verdicts: dict[tuple[int, int, int], Status] = {}

    def events_to_register(self) -> tuple[ClusterEvent, ...]:
        return (ClusterEvent.POD_GROUP,)

    # ---- PreEnqueue (§4.4) -------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not pod.group_key:
            return None
        st = self.handle.pod_group(pod.group_key)
        tree = self.handle.hierarchy
        if st is None or st.group is None:
            if tree is not None:  # preEnqueueWithHierarchies: BuildHierarchySnapshotFromPod fails first
                return Status.unresolvable(NO_GROUP_IN_SNAPSHOT.format(pod.group_key), plugin=NAME)
            return Status.unresolvable(WAITING_FOR_GROUP.format(pod.spec.scheduling_group), plugin=NAME)
        if tree is not None and st.group.parent is not None:  # preEnqueueWithHierarchies
            root, name = tree.root(st.key)
            if root is None or tree.ready_children(root) < root.min_count:
                return Status.unresolvable(WAITING_FOR_TREE.format(name), plugin=NAME)
            return None
        if st.is_gang and len(st.members) < st.group.policy.min_count:  # AllPodsCount: every member pod
            return _GATED_FOR_MIN_COUNT
        return None

    # ---- PlacementFeasible (§8.4) ----------------------------------------------------------------
    def placement_feasible(self, group: PodGroupState, scheduled: int, remaining: int) -> Status | None:
        min_count = group.min_count
        if scheduled >= min_count and remaining + scheduled >= min_count:
            return None
        key = (min_count, scheduled, remaining)
        verdict = self._verdicts.get(key)
        if verdict is None:
            if remaining + scheduled < min_count:
                verdict = Status(Code.UNSCHEDULABLE, (CANNOT_BE_SATISFIED.format(min_count, scheduled, remaining),), NAME)
            else:
                verdict = Status(Code.WAIT, (NOT_YET_SATISFIED.format(min_count, scheduled, remaining),), NAME)
            if len(self._verdicts) > MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    # ---- Reserve / Permit (§7) --------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, row: int) -> Status | None:
        """Nothing to record: the framework marks a reserved pod assumed (``PodPhase.WAITING``),
        which is what ``scheduled_count`` counts."""
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, row: int) -> None:
        """A waiting member was rejected or deleted: it stops waiting; with nobody left waiting
        the deadline no longer matters (and must not keep the replay busy)."""
        b = self._barriers.get(pod.group_key)
        if b is None:
            return
        b.waiting.pop(pod.uid, None)
        b.wait_ms.pop(pod.uid, None)
        self._drop_deadline(b)

    def permit(self, state: CycleState, pod: PodInfo, row: int) -> tuple[Status | None, int]:
        st = self.handle.pod_group(pod.group_key) if pod.group_key else None
        if st is None or not st.is_gang:
            return None, 0
        b = self._barriers.get(st.key)
        if b is None:  # (not ``setdefault``: that builds a barrier on every call, once per pod)
            b = self._barriers[st.key] = _Barrier()
        if self._scheduled_count(st, b) >= st.min_count:  # this pod is counted: it is assumed
            for waiting in list(b.waiting.values()):
                b.waiting.pop(waiting.uid)
                b.wait_ms.pop(waiting.uid, None)
                self.handle.waiting_pods.allow(waiting)
            self._drop_deadline(b)
            return None, 0
        now = self.handle.cluster.now
        if b.deadline_ms is None or b.deadline_ms <= now:
            deadline = now + self.permit_timeout_ms
            b.deadline_ms = deadline
            b.timer = self.handle.cluster.set_timer(deadline, lambda b=b, d=deadline: self._timeout(b, d))
        wait_ms = b.deadline_ms - now
        b.waiting[pod.uid] = pod
        b.wait_ms[pod.uid] = wait_ms
        # the group's other unscheduled pods move to activeQ at once (again only if that can
        # change anything: FastPath.sibling_activation, ``Handle.activation_epoch``)
        epoch = self.handle.activation_epoch()
        if epoch is None or epoch != b.activated:
            self.handle.activate([m for m in st.members.values() if m.phase is PENDING and m.uid != pod.uid])
            b.activated = epoch if epoch is not None and self.handle.activation_epoch() == epoch else None
        return _WAIT_AT_PERMIT, wait_ms

    def _scheduled_count(self, st: PodGroupState, b: _Barrier) -> int:
        """``st.scheduled_count()``, the pod at Permit just assumed. ``FastPath.permit_counts``:
        a member's phase moves into or out of the count only with an assume or unassign on the
        node table (a bind keeps it counted, a pending pod joining or leaving is not), so when
        the table changed exactly once since the gang's previous Permit — this pod's assume,
        which comes right before its Permit — and the members are the same dict, the count is
        that Permit's plus this pod."""
        if not self._permit_counts:
            return st.scheduled_count()
        generation = self.handle.snapshot.nodes.generation
        last = b.counted
        if last is not None and last[1] == generation - 1 and last[0] == id(st.members):
            count = last[2] + 1
            self.counts_reused += 1
        else:
            count = st.scheduled_count()
        b.counted = (id(st.members), generation, count)
        return count

    def _drop_deadline(self, b: _Barrier) -> None:
        if b.waiting:
            return
        b.waiting, b.wait_ms = {}, {}  # fresh dicts: an emptied one keeps its table (``gangsim.sim.jobs``, "emptied")
        if b.timer is not None:
            b.timer.cancel()
            b.timer = None
        b.deadline_ms = None

    def _timeout(self, b: _Barrier, deadline: int) -> None:
        if b.deadline_ms != deadline:
            return
        b.deadline_ms = None
        b.timer = None
        for pod in list(b.waiting.values()):
            self.handle.waiting_pods.reject(pod, permit_timeout_message(b.wait_ms.get(pod.uid, 0)), plugin=NAME, to_backoff=False)
        self.handle.cluster.request_cycle()
