"""Plugin names exactly as upstream (``pkg/scheduler/framework/plugins/names``)."""

NODE_UNSCHEDULABLE = "NodeUnschedulable"
NODE_NAME = "NodeName"
TAINT_TOLERATION = "TaintToleration"
NODE_AFFINITY = "NodeAffinity"
NODE_RESOURCES_FIT = "NodeResourcesFit"
NODE_RESOURCES_BALANCED_ALLOCATION = "NodeResourcesBalancedAllocation"
INTER_POD_AFFINITY = "InterPodAffinity"
DEFAULT_PREEMPTION = "DefaultPreemption"
GANG_SCHEDULING = "GangScheduling"
SCHEDULING_GATES = "SchedulingGates"
PRIORITY_SORT = "PrioritySort"
GPU_DEVICES = "GPUDevices"  # gangsim's own (``gpudevices``): GPUs one by one
