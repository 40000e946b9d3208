"""Scheduler configuration: the subset of ``KubeSchedulerConfiguration`` gangsim models, plus the
time constants SEMANTICS.md makes configurable. Pure data with upstream defaults."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from gangsim.api.objects import DEFAULT_SCHEDULER

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

# Score plugin weights of the default profile (SEMANTICS §2.1, default_plugins.go).
DEFAULT_SCORE_WEIGHTS: dict[str, int] = {
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "NodeResourcesFit": 1,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "NodeResourcesBalancedAllocation": 1,
}
# Plugins gangsim knows by name but does not model, because traces carry nothing they act on:
# ImageLocality (no images on nodes), volume plugins (no volumes), NodePorts (host ports are
# rejected at load). PodTopologySpread is modelled for the pods' own constraints; its cluster-level
# default constraints select pods through Services and controllers gangsim has none of.
KNOWN_UNMODELLED_PLUGINS = frozenset(
    {
        "ImageLocality",
        "NodePorts",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
        "SchedulingGates",
        "PrioritySort",
        "DefaultBinder",
    }
)
# gangsim's own GPUDevices (``scheduler.plugins.gpudevices``): a Filter in every profile, a Score
# only when a configuration gives it a weight (upstream has no device-aware score)
GPU_DEVICES = "GPUDevices"
FILTER_PLUGINS = ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit", GPU_DEVICES, "PodTopologySpread", "InterPodAffinity")
SCORE_PLUGINS = frozenset(DEFAULT_SCORE_WEIGHTS) | {GPU_DEVICES}
ALL_PLUGINS = frozenset(FILTER_PLUGINS) | SCORE_PLUGINS | {"DefaultPreemption", "GangScheduling"}


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    type: str = LEAST_ALLOCATED
    resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
    # RequestedToCapacityRatio shape: (utilization 0..100, score 0..10), increasing utilization.
    shape: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Profile:
    scheduler_name: str = DEFAULT_SCHEDULER
    percentage_of_nodes_to_score: int | None = None
    score_weights: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_SCORE_WEIGHTS))
    disabled_filters: frozenset[str] = frozenset()
    scoring_strategy: ScoringStrategy = ScoringStrategy()
    balanced_resources: tuple[tuple[str, int], ...] = (("cpu", 1), ("memory", 1))
    hard_pod_affinity_weight: int = 1
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100
    preemption_enabled: bool = True


@dataclass(frozen=True, slots=True)
class FastPath:
    """gangsim's speed shortcuts, one switch each (``gangsim.scheduler.fastpath``). Each is proven
    to give the reference path's report bytes (tests/golden, tests/scheduler/test_fast_path.py).
    ``SchedulerConfig.opportunistic_batching = False`` turns them all off at once."""

    static_filter_cache: bool = True  # node-static Filter codes cached per static signature
    signature_cache: bool = True  # KEP-5598: Filter codes and raw scores per pod signature
    windowed_search: bool = True  # search only the rows that can hold the wanted feasible nodes (needs signature_cache)
    doomed_pass: bool = True  # decide a failing single-shape PodGroup pass from counts (needs signature_cache)
    # KEP-5732 placement loop: the signature cache, search window and doomed pass over each
    # placement's rows, and placements decided from per-domain counts (needs signature_cache)
    placement_passes: bool = True
    repeated_failure: bool = True  # a pod like one that failed on the unchanged cluster gets its diagnosis (needs signature_cache)
    # a PodGroup attempt whose pods each fail again with their last message is recorded once for
    # the group (the event log's FailureStreak), not pod by pod; a single pod's failure like its
    # last one is recorded in O(1) the same way (``schedule_one.fail``, issue 16: Gavel's lone pods)
    failure_streaks: bool = True
    # the signature cache refreshes the few rows a bind changed on Python scalars (plugins'
    # ``filter_row`` / ``score_row``) instead of numpy over one-element arrays (needs signature_cache)
    row_refresh: bool = True
    # a PodGroup pass that succeeds keeps its tentative placements for the binds that follow,
    # instead of reverting them and assuming the same pods on the same rows again
    keep_placements: bool = True
    # a single-shape PodGroup pass (no KEP-5732 placement) where every pod fits, replayed from
    # per-node counts and score keys as ``placement_passes`` does per placement (needs doomed_pass)
    counted_pass: bool = True
    # a PodGroup event re-asks PreEnqueue for each gated per-pod entity of the group (``pod`` and
    # ``permit``: quadratic in a gang arriving pod by pod); PreEnqueue reads a pod's spec and its
    # group only, so a member sharing the spec of one the same event left gated with the message
    # it already has stays gated with it, and one sharing the spec of one it let go is let go,
    # without asking again
    gated_siblings: bool = True
    # a Job's pods created one after the other with one spec are queued as one entity
    # (``PodRun``); when its first pod fails and the others would fail the same way (the
    # repeated failure, a PostFilter without victims), their attempts are recorded at once, a
    # repeat of the run's last failure once for the run (needs repeated_failure). Under ``gang``
    # and ``permit`` only pods of no PodGroup form runs (issue 16, Gavel-gang: single-pod Jobs)
    pod_runs: bool = True
    # a PodGroup attempt on a scheduler generation unchanged since the group's last attempt, which
    # the doomed pass decided, repeats it: no ``validate``, no pass, the kept per-pod tuples
    # (``fastpath.attempts``; needs doomed_pass)
    repeated_attempts: bool = True
    # issue 16 (SB-50k): a scorer whose raw score reads only the node's static fields (taints,
    # labels: ``SCORE_NODE_STATIC``) keeps it in the signature cache until a static change, so
    # refreshing the rows a bind changed skips it; and when that score is one value on every live
    # node, its NormalizeScore is one value too, added without a per-row array (needs signature_cache)
    static_scores: bool = True
    # (issue 16, NASA-permit) a PodGroup event after the previous one of its group, with nothing
    # changed for the group's first members (all gated alike then): PreEnqueue is asked for the
    # first of them only and the walk starts after them (``fastpath.gated_members``; needs gated_siblings)
    gated_prefix: bool = True
    # (issue 16, Gangs-10k) ``counted_pass`` on a cluster of 1,024 nodes or more: a pass whose
    # searches end within one rotation of the nodes is replayed on the windows they reach, each
    # window's best picked in numpy, instead of a Filter and Score pass per pod
    # (``fastpath.windows``; needs counted_pass)
    counted_windows: bool = True
    # (issue 16, SB-50k) the next pods of a run (``pod_runs``) placed from one look at the
    # signature cache's codes and score totals when their searches cover disjoint blocks of
    # one lap of the rotation and every score is a row's own: each pod's block, best row (and
    # the RNG's tie draw), search start and rows evaluated as its own pass would find them; the
    # binds stay pod by pod (``fastpath.run_pass``; needs signature_cache and pod_runs)
    run_passes: bool = True
    # (issue 16, NASA-permit) GangScheduling's Permit activates a waiting gang's pending pods
    # (quadratic per gang: each member that waits walks its siblings); a walk that left every
    # sibling where activation changes nothing is not repeated while the queue's activation
    # epoch (``SchedulingQueue.activation_epoch``: an entity entered backoffQ, the unschedulable
    # pool or the gated set, or a run of several pods was queued) is unchanged
    sibling_activation: bool = True
    # (issue 16, NASA-permit) GangScheduling's Permit counts the gang's assumed and bound members
    # (``PodGroupState.scheduled_count``, quadratic per gang: each member walks its siblings);
    # when the node table changed exactly once since the gang's previous Permit — the assume of
    # the pod now at Permit — and the members dict is the same, the count is that one's plus one
    permit_counts: bool = True
    # (issue 16, NASA under ``permit`` and ``pod``) pod-by-pod cycles of one shape where every pod
    # finds a node (a gang's pods under ``permit``, a PodRun's under ``pod``) get the rows the
    # counted pass's searches take (``fastpath.counted_searches``: ``rotation.steps`` on the
    # ``counted.layout``), each step checked against the node table; needs doomed_pass
    counted_searches: bool = True
    # (issue 16, RICC-pod) an entity whose pods all passed PreEnqueue, moved again with no pod
    # spec updated since and PreEnqueue plugins that read the spec only (``PRE_ENQUEUE_SPEC_ONLY``:
    # ``pod``'s SchedulingGates), passes without asking them again; only pods added since are asked
    pre_enqueue_passed: bool = True
    # (issue 16, RICC-pod, Gavel-gang) two runs (``PodRun``) of different Jobs that just failed
    # alike (one signature and priority, the same queue state and backoff from now on) and hold
    # consecutive ``seq`` (nothing can sort between them) are joined into one run, so the
    # pending pods of many identical jobs are retried as one entity (needs pod_runs; runs of a
    # PodGroup's pods, under ``pod``, only with PreEnqueue plugins that read the spec only)
    joined_runs: bool = True
    # (issue 16, RICC-pod) a run's failure streak (``failure_streaks``) stays live while its first
    # pods leave it one by one (peeled, then bound or failed on their own): each takes its own
    # repeats out, so the others' next repeat is still recorded once for the run, not pod by pod
    streak_peel: bool = True
    # (issue 16, RICC-gang, Gavel-gang) a PodGroup whose failed attempt the next ones will repeat
    # (``repeated_attempts``' Repeat, a full-scan doomed plan, a PodGroupPostFilter without
    # victims, its failure recorded as a FailureStreak) sleeps in backoffQ without a wake: its
    # retries until the next generation change are accounted in bulk at that change, when
    # something else touches it, at a flush that finds it due, or at the end of the replay
    # (``queue.sleepers``, ``fastpath.bulk``; needs repeated_attempts and failure_streaks)
    bulk_retries: bool = True
    # (issue 16, RICC-gang) a failure streak's pods that fail again with other messages (the node
    # counts of a FitError change with every release), where each pod's similar-events window is
    # full (client-go combined its messages) and open: the new messages are aggregated away like
    # repeats, so the attempt is recorded in the streak too (``EventLog.fail_anew``), not pod by
    # pod (needs failure_streaks)
    renewed_failures: bool = True
    # (issue 16, Gavel-gang) a single pod's failed pass that ``repeated_failure`` replayed, or any
    # failed pass whose diagnosis is the one the last pod like it got on this cluster, takes that
    # pod's PostFilter outcome from the plugins' repeaters (``RepeatablePostFilterPlugin``, one RNG
    # draw each as a call makes) instead of asking them again (``RepeatedFailures.repeated_post_filter``;
    # needs repeated_failure)
    repeated_post_filter: bool = True
    # (issue 16, RICC-gang) a gang of several pod shapes that needs every pod (minCount = its pods)
    # whose first shape in pod order alone does not fit: the pass stops at the first pod that
    # fails, before any pod of another shape, so ``doomed_pass`` decides it from that shape's pods
    # (``schedule_podgroup.doomed_prefix``; needs doomed_pass; not under a KEP-5732 placement)
    doomed_prefix: bool = True


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    profiles: tuple[Profile, ...] = (Profile(),)
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive (SEMANTICS §2.2)
    pod_initial_backoff_ms: int = 1_000
    pod_max_backoff_ms: int = 10_000
    backoff_window_ms: int = 1_000  # backoffQOrderingWindowDuration (SchedulerPopFromBackoffQ)
    pop_from_backoff: bool = True
    unschedulable_flush_interval_ms: int = 30_000
    pod_max_in_unschedulable_ms: int = 300_000
    # GangScheduling (v1.35 alpha Permit barrier): the group-shared Permit deadline.
    permit_timeout_ms: int = 300_000
    # KEP-4671 behaviours not in the shipped code (SEMANTICS §8.5), off by default.
    partial_success: bool = False
    requeue_leftovers_with_old_timestamp: bool = False
    # KEP-5732 feature gate TopologyAwareWorkloadScheduling (alpha, off by default as upstream):
    # the PodGroup cycle runs once per candidate placement (policy variant ``gang+tas``)
    topology_aware_workload_scheduling: bool = False
    # KEP-6012 feature gate CompositePodGroup (alpha, off by default): PodGroups and
    # CompositePodGroups naming a parent form one hierarchy, one queue entity and one cycle
    # (policy variant ``gang+cpg``, which turns TopologyAwareWorkloadScheduling on with it)
    composite_pod_group: bool = False
    # KEP-5598 opportunistic batching and gangsim's other shortcuts: never change a placement.
    opportunistic_batching: bool = True  # False: every FastPath switch off (the reference path)
    fast_path: FastPath = FastPath()

    @property
    def effective_fast_path(self) -> FastPath:
        """The switches in force: all off without opportunistic batching; the search window, the
        doomed pass, the placement passes, the repeated failures, the static scores and the run
        passes read the signature cache, so they are off without it; the bulk retries need the doomed pass, the repeated attempts and
        the failure streaks."""
        if not self.opportunistic_batching:
            return FastPath(**{f.name: False for f in fields(FastPath)})
        f = self.fast_path
        if not f.signature_cache:
            f = replace(f, windowed_search=False, doomed_pass=False, placement_passes=False, repeated_failure=False, static_scores=False, run_passes=False)
        if f.bulk_retries and not (f.doomed_pass and f.repeated_attempts and f.failure_streaks):
            f = replace(f, bulk_retries=False)
        return f

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None

    def with_changes(self, **changes: object) -> "SchedulerConfig":
        return replace(self, **changes)
