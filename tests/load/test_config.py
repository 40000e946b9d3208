"""KubeSchedulerConfiguration → SchedulerConfig."""

from __future__ import annotations

import pytest

from gangsim.api.config import (
    DEFAULT_SCORE_WEIGHTS,
    FILTER_PLUGINS,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    Profile,
    SchedulerConfig,
    ScoringStrategy,
)

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def config_of(load, body: str) -> SchedulerConfig:
    return load(HEAD + body).config


def test_defaults_without_a_config(load):
    assert load("# empty\n").config == SchedulerConfig()


def test_empty_config_has_one_default_profile(load):
    config = config_of(load, "leaderElection: {leaderElect: false}\nclientConnection: {kubeconfig: x}\nparallelism: 16\n")
    assert config == SchedulerConfig()
    assert config.profiles == (Profile(),)


def test_top_level_fields(load):
    config = config_of(
        load,
        """
        percentageOfNodesToScore: 40
        podInitialBackoffSeconds: 2
        podMaxBackoffSeconds: 20
        podMaxInUnschedulablePodsDuration: 10m
        unschedulablePodsFlushInterval: 15s
        backoffOrderingWindow: 500ms
        popFromBackoffQ: false
        enableProfiling: true
        """.replace("\n        ", "\n").lstrip("\n"),
    )
    assert (config.percentage_of_nodes_to_score, config.pod_initial_backoff_ms, config.pod_max_backoff_ms) == (40, 2000, 20_000)
    assert (config.pod_max_in_unschedulable_ms, config.unschedulable_flush_interval_ms, config.backoff_window_ms) == (600_000, 15_000, 500)
    assert config.pop_from_backoff is False


def test_zero_backoff_allowed(load):
    config = config_of(load, "podInitialBackoffSeconds: 0\npodMaxBackoffSeconds: 0\n")
    assert (config.pod_initial_backoff_ms, config.pod_max_backoff_ms) == (0, 0)


PROFILES = """\
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 50
  plugins:
    multiPoint:
      disabled: [{name: ImageLocality}]
    score:
      disabled: [{name: NodeResourcesBalancedAllocation}]
      enabled: [{name: NodeResourcesFit, weight: 5}, {name: TaintToleration}]
    filter:
      disabled: [{name: TaintToleration}]
    postFilter:
      disabled: [{name: DefaultPreemption}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: NodeResourcesFitArgs
      scoringStrategy:
        type: MostAllocated
        resources: [{name: nvidia.com/gpu, weight: 5}, {name: cpu, weight: 1}]
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 0}
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 5}
  - name: NodeResourcesBalancedAllocation
    args: {resources: [{name: nvidia.com/gpu, weight: 1}]}
  - name: PodTopologySpread
    args: {defaultingType: List}
- schedulerName: gpu-packer
  plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: NodeResourcesFit}]
    multiPoint:
      disabled: [{name: "*"}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
  - name: GangScheduling
    args: {permitTimeoutSeconds: 60, partialSuccess: true, requeueLeftoversWithOldTimestamp: true, opportunisticBatching: false}
"""


def test_profiles(load):
    config = config_of(load, PROFILES)
    first, second = config.profiles
    assert first.scheduler_name == "default-scheduler"
    assert first.percentage_of_nodes_to_score == 50
    assert first.score_weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 5, "PodTopologySpread": 2, "InterPodAffinity": 2}
    assert first.disabled_filters == frozenset({"TaintToleration"})
    assert first.preemption_enabled is False
    assert first.scoring_strategy == ScoringStrategy(MOST_ALLOCATED, (("nvidia.com/gpu", 5), ("cpu", 1)))
    assert first.hard_pod_affinity_weight == 0
    assert (first.min_candidate_nodes_percentage, first.min_candidate_nodes_absolute) == (0, 5)
    assert first.balanced_resources == (("nvidia.com/gpu", 1),)

    assert second.scheduler_name == "gpu-packer"
    assert second.percentage_of_nodes_to_score is None
    assert second.score_weights == {"NodeResourcesFit": 1}  # multiPoint "*" first, then score enables it
    assert second.disabled_filters == frozenset(FILTER_PLUGINS)
    assert second.preemption_enabled is False
    assert second.scoring_strategy == ScoringStrategy(REQUESTED_TO_CAPACITY_RATIO, (("cpu", 1), ("memory", 1)), ((0, 0), (100, 10)))
    assert (config.permit_timeout_ms, config.partial_success, config.requeue_leftovers_with_old_timestamp, config.opportunistic_batching) == (
        60_000,
        True,
        True,
        False,
    )


def test_score_enable_keeps_default_weight(load):
    body = "profiles:\n- plugins:\n    score:\n      disabled: [{name: '*'}]\n      enabled: [{name: NodeAffinity}, {name: InterPodAffinity, weight: 0}]\n"
    (profile,) = config_of(load, body).profiles
    assert profile.score_weights == {"NodeAffinity": DEFAULT_SCORE_WEIGHTS["NodeAffinity"], "InterPodAffinity": 2}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            "profiles:\n- schedulerName: a\n- schedulerName: a\n",
            't.yaml:5: KubeSchedulerConfiguration: profiles[1].schedulerName: Duplicate value: "a": must be unique',
            id="duplicate-profile",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeName}]\n",
            't.yaml:6: KubeSchedulerConfiguration: profiles[0].plugins.score.enabled[0].name: Invalid value: "NodeName": plugin "NodeName" does not extend score plugin',
            id="not-a-score-plugin",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    preFilter:\n      disabled: [{name: Coscheduling}]\n",
            # the list of known plugins is cut so that the printed line stays within 300 characters
            "t.yaml:6: KubeSchedulerConfiguration: profiles[0].plugins.preFilter.disabled[0].name: Invalid value: \"Coscheduling\": unknown plugin (gangsim knows: "
            "DefaultBinder, DefaultPreemption, DynamicResources, GPUDevices, GangScheduling, ImageLocality, InterPodAffinity, NodeAffinity, NodeName…",
            id="unknown-plugin",
        ),
        pytest.param(
            "profiles:\n- plugins:\n    filter:\n      disabled: [{name: NodeResourceFit}]\n",
            't.yaml:6: KubeSchedulerConfiguration: profiles[0].plugins.filter.disabled[0].name: Invalid value: "NodeResourceFit": unknown plugin (did you mean "NodeResourcesFit"?)',
            id="unknown-plugin-near-miss",
        ),
        pytest.param(
            "percentageOfNodesToScore: 101\n",
            "t.yaml:3: KubeSchedulerConfiguration: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
            id="percentage-range",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio}}\n",
            "t.yaml:6: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
            id="ratio-without-shape",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n"
            "        requestedToCapacityRatio:\n          shape:\n          - {utilization: 50, score: 5}\n          - {utilization: 40, score: 10}\n",
            "t.yaml:12: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: "
            "Invalid value: 40: utilization values must be sorted in increasing order",
            id="ratio-shape-order",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {resources: [{name: cpu, weight: 0}]}}\n",
            "t.yaml:6: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 0: resource weight of cpu not in valid range [1, 100]",
            id="resource-weight",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
            "t.yaml:6: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0-100]",
            id="hard-pod-affinity-weight",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResources: [nvidia.com/gpu]}\n",
            "t.yaml:6: KubeSchedulerConfiguration: profiles[0].pluginConfig[0].args.ignoredResources: Unsupported field: gangsim does not model ignoredResources",
            id="unmodelled-arg",
        ),
        pytest.param(
            "unschedulablePodsFlushInterval: often\n",
            't.yaml:3: KubeSchedulerConfiguration: unschedulablePodsFlushInterval: Invalid value: "often": durations must be like 90s, 5m, 1h30m or a number of seconds',
            id="bad-duration",
        ),
        pytest.param(
            "extenders: [{urlPrefix: http://x}]\n",
            "t.yaml:3: KubeSchedulerConfiguration: extenders: Unsupported field: gangsim does not model scheduler extenders",
            id="extenders",
        ),
        pytest.param(
            "profiles:\n- pluginConfig:\n  - name: GangScheduling\n    args: {partialSuccess: true}\n- schedulerName: b\n  pluginConfig:\n"
            "  - name: GangScheduling\n    args: {partialSuccess: false}\n",
            "t.yaml:10: KubeSchedulerConfiguration: profiles[1].pluginConfig[0].args.partialSuccess: Invalid value: false: "
            "GangScheduling args must agree across profiles: gangsim models one GangScheduling configuration",
            id="gang-args-disagree",
        ),
    ],
)
def test_config_errors(load_error, body, message):
    assert load_error(HEAD + body) == message
