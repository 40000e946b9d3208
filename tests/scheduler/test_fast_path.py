"""The fast path changes no placement, and stays fast: A/B tests on report bytes with each
shortcut switched off by configuration (``api.config.FastPath``), and non-timing guards."""

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ab import log_facts
from benchmarks import shapes
from builders import NO_BACKOFF, create, make_group, make_job, make_node, make_trace, run
from fakes import FakeClusterAPI
from gangsim.api.config import FastPath, SchedulerConfig
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec, generate, write_jsonl
from gangsim.report import build_report, write_report
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[2]
TRACES = ["deadlock.yaml", "mixed-day.yaml", "victims-in-vain.yaml", "greedy-limit.yaml", "disruption-single.yaml"]
# each shortcut off on its own, then all of them (the reference path)
SWITCHES = {
    "no-static-filter-cache": {"fast_path": FastPath(static_filter_cache=False)},
    "no-signature-cache": {"fast_path": FastPath(signature_cache=False)},
    "no-windowed-search": {"fast_path": FastPath(windowed_search=False)},
    "no-doomed-pass": {"fast_path": FastPath(doomed_pass=False)},
    "no-doomed-prefix": {"fast_path": FastPath(doomed_prefix=False)},
    "no-repeated-failure": {"fast_path": FastPath(repeated_failure=False)},
    "no-failure-streaks": {"fast_path": FastPath(failure_streaks=False)},
    "no-row-refresh": {"fast_path": FastPath(row_refresh=False)},
    "no-keep-placements": {"fast_path": FastPath(keep_placements=False)},
    "no-counted-pass": {"fast_path": FastPath(counted_pass=False)},
    "reference": {"opportunistic_batching": False},
}


def report_bytes(trace, policy: str, tmp_path: Path, name: str, seed: int | None = None, **changes) -> dict[str, bytes]:
    config = trace.config.with_changes(**changes) if changes else trace.config
    out = tmp_path / name
    write_report(build_report(replay(trace, policy, config=config, seed=seed)), out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("name", TRACES)
def test_the_reference_path_writes_the_same_report(name, policy, tmp_path):
    trace = load_trace([ROOT / "traces" / name])
    on = report_bytes(trace, policy, tmp_path, "on")
    off = report_bytes(trace, policy, tmp_path, "off", opportunistic_batching=False)
    assert on == off


def test_every_switch_reaches_the_framework():
    from gangsim.eventlog import EventLog
    from gangsim.scheduler.framework.types import ResourceIndex
    from gangsim.scheduler.profiles import POLICIES
    from gangsim.scheduler.scheduler import Scheduler

    def framework(**changes):
        config = SchedulerConfig().with_changes(**changes)
        sched = Scheduler(config, POLICIES["gang"], ResourceIndex(()), cluster=FakeClusterAPI(), log=EventLog())
        return sched.frameworks["default-scheduler"]

    on = framework()
    assert on.static_cache is not None and on.signatures is not None and on.fast_path.windowed_search and on.fast_path.doomed_pass
    assert framework(**SWITCHES["no-static-filter-cache"]).static_cache is None
    off = framework(**SWITCHES["no-signature-cache"])
    assert off.signatures is None and not off.fast_path.windowed_search and not off.fast_path.doomed_pass  # both read it
    assert not framework(**SWITCHES["no-windowed-search"]).fast_path.windowed_search
    assert not framework(**SWITCHES["no-doomed-pass"]).fast_path.doomed_pass
    assert on.repeated_failures is not None and framework(**SWITCHES["no-repeated-failure"]).repeated_failures is None
    assert off.repeated_failures is None  # it reads the signature cache
    assert on.fast_path.failure_streaks and not framework(**SWITCHES["no-failure-streaks"]).fast_path.failure_streaks
    assert on.row_refresh and not framework(**SWITCHES["no-row-refresh"]).row_refresh
    assert not off.row_refresh  # it refreshes the signature cache
    assert on.fast_path.keep_placements and not framework(**SWITCHES["no-keep-placements"]).fast_path.keep_placements
    ref = framework(**SWITCHES["reference"])
    assert ref.static_cache is None and ref.signatures is None and not ref.row_refresh
    assert ref.fast_path == FastPath(**{name: False for name in FastPath.__dataclass_fields__})


def test_filter_work_per_pod_does_not_grow_with_the_cluster():
    """Pods of one shape on a big cluster: after the first pod only the rows changed by the
    previous bind are filtered again (an O(nodes × pods) path would compute ~1,000 per pod)."""
    log = replay(shapes.scheduling_basic(1000, 2000), "pod")
    pods = sum(1 for p in log.pods if p.bound_ms is not None)
    assert pods == 2000
    assert log.counters["filter_rows_computed"] <= 1000 + 4 * pods
    # what upstream's serial search would evaluate: at least the adaptive node count per pod
    assert log.counters["filter_rows_evaluated"] >= pods * 420
    assert log.counters["batch_hits"] >= pods - 1


def test_gang_cycles_reuse_the_signature_cache():
    log = replay(shapes.gang_shape(500, 100, 8), "gang")
    pods = sum(1 for p in log.pods if p.bound_ms is not None)
    assert pods == 800
    assert log.counters["filter_rows_computed"] <= 500 + 4 * pods


def _congested_trace(tmp_path: Path, seed: int) -> Path:
    """Large gangs, two priorities and node failures on a small cluster: most PodGroup cycles
    fail, many with some pods placed first, and preemption re-runs the group algorithm."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 24, gpus=8), PoolSpec("b", 8, gpus=4)),
        jobs=30,
        hours=2,
        gang_sizes=((1, 0.3), (4, 0.3), (12, 0.2), (24, 0.2)),
        gpus_per_pod=((1, 0.3), (4, 0.3), (8, 0.4)),
        priorities=(("low", 0, 0.6), ("high", 1000, 0.4)),
        duration_median_s=3600,
        node_failures=4,
    )
    path = tmp_path / f"congested-{seed}.jsonl"
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    return path


@pytest.mark.parametrize("switch", sorted(SWITCHES))
@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_each_shortcut_off_gives_the_same_report_on_a_congested_trace(switch, policy, tmp_path):
    trace = load_trace([_congested_trace(tmp_path, 1)])
    trace = replace(trace, horizon_ms=4 * 3_600_000)
    on = report_bytes(trace, policy, tmp_path, "on")
    off = report_bytes(trace, policy, tmp_path, "off", **SWITCHES[switch])
    assert on == off


@pytest.mark.parametrize("seed", [1, 2])
def test_doomed_group_cycles_are_decided_without_filter_and_identically(seed, tmp_path):
    """The doomed pass replays a failed pass on counts: the reports must be the bytes of the
    pass run pod by pod, and the congested trace must actually exercise it."""
    trace = load_trace([_congested_trace(tmp_path, seed)])
    log = replay(trace, "gang")
    assert log.counters["doomed_passes"] >= 50
    on = report_bytes(trace, "gang", tmp_path, "on")
    off = report_bytes(trace, "gang", tmp_path, "off", fast_path=FastPath(doomed_pass=False))
    assert on == off


@pytest.mark.parametrize("shortcut", [True, False])
def test_a_doomed_gang_fails_with_placement_feasible_counts(shortcut):
    """3 eight-GPU nodes, two taken by a running gang; a gang of 4 whole-node pods: one pod fits,
    the next fails and PlacementFeasible says "1 scheduled, 2 remaining": decided from counts
    or pod by pod, the same message, and nothing bound."""
    trace = make_trace(
        *(create(make_node(f"n{i}", cpu=8, gpus=8, memory_gi=64)) for i in range(3)),
        create(make_group("first", 2)),
        create(make_job("first", 2, cpu=1, gpus=8, group="first", duration_s=3600)),
        create(make_group("second", 4), at_s=10),
        create(make_job("second", 4, cpu=1, gpus=8, group="second", duration_s=600), at_s=10),
        horizon_s=60,
        config=SchedulerConfig(fast_path=FastPath(doomed_pass=shortcut)),
    )
    log = run(trace, "gang")
    assert (log.counters["doomed_passes"] > 0) is shortcut
    bound = sorted(p.pod for p in log.pods if p.bound_ms is not None)
    assert bound == ["default/first-0", "default/first-1"]
    group_messages = {m for k, o, m in zip(log.ev_kind, log.ev_object, log.ev_message) if k == "PodGroup" and o == "default/second"}
    # §8.5 path 3: workload-aware preemption's verdict is appended
    assert group_messages == {"minCount (4) cannot be satisfied: 1 scheduled, 2 remaining, pod group preemption: No preemption victims found for incoming preemptor"}
    # submitPodGroupAlgorithmResult: the pod that failed Filter carries its own FitError (the node
    # the first pod was tentatively placed on is full too); the placed pod and the ones never
    # evaluated carry the group's status
    failed = sorted((o, m) for k, o, r, m in zip(log.ev_kind, log.ev_object, log.ev_reason, log.ev_message) if k == "Pod" and r == "FailedScheduling" and o.startswith("default/second"))
    first = {o: m for o, m in failed}
    assert first["default/second-1"] == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    assert first["default/second-0"] == first["default/second-2"] == next(iter(group_messages))
    assert log.podgroup_attempts.get("scheduled") == 1
    assert log.podgroup_attempts.get("unschedulable", 0) >= 1


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.lists(st.integers(1, 8), min_size=1, max_size=6),
    gangs=st.lists(
        st.tuples(st.integers(1, 6), st.integers(1, 4), st.sampled_from((0, 100)), st.integers(0, 30), st.sampled_from(("single", "all"))),
        min_size=1,
        max_size=5,
    ),
)
def test_doomed_passes_decided_from_counts_match_the_pod_by_pod_pass(nodes, gangs):
    """Random clusters and single-shape gangs (pods, cpu, priority, arrival, disruption mode):
    the replay with the doomed pass records exactly what the pod-by-pod pass records."""
    events = [create(make_node(f"n{i}", cpu=cpu, gpus=cpu)) for i, cpu in enumerate(nodes)]
    for g, (pods, cpu, priority, at_s, mode) in enumerate(gangs):
        name = f"g{g}"
        events.append(create(make_group(name, pods, priority=priority, mode=mode), at_s))
        events.append(create(make_job(name, pods, cpu=cpu, gpus=cpu, priority=priority, group=name, duration_s=60, grace_s=5), at_s))
    trace = make_trace(*events, config=NO_BACKOFF, horizon_s=600)
    with_counts = log_facts(replay(trace, "gang", check_invariants=True))
    pod_by_pod = log_facts(replay(trace, "gang", check_invariants=True, config=NO_BACKOFF.with_changes(fast_path=FastPath(doomed_pass=False))))
    assert with_counts == pod_by_pod
    # and with each failed attempt recorded pod by pod (``FastPath.failure_streaks`` off)
    assert with_counts == log_facts(replay(trace, "gang", config=NO_BACKOFF.with_changes(fast_path=FastPath(failure_streaks=False))))


# ---- pod on rigid jobs: a failed pass repeated on the unchanged cluster (fastpath.repeat) ------------
def _rigid_trace(tmp_path: Path, seed: int, priorities: tuple) -> Path:
    """Rigid jobs of up to 48 one- or eight-GPU pods on 16 eight-GPU nodes, arriving faster than
    they finish: under ``pod`` their pods wait one by one, break at the rendezvous timeout and
    are recreated, again and again."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", 16, gpus=8),),
        jobs=40,
        hours=2,
        gang_sizes=((4, 0.3), (16, 0.3), (48, 0.4)),
        gpus_per_pod=((1, 0.6), (8, 0.4)),
        priorities=priorities,
        duration_median_s=3600,
    )
    path = tmp_path / f"rigid-{seed}.jsonl"
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    return path


EQUALS = (("batch", 0, 1.0),)
TWO = (("low", 0, 0.6), ("high", 1000, 0.4))


@pytest.mark.parametrize(("seed", "priorities"), [(1, EQUALS), (2, EQUALS), (3, TWO)], ids=["equals-1", "equals-2", "two-priorities"])
def test_repeated_failures_under_pod_write_the_reference_report(seed, priorities, tmp_path):
    """The pods of one job fail one after the other on the same cluster: the fast path replays
    the first one's diagnosis for the rest (it must actually do so here), and the report is the
    bytes of every pass run in full, with the shortcut off and on the reference path."""
    trace = replace(load_trace([_rigid_trace(tmp_path, seed, priorities)]), horizon_ms=6 * 3_600_000)
    log = replay(trace, "pod")
    assert log.counters["repeated_failures"] >= 200
    assert log.counters["repeated_failures"] < log.counters["scheduling_cycles"]
    on = report_bytes(trace, "pod", tmp_path, "on")
    assert on == report_bytes(trace, "pod", tmp_path, "off", fast_path=FastPath(repeated_failure=False))
    assert on == report_bytes(trace, "pod", tmp_path, "ref", opportunistic_batching=False)


def test_repeated_failures_keep_the_work_counters():
    """A replayed pass counts the rows upstream's search would evaluate, as the pass does."""
    trace = load_trace([ROOT / "traces" / "greedy-limit.yaml"])
    on = replay(trace, "pod")
    off = replay(trace, "pod", config=trace.config.with_changes(fast_path=FastPath(repeated_failure=False)))
    assert off.counters["repeated_failures"] == 0
    for key in ("filter_rows_evaluated", "batch_hits", "scheduling_cycles"):
        assert on.counters[key] == off.counters[key], key


def test_hpc2n_head_under_pod_is_the_same_with_and_without_the_shortcut(tmp_path):
    """The real congested case (PWA HPC2N head through the SWF importer), six days under pod."""
    from golden.cases import SHARED

    src = SHARED / "pwa-hpc2n-2002-head" / "hpc2n.swf"
    if not src.exists():
        pytest.skip("../shared/traces-data/pwa-hpc2n-2002-head is absent")
    from gangsim.load.importers import ImportOptions, records

    path = tmp_path / "hpc2n.jsonl"
    with path.open("wb") as out:
        write_jsonl(records("swf", [str(src)], ImportOptions(limit=600)), out)
    trace = replace(load_trace([path]), horizon_ms=6 * 86_400_000)
    log = replay(trace, "pod", seed=7)
    assert log.counters["repeated_failures"] >= 1000
    on = report_bytes(trace, "pod", tmp_path, "on", seed=7)
    assert on == report_bytes(trace, "pod", tmp_path, "off", seed=7, fast_path=FastPath(repeated_failure=False))
