"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) → ``api.config.SchedulerConfig``.

The subset gangsim models (INTERFACE, SEMANTICS §2.2), plus gangsim's own top-level time keys.
Harmless keys (leader election, client connection, bind addresses…) are ignored; unknown keys
and plugin names are errors. Plugin sets apply ``multiPoint`` first, then the specific extension
points, as upstream does; a score plugin enabled without a weight keeps its default weight (1 for
a plugin without one), and weight 0 means 1, as the framework does.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangsim.api.config import (
    ALL_PLUGINS,
    DEFAULT_SCORE_WEIGHTS,
    FILTER_PLUGINS,
    SCORE_PLUGINS,
    KNOWN_UNMODELLED_PLUGINS,
    LEAST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    SCORING_STRATEGIES,
    Profile,
    SchedulerConfig,
    ScoringStrategy,
)
from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.load.limits import MAX_DURATION_MS, check_duration_ms
from gangsim.api.objects import DEFAULT_SCHEDULER, Source
from gangsim.errors import InputError, invalid, required
from gangsim.load.fields import Obj, duplicate, known_names, shown
from gangsim.load.meta import check_type
from gangsim.load.podspec import check_resource_name

CONFIG_KIND = "KubeSchedulerConfiguration"
_HARMLESS = {
    "apiVersion", "kind", "metadata", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
    "enableContentionProfiling", "healthzBindAddress", "metricsBindAddress", "delayCacheUntilActive",
}  # fmt: skip
_MODELLED = {"percentageOfNodesToScore", "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles"}
# gangsim extension keys → SchedulerConfig field (durations in ms)
_DURATIONS = {
    "podMaxInUnschedulablePodsDuration": "pod_max_in_unschedulable_ms",
    "unschedulablePodsFlushInterval": "unschedulable_flush_interval_ms",
    "backoffOrderingWindow": "backoff_window_ms",
}
EXTENSION_POINTS = (
    "multiPoint", "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve",
    "permit", "preBind", "bind", "postBind", "placementGenerate", "placementScore", "podGroupPostFilter",
)  # fmt: skip
KNOWN_PLUGINS = ALL_PLUGINS | KNOWN_UNMODELLED_PLUGINS
_ARGS_HEADER = {"apiVersion", "kind"}
_GANG_ARGS = {
    "permitTimeoutSeconds": "permit_timeout_ms",
    "partialSuccess": "partial_success",
    "requeueLeftoversWithOldTimestamp": "requeue_leftovers_with_old_timestamp",
    "opportunisticBatching": "opportunistic_batching",
    # the TopologyAwareWorkloadScheduling feature gate (KEP-5732; upstream a --feature-gates flag)
    "topologyAwareWorkloadScheduling": "topology_aware_workload_scheduling",
    # the CompositePodGroup feature gate (KEP-6012); needs topologyAwareWorkloadScheduling
    "compositePodGroup": "composite_pod_group",
}
# algorithm_podgroup.go, compositePodGroupSchedulingAlgorithm: a composite hierarchy is always
# scheduled by the placement loop ("CPG requires TopologyAwareWorkloadScheduling feature to be
# enabled"); gangsim refuses the combination the newest code does not support
MSG_CPG_NEEDS_TAS = "CPG requires TopologyAwareWorkloadScheduling feature to be enabled"


def decode_config(raw: Mapping, source: Source) -> SchedulerConfig:
    """One KubeSchedulerConfiguration document; errors are located at ``source``."""
    try:
        check_type(raw, source.line, allowed=frozenset({CONFIG_KIND}))
        return _Decoder().config(Obj(raw, "", source.line))
    except InputError as exc:
        raise exc.located(file=source.file, line=source.line, obj=CONFIG_KIND) from None


def _range(o: Obj, key: str, lo: int, hi: int | None, default: int | None = None) -> int | None:
    value = o.int(key)
    if value is None:
        return default
    if hi is None and key.endswith("Seconds"):
        hi = MAX_DURATION_MS // 1000  # a duration in seconds: at most 100 years
    if value < lo or (hi is not None and value > hi):
        bound = f"[{lo}-{hi}]" if hi is not None else f"[{lo}, inf)"
        raise o.error(key, invalid(o.fp(key), value, f"not in valid range {bound}"))
    return value


class _Decoder:
    def __init__(self) -> None:
        self.gang: dict[str, object] = {}

    def config(self, doc: Obj) -> SchedulerConfig:
        doc.check_keys(_HARMLESS | _MODELLED | set(_DURATIONS) | {"popFromBackoffQ"}, {"extenders": "gangsim does not model scheduler extenders"})
        changes: dict[str, object] = {}
        changes["percentage_of_nodes_to_score"] = _range(doc, "percentageOfNodesToScore", 0, 100, 0)
        initial = _range(doc, "podInitialBackoffSeconds", 0, None, 1)
        maximum = _range(doc, "podMaxBackoffSeconds", 0, None, 10)
        if maximum and maximum < initial:
            raise doc.error("podMaxBackoffSeconds", invalid("podMaxBackoffSeconds", maximum, "must be greater than or equal to PodInitialBackoffSeconds"))
        changes["pod_initial_backoff_ms"] = initial * 1000
        changes["pod_max_backoff_ms"] = maximum * 1000
        _range(doc, "parallelism", 1, None)
        for key, attr in _DURATIONS.items():
            if key in doc:
                try:
                    ms = parse_duration_ms(doc.raw(key))
                except DurationError as exc:
                    raise doc.error(key, invalid(key, shown(doc.raw(key)), str(exc))) from None
                changes[attr] = check_duration_ms(ms, key, line=doc.ln(key), raw=doc.raw(key))
        if "popFromBackoffQ" in doc:
            changes["pop_from_backoff"] = doc.bool("popFromBackoffQ")
        profiles: list[Profile] = []
        for p in doc.objs("profiles"):
            profile = self.profile(p)
            if any(q.scheduler_name == profile.scheduler_name for q in profiles):
                raise p.error("schedulerName", duplicate(p.fp("schedulerName"), profile.scheduler_name))
            profiles.append(profile)
        changes["profiles"] = tuple(profiles) or (Profile(),)
        changes.update(self.gang)
        return SchedulerConfig().with_changes(**changes)

    # --- profiles ------------------------------------------------------------------------------

    def profile(self, p: Obj) -> Profile:
        p.check_keys({"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"})
        fields: dict[str, object] = {
            "scheduler_name": p.str("schedulerName", DEFAULT_SCHEDULER),
            "percentage_of_nodes_to_score": _range(p, "percentageOfNodesToScore", 0, 100),
        }
        weights = dict(DEFAULT_SCORE_WEIGHTS)
        disabled: set[str] = set()
        preemption = [True]
        plugins = p.obj("plugins")
        if plugins is not None:
            plugins.check_keys(set(EXTENSION_POINTS))
            for point in EXTENSION_POINTS:  # multiPoint first, then the specific points override it
                plugin_set = plugins.obj(point)
                if plugin_set is not None:
                    self.plugin_set(plugin_set, point, weights, disabled, preemption)
        fields.update(score_weights=weights, disabled_filters=frozenset(disabled), preemption_enabled=preemption[0])
        seen: set[str] = set()
        for pc in p.objs("pluginConfig"):
            pc.check_keys({"name", "args"})
            name = self.plugin_name(pc, allow_all=False)
            if name in seen:
                raise pc.error("name", duplicate(pc.fp("name"), name))
            seen.add(name)
            args = pc.obj("args") or Obj({}, pc.fp("args"), pc.line)
            fields.update(self.plugin_args(name, args))
        return Profile(**fields)

    def plugin_name(self, o: Obj, *, allow_all: bool) -> str:
        name = o.str("name", req=True)
        if name == "*" and allow_all:
            return name
        if name not in KNOWN_PLUGINS:
            raise o.error("name", invalid(o.fp("name"), name, f"unknown plugin ({known_names(name, sorted(KNOWN_PLUGINS), 'gangsim knows')})"))
        return name

    def plugin_set(self, s: Obj, point: str, weights: dict[str, int], disabled: set[str], preemption: list[bool]) -> None:
        s.check_keys({"enabled", "disabled"})
        for d in s.objs("disabled"):
            d.check_keys({"name"})
            name = self.plugin_name(d, allow_all=True)
            if point in ("multiPoint", "score"):
                if name == "*":
                    weights.clear()
                weights.pop(name, None)
            if point in ("multiPoint", "filter"):
                disabled.update(FILTER_PLUGINS if name == "*" else {name} & set(FILTER_PLUGINS))
            if point in ("multiPoint", "postFilter") and name in ("*", "DefaultPreemption"):
                preemption[0] = False
        for e in s.objs("enabled"):
            e.check_keys({"name", "weight"})
            name = self.plugin_name(e, allow_all=False)
            weight = e.int("weight", 0, lo=0)
            if name in KNOWN_UNMODELLED_PLUGINS:
                continue
            if point == "score" and name not in SCORE_PLUGINS:
                raise e.error("name", invalid(e.fp("name"), name, f'plugin "{name}" does not extend score plugin'))
            if point == "filter" and name not in FILTER_PLUGINS:
                raise e.error("name", invalid(e.fp("name"), name, f'plugin "{name}" does not extend filter plugin'))
            if point in ("multiPoint", "score") and name in SCORE_PLUGINS:
                weights[name] = weight or DEFAULT_SCORE_WEIGHTS.get(name, 1)
            if point in ("multiPoint", "filter"):
                disabled.discard(name)
            if point in ("multiPoint", "postFilter") and name == "DefaultPreemption":
                preemption[0] = True

    # --- plugin args ---------------------------------------------------------------------------

    def plugin_args(self, name: str, args: Obj) -> dict[str, object]:
        if name == "NodeResourcesFit":
            args.check_keys(_ARGS_HEADER | {"scoringStrategy"}, {
                "ignoredResources": "gangsim does not model ignoredResources",
                "ignoredResourceGroups": "gangsim does not model ignoredResourceGroups",
            })  # fmt: skip
            strategy = args.obj("scoringStrategy")
            return {"scoring_strategy": self.scoring_strategy(strategy)} if strategy is not None else {}
        if name == "NodeResourcesBalancedAllocation":
            args.check_keys(_ARGS_HEADER | {"resources"})
            return {"balanced_resources": _resources(args)} if "resources" in args else {}
        if name == "InterPodAffinity":
            args.check_keys(_ARGS_HEADER | {"hardPodAffinityWeight"}, {"ignorePreferredTermsOfExistingPods": "gangsim does not model ignorePreferredTermsOfExistingPods"})
            weight = _range(args, "hardPodAffinityWeight", 0, 100)
            return {} if weight is None else {"hard_pod_affinity_weight": weight}
        if name == "DefaultPreemption":
            args.check_keys(_ARGS_HEADER | {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"})
            out: dict[str, object] = {}
            pct = _range(args, "minCandidateNodesPercentage", 0, 100)
            absolute = _range(args, "minCandidateNodesAbsolute", 0, None)
            if pct is not None:
                out["min_candidate_nodes_percentage"] = pct
            if absolute is not None:
                out["min_candidate_nodes_absolute"] = absolute
            if pct == 0 and absolute == 0:
                raise args.error("minCandidateNodesAbsolute", invalid(args.path, "0, 0", "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be both zero"))
            return out
        if name == "GangScheduling":
            args.check_keys(_ARGS_HEADER | set(_GANG_ARGS))
            for key, attr in _GANG_ARGS.items():
                if key not in args:
                    continue
                value: object = _range(args, key, 0, None) * 1000 if key == "permitTimeoutSeconds" else args.bool(key)
                if attr in self.gang and self.gang[attr] != value:
                    raise args.error(key, invalid(args.fp(key), args.raw(key), "GangScheduling args must agree across profiles: gangsim models one GangScheduling configuration"))
                self.gang[attr] = value
            if self.gang.get("composite_pod_group") and not self.gang.get("topology_aware_workload_scheduling"):
                raise args.error("compositePodGroup", invalid(args.fp("compositePodGroup"), True, MSG_CPG_NEEDS_TAS))
            return {}
        if name == "PodTopologySpread":
            # defaultConstraints (and defaultingType: System's) apply only to pods that Services,
            # ReplicaSets or StatefulSets select (``buildDefaultConstraints``): gangsim has none, so
            # they never apply; accepted and checked for shape only
            args.check_keys(_ARGS_HEADER | {"defaultConstraints", "defaultingType"})
            args.enum("defaultingType", ("System", "List"), "System")
            list(args.objs("defaultConstraints"))
        elif name == "NodeAffinity":
            args.check_keys(_ARGS_HEADER, {"addedAffinity": "gangsim does not model NodeAffinity addedAffinity"})
        elif name in ALL_PLUGINS:
            args.check_keys(_ARGS_HEADER)
        return {}  # plugins gangsim knows but does not model: their args are accepted and ignored

    def scoring_strategy(self, s: Obj) -> ScoringStrategy:
        s.check_keys({"type", "resources", "requestedToCapacityRatio"})
        kind = s.enum("type", SCORING_STRATEGIES, LEAST_ALLOCATED)
        resources = _resources(s) if "resources" in s else ScoringStrategy().resources
        shape: list[tuple[int, int]] = []
        ratio = s.obj("requestedToCapacityRatio")
        if ratio is not None:
            ratio.check_keys({"shape"})
            for point in ratio.objs("shape"):
                point.check_keys({"utilization", "score"})
                utilization = _range(point, "utilization", 0, 100, 0)
                score = _range(point, "score", 0, 10, 0)
                if shape and utilization <= shape[-1][0]:
                    raise point.error("utilization", invalid(point.fp("utilization"), utilization, "utilization values must be sorted in increasing order"))
                shape.append((utilization, score))
        if kind == REQUESTED_TO_CAPACITY_RATIO and not shape:
            owner = ratio or s
            raise owner.error("shape", required(s.fp("requestedToCapacityRatio.shape"), "at least one point must be specified"))
        return ScoringStrategy(kind, resources, tuple(shape))


def _resources(o: Obj) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for r in o.objs("resources"):
        r.check_keys({"name", "weight"})
        name = check_resource_name(r.str("name", req=True), r.fp("name"), r.ln("name"), node=True)
        weight = r.int("weight", 1)
        if not 1 <= weight <= 100:
            raise r.error("weight", invalid(r.fp("weight"), weight, f"resource weight of {name} not in valid range [1, 100]"))
        out.append((name, weight))
    return tuple(out)
