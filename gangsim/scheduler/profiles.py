"""The three policies gangsim compares, as data (SEMANTICS "gangsim's decisions").

- ``pod``: GenericWorkload off. Every pod is its own queue entity; ``schedulingGroup`` ignored.
- ``permit``: v1.35 alpha GangScheduling: PreEnqueue quorum gate + Permit barrier with a
  group-shared deadline; classic per-pod preemption.
- ``gang``: v1.37 beta: PodGroup queue entities, the Workload Scheduling Cycle and
  workload-aware preemption.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    gang_pre_enqueue: bool = False  # GangScheduling PreEnqueue (§4.4)
    permit_barrier: bool = False  # GangScheduling Reserve/Permit (§7)
    group_entities: bool = False  # entity-aware queue + PodGroup cycle (§4.1, §8)
    workload_aware_preemption: bool = False  # §11
    generic_workload: bool = False  # GenericWorkload gate: group-aware victim importance (§5 3d)


POLICIES: dict[str, Policy] = {
    "pod": Policy("pod"),
    "permit": Policy("permit", gang_pre_enqueue=True, permit_barrier=True),
    "gang": Policy(
        "gang",
        gang_pre_enqueue=True,
        group_entities=True,
        workload_aware_preemption=True,
        generic_workload=True,
    ),
}

DEFAULT_POLICY = "gang"
