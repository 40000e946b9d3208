"""Plugin name → factory (kube's ``framework/plugins/registry.go``). A factory is
``(args: PluginArgs, handle: Handle) -> plugin``; every plugin class is its own factory.

Adding a plugin: one module in this package and one line here; a profile
(:mod:`gangsim.scheduler.profiles` or a KubeSchedulerConfiguration) then names it.
"""

from __future__ import annotations

from collections.abc import Callable

from gangsim.scheduler.framework.handle import Handle
from gangsim.scheduler.framework.interface import Plugin
from gangsim.scheduler.framework.types import PluginArgs
from gangsim.scheduler.plugins import names
from gangsim.scheduler.plugins.defaultpreemption import DefaultPreemption
from gangsim.scheduler.plugins.gangscheduling import GangScheduling
from gangsim.scheduler.plugins.gpudevices import GPUDevices
from gangsim.scheduler.plugins.interpodaffinity import InterPodAffinity
from gangsim.scheduler.plugins.nodeaffinity import NodeAffinity
from gangsim.scheduler.plugins.nodename import NodeName
from gangsim.scheduler.plugins.noderesources import BalancedAllocation, NodeResourcesFit
from gangsim.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from gangsim.scheduler.plugins.podgrouppodscount import PodGroupPodsCount
from gangsim.scheduler.plugins.podtopologyspread import PodTopologySpread
from gangsim.scheduler.plugins.queuesort import PrioritySort
from gangsim.scheduler.plugins.schedulinggates import SchedulingGates
from gangsim.scheduler.plugins.tainttoleration import TaintToleration
from gangsim.scheduler.plugins.topologyaware import TopologyPlacementGenerator

Factory = Callable[[PluginArgs, Handle], Plugin]

REGISTRY: dict[str, Factory] = {
    names.PRIORITY_SORT: PrioritySort,
    names.SCHEDULING_GATES: SchedulingGates,
    names.NODE_UNSCHEDULABLE: NodeUnschedulable,
    names.NODE_NAME: NodeName,
    names.TAINT_TOLERATION: TaintToleration,
    names.NODE_AFFINITY: NodeAffinity,
    names.NODE_RESOURCES_FIT: NodeResourcesFit,
    names.NODE_RESOURCES_BALANCED_ALLOCATION: BalancedAllocation,
    names.GPU_DEVICES: GPUDevices,
    names.POD_TOPOLOGY_SPREAD: PodTopologySpread,
    names.INTER_POD_AFFINITY: InterPodAffinity,
    names.GANG_SCHEDULING: GangScheduling,
    names.DEFAULT_PREEMPTION: DefaultPreemption,
    names.TOPOLOGY_PLACEMENT_GENERATOR: TopologyPlacementGenerator,
    names.POD_GROUP_PODS_COUNT: PodGroupPodsCount,
}
