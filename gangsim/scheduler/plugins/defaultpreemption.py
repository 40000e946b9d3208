"""DefaultPreemption (``framework/plugins/defaultpreemption``): PostFilter for one pod (classic,
SEMANTICS §5) and PodGroupPostFilter for a PodGroup (workload-aware, KEP-5710, §11.2). Both run
the shared ``Evaluator``; actuation (DisruptionTarget, deletion, nomination clean-up, §5 step 6
and §11.2 step 8) happens here, through the Handle."""

from __future__ import annotations

from collections.abc import Callable

from gangsim.eventlog import EventReason
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Handle, Victim
from gangsim.scheduler.framework.interface import (
    Code,
    PodGroupPostFilterResult,
    PostFilterResult,
    RepeatablePodGroupPostFilterPlugin,
    RepeatablePostFilterPlugin,
    Status,
)
from gangsim.scheduler.framework.preemption.evaluator import (
    CandidateLimits,
    Evaluator,
    NO_GROUP_VICTIMS_STATUS,
    GroupPreemption,
    PodGroupStrategy,
    PodStrategy,
)
from gangsim.scheduler.framework.preemption.units import COMPOSITE_RANK, UnitIndex
from gangsim.scheduler.framework.types import Diagnosis, PluginArgs, PodGroupState, PodInfo, PodPhase
from gangsim.scheduler.plugins import names

PREEMPTING_POD = "{}: preempting to accommodate a higher priority pod"
PREEMPTING_PODGROUP = "{}: preempting to accommodate a higher priority podgroup"
PREEMPTION = "preemption: "  # how the FitError shows PostFilter's message
# ``DefaultPreemption.PodGroupPostFilter`` (defaultpreemption/default_preemption.go): a non-empty
# message of the pod group evaluator is returned as "pod group preemption: " + msg
POD_GROUP_PREEMPTION = "pod group preemption: "
_NO_GROUP_VICTIMS = Status(NO_GROUP_VICTIMS_STATUS.code, (POD_GROUP_PREEMPTION + NO_GROUP_VICTIMS_STATUS.message,))
WAP_REFUSAL = "not eligible due to workload aware preemption enabled"
REJECTED_AT_PERMIT = "preempted"


class DefaultPreemption(RepeatablePostFilterPlugin, RepeatablePodGroupPostFilterPlugin):
    NAME = names.DEFAULT_PREEMPTION

    def __init__(self, args: PluginArgs, handle: Handle) -> None:
        self.handle = handle
        self.features = args.features
        self.units = UnitIndex(handle, args.features.generic_workload)
        self.limits = CandidateLimits(args.profile.min_candidate_nodes_percentage, args.profile.min_candidate_nodes_absolute)
        self.evaluator = Evaluator()
        # fast path (FastPath.repeated_failure): PodStrategy's last cluster-of-equals verdict
        self._equals_memo: list | None = [None, 0, 0, ""] if args.config.effective_fast_path.repeated_failure else None

    # ---- one pod -----------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> PostFilterResult:
        if self.features.generic_workload and pod.group_key:
            # §5 step 0: a pod with spec.schedulingGroup preempts only as its group (§11), whether
            # or not the PodGroup exists (``DefaultPreemption.PostFilter``: SchedulingGroup != nil
            # && EnableGenericWorkload)
            return PostFilterResult(None, PREEMPTION + WAP_REFUSAL)
        res = self.evaluator.preempt(PodStrategy(self.handle, self.units, self.limits, self.handle.rng, pod, diagnosis, self._equals_memo))
        if res.candidate is not None:
            self._actuate_for_pod(pod, res.candidate.row, res.candidate.victims)
        return PostFilterResult(res.nominated_row, PREEMPTION + res.message if res.message else "")

    def post_filter_repeater(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> Callable[[int], PostFilterResult] | None:
        """``RepeatablePostFilterPlugin`` (fast path ``FastPath.pod_runs``): a refusal, or a
        cluster of equals (``PodStrategy.without_victims``), repeats with the same result; each
        call's one draw of the candidates' offset is made ``times`` at once (numpy's
        ``integers(n, size=times)`` leaves the generator where ``times`` single draws do:
        tests/scheduler/test_pod_runs.py pins it)."""
        if self.features.generic_workload and pod.group_key:
            refused = PostFilterResult(None, PREEMPTION + WAP_REFUSAL)
            return lambda times: refused
        verdict = PodStrategy(self.handle, self.units, self.limits, self.handle.rng, pod, diagnosis, self._equals_memo).without_victims()
        if verdict is None:
            return None
        res, draws = verdict
        result = PostFilterResult(res.nominated_row, PREEMPTION + res.message if res.message else "")
        rng = self.handle.rng

        def repeat(times: int) -> PostFilterResult:
            if draws and rng is not None:
                rng.integers(draws, size=times)
            return result

        return repeat

    def _actuate_for_pod(self, preemptor: PodInfo, row: int, victims: list[PodInfo]) -> None:
        """§5 step 6: DisruptionTarget + delete each victim (one waiting at Permit is rejected
        instead), then clear lower-priority nominations to the node."""
        fresh = [v for v in victims if not v.terminating]  # never counted twice (INTERFACE rule 9)
        self._evict(fresh, preemptor.key, preemptor.priority, PREEMPTING_POD.format(preemptor.spec.scheduler_name), "pod")
        nominator = self.handle.nominator
        for q in nominator.pods_for_row(row):
            if q.priority < preemptor.priority and q.uid != preemptor.uid:
                nominator.clear(q)
        self.handle.bump()

    # ---- one PodGroup ------------------------------------------------------------------------
    def pod_group_post_filter(self, group: PodGroupState, pods: list[PodInfo], status: Status, *, only_if_more_than: int | None = None) -> PodGroupPostFilterResult | None:
        """Workload-aware preemption for a failed PodGroup cycle. With ``only_if_more_than``
        (KEP-4671 PartialSuccess, off by default), a plan is acted on only when it places more
        pods than that; otherwise nothing happens and None is returned."""
        res = self.evaluator.preempt(PodGroupStrategy(self.handle, self.units, group, pods))
        res.status = _group_status(res.status)
        if only_if_more_than is not None:
            if res.status.code != Code.SUCCESS or len(res.placed) <= only_if_more_than:
                return None
            if res.victims:
                self._actuate_for_group(group, res)
            return PodGroupPostFilterResult(res.status, res.nominations, len(res.placed))
        log = self.handle.log
        log.count("podgroup_preemption_attempts")
        if res.status.code != Code.SUCCESS:
            return PodGroupPostFilterResult(res.status, None)
        if res.victims:
            log.count("podgroup_preemption_victims", sum(len(u.pods) for u in res.victims))
            self._actuate_for_group(group, res)
        return PodGroupPostFilterResult(res.status, res.nominations, len(res.placed))

    def pod_group_post_filter_repeater(self, group: PodGroupState, pods: list[PodInfo], status: Status) -> Callable[[int], PodGroupPostFilterResult] | None:
        """``RepeatablePodGroupPostFilterPlugin`` (fast path ``FastPath.bulk_retries``): a group
        that may not preempt, or a cluster with no pod of lower priority (``PodGroupStrategy.
        without_victims``), fails again with the same result; each call counts one attempt."""
        res = PodGroupStrategy(self.handle, self.units, group, pods).without_victims()
        if res is None:
            return None
        result = PodGroupPostFilterResult(_group_status(res.status), None)
        log = self.handle.log

        def repeat(times: int) -> PodGroupPostFilterResult:
            log.count("podgroup_preemption_attempts", times)
            return result

        return repeat

    def _actuate_for_group(self, st: PodGroupState, res: GroupPreemption) -> None:
        """§11.2 step 8: evict the victims; DisruptionTarget on victim groups; clear
        lower-priority nominations to the nodes the group was promised."""
        handle = self.handle
        priority = st.group.priority if st.group else 0
        scheduler_name = next((p.spec.scheduler_name for p in st.members.values()), "default-scheduler")
        victims = [p for u in res.victims for p in u.pods if not p.terminating]
        self._evict(victims, st.key, priority, PREEMPTING_PODGROUP.format(scheduler_name), "podgroup")
        for kind, key in sorted({("CompositePodGroup" if u.rank == COMPOSITE_RANK else "PodGroup", u.group_key) for u in res.victims if u.group_key}):
            handle.log.event(handle.cluster.now, kind, key, "", EventReason.DISRUPTION_TARGET, f"DisruptionTarget: preempted by podgroup {st.key}")
        for row in sorted({row for _, row in res.placed}):
            for q in handle.nominator.pods_for_row(row):
                if q.priority < priority and q.group_key != st.key:
                    handle.nominator.clear(q)
        handle.bump()

    def _evict(self, victims: list[PodInfo], preemptor: str, priority: int, message: str, kind: str) -> None:
        """One decision: waiting pods are rejected at Permit, the others deleted (their
        resources held through the grace period)."""
        if not victims:
            return
        handle = self.handle
        names_ = handle.snapshot.nodes.names
        waiting = [v for v in victims if v.phase is PodPhase.WAITING]
        for v in victims:
            if v.phase is not PodPhase.WAITING:
                v.terminating = True
        handle.cluster.preempt(
            [Victim(v, names_[v.node_row] if v.node_row >= 0 else "", handle.victim_priority(v)) for v in victims],
            preemptor,
            priority,
            message,
            preemptor_kind=kind,
        )
        for v in waiting:
            handle.waiting_pods.reject(v, REJECTED_AT_PERMIT, plugin=self.NAME, to_backoff=True)


def _group_status(status: Status) -> Status:
    """The evaluator's status as ``DefaultPreemption.PodGroupPostFilter`` returns it: a non-empty
    message prefixed "pod group preemption: " (every stuck gang of a one-priority cluster gets
    the one text built once)."""
    if status is NO_GROUP_VICTIMS_STATUS:
        return _NO_GROUP_VICTIMS
    if status.message:
        return Status(status.code, (POD_GROUP_PREEMPTION + status.message,), status.plugin)
    return status
