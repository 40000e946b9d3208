"""The Kubernetes objects gangsim models, already decoded and defaulted.

Frozen, slotted dataclasses: one value per object version. Resource amounts are canonical ints
(see ``quantity``), times are integer milliseconds. ``Source`` remembers where an object was
written so that later errors (and ``validate``) can point at the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement

Resources = dict[str, int]

DEFAULT_SCHEDULER = "default-scheduler"
DEFAULT_TERMINATION_GRACE_MS = 30_000
DEFAULT_RENDEZVOUS_TIMEOUT_MS = 30 * 60_000
DEFAULT_NODE_PODS = 110
# Pod scheduling defaults used by scoring for containers that do not request cpu / memory
# (kube-scheduler ``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000


class PreemptionPolicy(StrEnum):
    PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
    NEVER = "Never"


class PolicyKind(StrEnum):
    BASIC = "basic"
    GANG = "gang"


_GANG = PolicyKind.GANG  # (read per pod: a module name, not ~100 ns through the enum class)


class DisruptionMode(StrEnum):
    SINGLE = "single"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Source:
    file: str
    line: int | None = None
    doc: int = 0

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


NO_SOURCE = Source("<builtin>")


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str  # NoSchedule | PreferNoSchedule | NoExecute

    def __str__(self) -> str:
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        """``v1.Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value  # Equal (an empty key with Equal is rejected at load)


def tolerated(taint: Taint, tolerations: tuple[Toleration, ...]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def first_untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...]) -> Taint | None:
    """``v1helper.FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``: the first
    NoSchedule / NoExecute taint no toleration tolerates."""
    for taint in taints:
        if taint.effect in ("NoSchedule", "NoExecute") and not tolerated(taint, tolerations):
            return taint
    return None


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerm:
    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    label_selector: LabelSelector | None
    namespaces: tuple[str, ...]
    namespace_selector: LabelSelector | None
    topology_key: str


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class Affinity:
    node_required: tuple[NodeSelectorTerm, ...] | None = None
    node_preferred: tuple[PreferredSchedulingTerm, ...] = ()
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()

    @property
    def has_pod_affinity(self) -> bool:
        return bool(
            self.pod_affinity_required
            or self.pod_affinity_preferred
            or self.pod_anti_affinity_required
            or self.pod_anti_affinity_preferred
        )


DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    """``v1.TopologySpreadConstraint``, defaulted as the scheduler reads it (``common.go``
    ``filterTopologySpreadConstraints``): minDomains nil is 1, nodeAffinityPolicy Honor,
    nodeTaintsPolicy Ignore. A nil ``labelSelector`` selects no pod."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    min_domains: int = 1
    node_affinity_policy: str = HONOR
    node_taints_policy: str = IGNORE


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: dict[str, str]
    allocatable: Resources
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    pool: str | None = None
    source: Source = NO_SOURCE
    # the extended resource declared a per-GPU share (``gangsim.dev/gpu-share``; ``api.devices``)
    gpu_share: str = ""

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class NodePool:
    """gangsim's own kind: ``spec.count`` identical nodes named ``<pool>-<i>``. ``topology``
    lays them out in a hierarchy: each ``(label key, n)`` gives every ``n`` consecutive nodes
    one domain, labelled ``key=<last key segment>-<index>`` (``rack=8``: rack-0 for nodes 0–7)."""

    name: str
    count: int
    template: Node
    source: Source = NO_SOURCE
    topology: tuple[tuple[str, int], ...] = ()

    def domain_labels(self, index: int) -> dict[str, str]:
        return {key: f"{key.rsplit('/', 1)[-1]}-{index // n}" for key, n in self.topology}

    def node_name(self, index: int) -> str:
        return f"{self.name}-{index}"


@dataclass(frozen=True, slots=True)
class PodSpec:
    """What scheduling and the job model need of a pod (or a pod template)."""

    requests: Resources
    # cpu / memory requests with kube-scheduler's non-zero defaults for missing container
    # requests: used only by scoring (NodeResourcesFit LeastAllocated et al.).
    nonzero_milli_cpu: int = DEFAULT_MILLI_CPU_REQUEST
    nonzero_memory: int = DEFAULT_MEMORY_REQUEST
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: tuple[Toleration, ...] = ()
    topology_spread: tuple[TopologySpreadConstraint, ...] = ()
    priority_class_name: str = ""
    priority: int = 0
    preemption_policy: PreemptionPolicy = PreemptionPolicy.PREEMPT_LOWER_PRIORITY
    scheduler_name: str = DEFAULT_SCHEDULER
    node_name: str = ""
    scheduling_group: str = ""  # spec.schedulingGroup.podGroupName
    scheduling_gates: tuple[str, ...] = ()
    termination_grace_ms: int = DEFAULT_TERMINATION_GRACE_MS
    duration_ms: int | None = None
    checkpoint_interval_ms: int | None = None
    rendezvous_timeout_ms: int | None = None

    @property
    def gpus(self) -> int:
        return self.requests.get("nvidia.com/gpu", 0)


@dataclass(frozen=True, slots=True)
class Pod:
    namespace: str
    name: str
    spec: PodSpec
    job: str = ""  # owning Job name (same namespace), "" for bare pods
    index: int | None = None  # Job completion index
    source: Source = NO_SOURCE

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class Job:
    """batch/v1 Job: ``parallelism`` pods ``<job>-<index>`` from ``template``."""

    namespace: str
    name: str
    parallelism: int
    template: PodSpec
    source: Source = NO_SOURCE
    # gangsim.dev/pod-creation-interval: the controller creates pod i at arrival + i x interval
    # (real Job controllers create pods in bursts; two Jobs submitted together interleave)
    pod_creation_interval_ms: int = 0
    completions: int | None = None  # spec.completions (None: unset)
    indexed: bool = False  # spec.completionMode == Indexed
    backoff_limit: int | None = None  # spec.backoffLimit as written (None: not enforced, README "Jobs")
    active_deadline_ms: int | None = None  # spec.activeDeadlineSeconds in ms
    # KEP-5547: the PodGroup policy the Job controller compiles for this Job (under GenericWorkload):
    # from spec.scheduling (``workload_explicit``), or the gang it infers for an Indexed Job with
    # parallelism == completions > 1; None: no Workload/PodGroup (pods already name a PodGroup, …)
    workload_policy: PodGroupPolicy | None = None
    workload_explicit: bool = False

    def workload_managed(self, infer: bool) -> bool:
        """Whether the Job controller creates a Workload and PodGroup for it (KEP-5547, GenericWorkload
        on); ``infer``: the v1.36 inference is on (Trace ``jobWorkloads``)."""
        return self.workload_policy is not None and (self.workload_explicit or infer)

    @property
    def waves(self) -> bool:
        """Pods run in waves: ``completions`` is set and differs from ``parallelism`` (each pod is
        then its own unit of work; the controller keeps ``min(parallelism, remaining)`` active)."""
        return self.completions is not None and self.completions != self.parallelism

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def pod_name(self, index: int) -> str:
        return f"{self.name}-{index}"

    def pod_spec(self, index: int) -> PodSpec:
        """The template of pod ``index`` (every pod of a batch/v1 Job shares one)."""
        return self.template

    def pod_specs(self) -> tuple[PodSpec, ...]:
        """Every distinct template this Job's pods use."""
        return (self.template,)


@dataclass(frozen=True, slots=True)
class ControlledJob(Job):
    """A Job a workload controller creates (gangsim.load.controllers), with what that controller
    adds to the Job controller's behaviour: ``owner`` names the workload (``JobSet ml/x``);
    ``start_after`` holds the keys of Jobs whose pods must all run before this one's are created
    (JobSet ``startupPolicy: InOrder``); ``recreate_together``: a failed pod makes the controller
    delete and recreate every pod of the Job (LeaderWorkerSet ``RecreateGroupOnPodRestart``)."""

    owner: str = ""
    start_after: tuple[str, ...] = ()
    recreate_together: bool = False


@dataclass(frozen=True, slots=True)
class OwnedPods(ControlledJob):
    """Pods a workload controller creates itself: LeaderWorkerSet (through its StatefulSets),
    KubeRay, the Kubeflow training operator, Volcano. Each index has its own name and template;
    gangsim's Job controller runs them (a failed pod is recreated under the same name).
    ``template`` is ``members[0]``'s, ``parallelism`` is ``len(members)``."""

    members: tuple[tuple[str, PodSpec], ...] = ()

    def pod_name(self, index: int) -> str:
        return self.members[index][0]

    def pod_spec(self, index: int) -> PodSpec:
        return self.members[index][1]

    def pod_specs(self) -> tuple[PodSpec, ...]:
        return tuple({id(spec): spec for _, spec in self.members}.values())


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: PreemptionPolicy = PreemptionPolicy.PREEMPT_LOWER_PRIORITY
    source: Source = NO_SOURCE

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None
    min_available: int | str | None = None  # int or "NN%"
    max_unavailable: int | str | None = None
    source: Source = NO_SOURCE

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PodGroupPolicy:
    """The parts a PodGroupTemplate and a PodGroup share (copied, not referenced)."""

    kind: PolicyKind = PolicyKind.GANG
    min_count: int = 1
    disruption_mode: DisruptionMode = DisruptionMode.SINGLE
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: PreemptionPolicy | None = None
    topology_keys: tuple[str, ...] = ()

    @property
    def effective_min_count(self) -> int:
        """PlacementFeasible's minCount: ``gang.minCount``, or 1 for ``basic``."""
        return self.min_count if self.kind is _GANG else 1


@dataclass(frozen=True, slots=True)
class PodGroupTemplate:
    name: str
    policy: PodGroupPolicy


@dataclass(frozen=True, slots=True)
class CompositePodGroupTemplate:
    """``scheduling.k8s.io/v1alpha3`` CompositePodGroupTemplate: its policy (``min_count`` is
    ``gang.minGroupCount``) and its children templates."""

    name: str
    policy: PodGroupPolicy
    pod_group_templates: tuple[PodGroupTemplate, ...] = ()
    composite_templates: tuple["CompositePodGroupTemplate", ...] = ()


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    name: str
    templates: tuple[PodGroupTemplate, ...]
    controller_ref: tuple[str, str, str] | None = None  # (apiGroup, kind, name)
    source: Source = NO_SOURCE
    composite_templates: tuple[CompositePodGroupTemplate, ...] = ()  # v1alpha3, gate CompositePodGroup

    @property
    def pod_group_templates(self) -> tuple[PodGroupTemplate, ...]:
        """Every PodGroupTemplate: the top-level ones, or those under the composite templates."""
        out = list(self.templates)
        todo = list(self.composite_templates)
        while todo:
            c = todo.pop(0)
            out.extend(c.pod_group_templates)
            todo.extend(c.composite_templates)
        return tuple(out)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class _Group:
    """What a PodGroup and a CompositePodGroup share: the object key and the group's priority."""

    __slots__ = ()
    namespace: str
    name: str
    policy: PodGroupPolicy

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def priority(self) -> int:
        """``util.PodGroupPriority``: nil is treated as 0 (a CompositePodGroup's alike)."""
        return self.policy.priority or 0


@dataclass(frozen=True, slots=True)
class PodGroup(_Group):
    namespace: str
    name: str
    policy: PodGroupPolicy
    workload_ref: tuple[str, str] | None = None  # (workloadName, templateName)
    rendezvous_timeout_ms: int | None = None
    source: Source = NO_SOURCE
    parent: str | None = None  # spec.parentCompositePodGroupName (v1alpha3, gate CompositePodGroup)


@dataclass(frozen=True, slots=True)
class CompositePodGroup(_Group):
    """``scheduling.k8s.io/v1alpha3`` CompositePodGroup (KEP-6012, SEMANTICS §9): a group of
    PodGroups and CompositePodGroups naming it in ``parentCompositePodGroupName``. ``policy``
    reuses PodGroupPolicy: ``min_count`` is ``gang.minGroupCount`` (counted in child groups)."""

    namespace: str
    name: str
    policy: PodGroupPolicy
    parent: str | None = None
    workload_ref: tuple[str, str] | None = None
    source: Source = NO_SOURCE


Object = Node | Pod | Job | PriorityClass | PodDisruptionBudget | PodGroup | CompositePodGroup | Workload

KIND_OF: dict[type, str] = {
    Node: "Node",
    Pod: "Pod",
    Job: "Job",
    ControlledJob: "Job",
    OwnedPods: "Job",
    PriorityClass: "PriorityClass",
    PodDisruptionBudget: "PodDisruptionBudget",
    PodGroup: "PodGroup",
    CompositePodGroup: "CompositePodGroup",
    Workload: "Workload",
    NodePool: "NodePool",
}

NAMESPACED = frozenset({"Pod", "Job", "PodDisruptionBudget", "PodGroup", "CompositePodGroup", "Workload"})


def object_ref(kind: str, namespace: str, name: str) -> str:
    """How messages name an object: ``Pod ml/train-3``, ``Node gpu-7``."""
    return f"{kind} {namespace}/{name}" if kind in NAMESPACED or namespace else f"{kind} {name}"


__all__ = [
    "Affinity",
    "CompositePodGroup",
    "CompositePodGroupTemplate",
    "ControlledJob",
    "DisruptionMode",
    "Job",
    "LabelSelector",
    "Node",
    "NodePool",
    "NodeSelectorTerm",
    "OwnedPods",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PodGroup",
    "PodGroupPolicy",
    "PodGroupTemplate",
    "PodSpec",
    "PolicyKind",
    "PreemptionPolicy",
    "PreferredSchedulingTerm",
    "PriorityClass",
    "Requirement",
    "Source",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "Workload",
]
