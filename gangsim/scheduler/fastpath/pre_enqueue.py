"""What ``Scheduler.pre_enqueue`` found for an entity's pods, kept on the entity
(``QueuedEntity.pre_enqueue_memo``): a PodGroup entity asked again each time a pod joins it
looks at the new pods only, and with ``FastPath.pre_enqueue_passed`` pods that passed and whose
spec was not updated since are not asked again when every PreEnqueue plugin reads the spec only
(``PreEnqueuePlugin.PRE_ENQUEUE_SPEC_ONLY``)."""

from __future__ import annotations

from dataclasses import dataclass

from gangsim.scheduler.framework.types import PodInfo


@dataclass(slots=True)
class PreEnqueueMemo:
    """What ``Scheduler.pre_enqueue`` found for the first ``count`` pods of an entity."""

    count: int
    last: PodInfo  # the entity's pods[count - 1] then
    runs: list[PodInfo]  # the first pod of each run of pods sharing spec and group
    told: str  # the Gated message every one of those pods was told ("": not known)
    updates: int  # pod spec updates then (an update can change a pod's spec and gates)
    passed: bool  # every one of those pods passed

    def covers(self, pods: list[PodInfo], updates: int) -> bool:
        """Still true for the same first ``count`` pods: they are where they were (pods are
        only appended or removed, so with the last of them still at its place none of them
        went) and no spec changed."""
        n = self.count
        return updates == self.updates and len(pods) >= n and pods[n - 1] is self.last

    def passed_before(self, pods: list[PodInfo], updates: int) -> int:
        """How many of ``pods`` are pods that passed then, with no spec updated since: those up
        to the last one seen then, when it is still there (pods are only appended or removed,
        so the ones before it were all seen; ``FastPath.pre_enqueue_passed``); 0 otherwise."""
        if not self.passed or updates != self.updates:
            return 0
        n = self.count
        if len(pods) >= n and pods[n - 1] is self.last:
            return n
        try:
            return pods.index(self.last) + 1  # (a run's first pods left it: ``peel``)
        except ValueError:
            return 0
