"""What the scheduler knows about each PodGroup: its object, its member pods (unscheduled,
assumed/waiting at Permit, bound), the Permit deadline and its queue entity (kube's
``PodGroupState``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gangsim.api.objects import PodGroup, PolicyKind
from gangsim.scheduler.framework.types import PodInfo, PodPhase, QueuedEntity


@dataclass(slots=True, eq=False)
class PodGroupState:
    key: str
    group: PodGroup | None = None
    members: dict[int, PodInfo] = field(default_factory=dict)
    waiting: dict[int, PodInfo] = field(default_factory=dict)  # reserved, waiting at Permit
    deadline_ms: int | None = None  # the group-shared Permit deadline (v1.35)
    entity: QueuedEntity | None = None  # gang policy: the group's queue entity
    condition: tuple[str, str, str] | None = None  # (status, reason, message) of PodGroupInitiallyScheduled
    attempts: int = 0

    @property
    def name(self) -> str:
        return self.key.split("/", 1)[1]

    @property
    def all_pods_count(self) -> int:
        """``AllPodsCount``: unscheduled + assumed + bound pods referencing the group."""
        return len(self.members)

    def scheduled_count(self) -> int:
        """Members assumed (waiting at Permit) or bound."""
        return sum(1 for p in self.members.values() if p.phase in (PodPhase.WAITING, PodPhase.BOUND))

    def bound_count(self) -> int:
        return sum(1 for p in self.members.values() if p.phase is PodPhase.BOUND)

    @property
    def min_count(self) -> int:
        return self.group.policy.effective_min_count if self.group else 1

    @property
    def is_gang(self) -> bool:
        return self.group is not None and self.group.policy.kind is PolicyKind.GANG

    @property
    def initially_scheduled(self) -> bool:
        return self.condition is not None and self.condition[0] == "True"
