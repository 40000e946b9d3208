"""The per-pod reads of a PodGroup attempt done at C speed (issue 16: a stuck 256-pod gang is
retried hundreds of thousands of times) give what the plain loops give: ``validate`` (a pod
with the spec object the pod before it passed with is not checked again) against the
per-pod loop of ``Scheduler.validatePodGroup`` (schedule_one_podgroup.go) it replaced,
``scheduled_count``/``scheduled_members`` and ``pending_pods`` against their comprehensions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_group
from gangsim.api.config import Profile, SchedulerConfig
from gangsim.errors import go_quote as q
from gangsim.scheduler.framework.types import PodGroupState, PodPhase
from gangsim.scheduler.schedule_podgroup import (
    MSG_PREEMPTION_POLICY,
    MSG_PREEMPTION_POLICY_PODS,
    MSG_PRIORITY,
    MSG_PROFILE,
    MSG_SCHEDULER_NAME,
    pending_pods,
    validate,
)
from scheduler.harness import harness, pod, pod_info

CONFIG = SchedulerConfig(profiles=(Profile(), Profile(scheduler_name="batch")))
POLICIES = ("PreemptLowerPriority", "Never")


def reference_validate(h, st: PodGroupState, pods) -> str:
    """The per-pod loop as it was before (the readable reference)."""
    group = st.group
    first = pods[0]
    group_priority = group.priority if group else 0
    group_policy = group.policy.preemption_policy if group else None
    scheduled = [m for m in st.members.values() if m.phase in (PodPhase.BOUND, PodPhase.WAITING)]
    for p in pods + scheduled:
        if p.spec.scheduler_name != first.spec.scheduler_name:
            return MSG_SCHEDULER_NAME.format(q(p.spec.scheduler_name), q(p.name), q(first.spec.scheduler_name), q(first.name))
        if p.priority != group_priority:
            return MSG_PRIORITY.format(p.priority, q(p.name), group_priority, q(st.key))
        if group_policy is not None:
            if p.preemption_policy is not group_policy:
                return MSG_PREEMPTION_POLICY.format(p.preemption_policy.value, q(p.name), group_policy.value, q(st.key))
        elif p.preemption_policy is not first.preemption_policy:
            return MSG_PREEMPTION_POLICY_PODS.format(p.preemption_policy.value, q(p.name), first.preemption_policy.value, q(first.name))
    if h.framework_for(first.spec.scheduler_name) is None:
        return MSG_PROFILE.format(first.spec.scheduler_name)
    return ""


SPEC = st.tuples(st.sampled_from([0, 0, 0, 5]), st.sampled_from(["default-scheduler", "default-scheduler", "batch", "other"]), st.sampled_from(POLICIES))
MEMBER = st.tuples(SPEC, st.sampled_from([PodPhase.PENDING, PodPhase.WAITING, PodPhase.BOUND, PodPhase.ENDED]), st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    members=st.lists(MEMBER, min_size=1, max_size=8),
    group_priority=st.sampled_from([None, 0, 5]),
    group_policy=st.sampled_from([None, *POLICIES]),
    shared=st.booleans(),
)
def test_validate_and_the_counts_match_the_per_pod_loops(members, group_priority, group_policy, shared):
    sched, _ = harness(policy="gang", config=CONFIG)
    st_ = PodGroupState("default/pg", make_group("pg", 2, priority=group_priority, preemption_policy=group_policy))
    specs: dict = {}
    infos = []
    for i, ((priority, scheduler, policy), phase, terminating) in enumerate(members):
        made = pod(f"p{i}", priority=priority, preemption_policy=policy, scheduler_name=scheduler, group="pg")
        info = pod_info(sched, made)
        if shared:  # a Job's pods share their template's spec object
            info.spec = specs.setdefault((priority, scheduler, policy), info.spec)
        info.phase, info.terminating = phase, terminating
        st_.members[info.uid] = info
        infos.append(info)
    queued = [p for p in infos if p.phase is PodPhase.PENDING and not p.terminating]
    assert pending_pods(infos) == [p for p in infos if p.phase is PodPhase.PENDING]
    assert st_.scheduled_count() == sum(1 for p in infos if p.phase in (PodPhase.WAITING, PodPhase.BOUND))
    assert st_.scheduled_members() == [p for p in infos if p.phase in (PodPhase.WAITING, PodPhase.BOUND)]
    if queued:
        assert validate(sched, st_, queued) == reference_validate(sched, st_, queued)
