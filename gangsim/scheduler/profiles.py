"""The three policies gangsim compares, as data (SEMANTICS "gangsim's decisions"): feature gates
and the plugins enabled at each extension point, as a KubeSchedulerConfiguration's ``plugins``
section would list them. The user's KubeSchedulerConfiguration profile (``api.config.Profile``)
then disables plugins, sets score weights and plugin args on top.

- ``pod``: GenericWorkload off. Every pod is its own queue entity; ``schedulingGroup`` ignored.
- ``permit``: v1.35 alpha GangScheduling: PreEnqueue quorum gate + Permit barrier with a
  group-shared deadline; classic per-pod preemption.
- ``gang``: v1.37 beta: PodGroup queue entities, the Workload Scheduling Cycle and
  workload-aware preemption.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangsim.api.config import Profile
from gangsim.scheduler.framework.types import Features
from gangsim.scheduler.plugins import names as n

# the default profile's plugins (SEMANTICS §2.1, ``apis/config/v1/default_plugins.go``), in order
DEFAULT_PLUGINS: dict[str, tuple[str, ...]] = {
    "queueSort": (n.PRIORITY_SORT,),
    "preEnqueue": (n.SCHEDULING_GATES,),
    "preFilter": (n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY),
    "filter": (n.NODE_UNSCHEDULABLE, n.NODE_NAME, n.TAINT_TOLERATION, n.NODE_AFFINITY, n.NODE_RESOURCES_FIT, n.GPU_DEVICES, n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY),
    "postFilter": (n.DEFAULT_PREEMPTION,),
    "preScore": (n.POD_TOPOLOGY_SPREAD, n.NODE_RESOURCES_BALANCED_ALLOCATION),
    "score": (n.TAINT_TOLERATION, n.NODE_AFFINITY, n.NODE_RESOURCES_FIT, n.POD_TOPOLOGY_SPREAD, n.INTER_POD_AFFINITY, n.NODE_RESOURCES_BALANCED_ALLOCATION),
}
# score plugins the default profile leaves off that a profile may enable with a weight:
# GPUDevices (gangsim's own device-level packing; upstream has no device-aware score)
OPTIONAL_SCORERS: tuple[str, ...] = (n.GPU_DEVICES,)


# TopologyAwareWorkloadScheduling (KEP-5732, SEMANTICS §2.1/§8.8): the placement plugins a profile
# gains when the gate is on with the PodGroup cycle, and their placementScore weights
TAS_PLUGINS: dict[str, tuple[str, ...]] = {
    "placementGenerate": (n.TOPOLOGY_PLACEMENT_GENERATOR,),
    "placementScore": (n.POD_GROUP_PODS_COUNT, n.NODE_RESOURCES_FIT),
}
PLACEMENT_SCORE_WEIGHTS: dict[str, int] = {n.POD_GROUP_PODS_COUNT: 1, n.NODE_RESOURCES_FIT: 1}


@dataclass(frozen=True, slots=True)
class Policy:
    name: str
    features: Features = Features()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)  # plugins added per extension point

    def plugins(self, profile: Profile, *, topology_aware: bool = False) -> dict[str, tuple[str, ...]]:
        """Plugin names per extension point for one user profile: score plugins in the profile's
        weight order with weight > 0; disabled Filter plugins and a disabled DefaultPreemption
        dropped everywhere they appear; the placement plugins with ``topology_aware`` (the
        TopologyAwareWorkloadScheduling gate; only with the PodGroup cycle)."""
        out = {point: tuple(names) for point, names in DEFAULT_PLUGINS.items()}
        extra = dict(self.extra)
        if topology_aware and self.features.workload_scheduling_cycle:
            extra.update(TAS_PLUGINS)
        for point, names in extra.items():
            out[point] = out.get(point, ()) + names
        off = set(profile.disabled_filters)
        if not profile.preemption_enabled:
            off.add(n.DEFAULT_PREEMPTION)
        scorers = set(out["score"]) | set(OPTIONAL_SCORERS)
        out["score"] = tuple(name for name, weight in profile.score_weights.items() if weight > 0 and name in scorers)
        for point in ("filter", "preFilter", "postFilter", "podGroupPostFilter"):
            if point in out:
                out[point] = tuple(name for name in out[point] if name not in off)
        return out


POLICIES: dict[str, Policy] = {
    "pod": Policy("pod"),
    "permit": Policy(
        "permit",
        Features(gang_scheduling=True),
        {"preEnqueue": (n.GANG_SCHEDULING,), "reserve": (n.GANG_SCHEDULING,), "permit": (n.GANG_SCHEDULING,)},
    ),
    "gang": Policy(
        "gang",
        Features(gang_scheduling=True, workload_scheduling_cycle=True, workload_aware_preemption=True, generic_workload=True),
        {"preEnqueue": (n.GANG_SCHEDULING,), "placementFeasible": (n.GANG_SCHEDULING,), "podGroupPostFilter": (n.DEFAULT_PREEMPTION,)},
    ),
}
