"""GPUDevices (gangsim's own plugin, issue 14): GPUs as devices with ids, shares of one GPU.

Outcomes asserted: which GPU each pod got (the pods table's ``devices``), which pod stays
pending and why, which victim preemption picks and that the dry run leaves the other pods on
their GPUs, the kubelet's admission, the fast path equal to the reference path on a shared-GPU
trace, and bad ``gangsim.dev/gpu-share`` annotations reported on one line.
"""

from __future__ import annotations

import random
import textwrap

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gangsim.api.devices import assignable, pick
from gangsim.errors import InputError
from gangsim.load import load_trace
from gangsim.report import build_report
from gangsim.sim.replay import replay

SHARE = "alibaba.com/gpu-milli"


def node(name: str, gpus: int, *, share: bool = True, milli: int | None = None) -> str:
    ann = f"annotations: {{gangsim.dev/gpu-share: {SHARE}}}, " if share else ""
    milli = gpus * 1000 if milli is None else milli
    return textwrap.dedent(f"""\
        ---
        apiVersion: v1
        kind: Node
        metadata: {{{ann}name: {name}}}
        status: {{allocatable: {{cpu: "64", memory: 256Gi, nvidia.com/gpu: "{gpus}", {SHARE}: "{milli}"}}}}
        """)


def pod(name: str, *, milli: int = 0, gpus: int = 0, at: str = "0s", duration: str | None = None, priority: str = "", node_name: str = "") -> str:
    limits = {}
    if gpus:
        limits = {"nvidia.com/gpu": gpus, SHARE: 1000 * gpus}
    elif milli:
        limits = {SHARE: milli}
    lim = ", ".join(f'{k}: "{v}"' for k, v in limits.items())
    ann = f"gangsim.dev/arrival: {at}" + (f", gangsim.dev/duration: {duration}" if duration else "")
    extra = (f"priorityClassName: {priority}, " if priority else "") + (f"nodeName: {node_name}, " if node_name else "")
    return textwrap.dedent(f"""\
        ---
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}, annotations: {{{ann}}}}}
        spec: {{{extra}containers: [{{name: c, resources: {{limits: {{{lim}}}}}}}]}}
        """)


HIGH = textwrap.dedent("""\
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}
    value: 1000
    """)


def run(tmp_path, text: str, policy: str = "pod", **kw) -> pl.DataFrame:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    trace = load_trace([path])
    return build_report(replay(trace, policy, config=trace.config, **kw)).tables["pods"].sort("pod")


def devices(pods: pl.DataFrame) -> dict[str, str]:
    return {r["pod"].split("/")[1]: r["devices"] for r in pods.filter(pl.col("ended_s").is_null() | pl.col("bound_s").is_not_null()).iter_rows(named=True)}


# ---- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("free", "per", "whole", "shared", "want"),
    [
        pytest.param([1000, 1000], 1000, 0, 600, (0,), id="shared-tie-lowest-id"),
        pytest.param([1000, 400, 700], 1000, 0, 300, (1,), id="shared-best-fit"),
        pytest.param([1000, 400, 700], 1000, 0, 700, (2,), id="shared-exact-fit"),
        pytest.param([400, 400], 1000, 0, 600, None, id="shared-no-single-gpu"),
        pytest.param([1000, 400, 1000, 1000], 1000, 2, 0, (0, 2), id="whole-lowest-entirely-free"),
        pytest.param([1000, 999], 1000, 2, 0, None, id="whole-needs-entirely-free"),
        pytest.param([1, 0, 1], 1, 1, 0, (0,), id="whole-no-share-declared"),
        pytest.param([1000], 1000, 0, 0, (), id="no-gpu-request"),
    ],
)
def test_pick(free, per, whole, shared, want):
    assert pick(free, per, whole, shared) == want


@pytest.mark.parametrize(
    ("shares", "gpus", "want"),
    [([600, 600, 600], 2, False), ([600, 400, 600, 400], 2, True), ([500, 300, 700, 500], 2, True), ([1001], 2, False), ([], 0, True)],
)
def test_assignable(shares, gpus, want):
    assert assignable(shares, gpus, 1000) is want


# ---- scheduling --------------------------------------------------------------------------------------
def test_a_share_fits_inside_one_gpu(tmp_path):
    """Three 600-milli pods on a 2-GPU node: node totals say 1800 <= 2000, but no GPU holds the third."""
    pods = run(tmp_path, node("n", 2) + "".join(pod(f"p{i}", milli=600) for i in range(3)))
    assert devices(pods) == {"p0": "0", "p1": "1", "p2": ""}
    (reason,) = pods.filter(pl.col("pod") == "default/p2")["waiting_reason"].to_list()
    assert reason == (
        f"0/1 nodes are available: 1 Insufficient {SHARE} on any one nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    assert pods["gpu_milli"].to_list() == [600, 600, 0]


def test_best_fit_then_whole_gpus_take_entirely_free_ones(tmp_path):
    text = node("n", 4) + pod("a", milli=300) + pod("b", milli=600, at="1s") + pod("c", milli=700, at="2s") + pod("w", gpus=2, at="3s")
    pods = run(tmp_path, text)
    # a -> GPU 0 (tie); b -> GPU 0 (700 free is the best fit); c -> GPU 1; w -> GPUs 2, 3
    assert devices(pods) == {"a": "0", "b": "0", "c": "1", "w": "2,3"}
    assert pods.filter(pl.col("pod") == "default/w")["gpu_milli"].to_list() == [2000]


def test_default_profile_picks_the_node_then_the_best_fitting_gpu(tmp_path):
    """The default scores tie (no cpu/memory requests), the first node wins; on it b fills the
    GPU a started rather than opening GPU 1."""
    pods = run(tmp_path, node("n1", 2) + node("n2", 2) + pod("a", milli=500) + pod("b", milli=500, at="1s"))
    assert {r["pod"]: (r["node"], r["devices"]) for r in pods.iter_rows(named=True)} == {"default/a": ("n1", "0"), "default/b": ("n1", "0")}


def test_packing_score_fills_one_gpu(tmp_path):
    cfg = textwrap.dedent("""\
        ---
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        profiles:
        - plugins: {score: {enabled: [{name: GPUDevices, weight: 50}]}}
        """)
    text = cfg + node("n1", 2) + node("n2", 2) + pod("a", milli=600) + pod("b", milli=400, at="1s") + pod("c", milli=600, at="2s")
    pods = run(tmp_path, text)
    got = {r["pod"].split("/")[1]: (r["node"], r["devices"]) for r in pods.iter_rows(named=True)}
    # b fills a's GPU exactly (score 100) instead of spreading to n2
    assert got["a"] == ("n1", "0") and got["b"] == ("n1", "0")


def test_whole_gpu_only_nodes_behave_as_counters(tmp_path):
    pods = run(tmp_path, node("n", 2, share=False) + pod("a", gpus=1) + pod("b", gpus=1, at="1s") + pod("c", gpus=1, at="2s"))
    assert devices(pods) == {"a": "0", "b": "1", "c": ""}
    (reason,) = pods.filter(pl.col("pod") == "default/c")["waiting_reason"].to_list()
    assert reason.startswith(f"0/1 nodes are available: 1 Insufficient {SHARE}, 1 Insufficient nvidia.com/gpu. preemption:")


def test_preemption_frees_one_gpu_and_leaves_the_others_on_theirs(tmp_path):
    """Low-priority 600-milli pods on both GPUs; a high-priority 700-milli pod needs one GPU:
    one victim, and the preemptor gets exactly the victim's GPU; the other stays on its own."""
    text = HIGH + node("n", 2) + pod("lo0", milli=600) + pod("lo1", milli=600, at="1s") + pod("hi", milli=700, at="10s", priority="high")
    path = tmp_path / "t.yaml"
    path.write_text(text)
    trace = load_trace([path])
    report = build_report(replay(trace, "pod", config=trace.config))
    victims = report.tables["victims"]["victim_pod"].to_list()
    assert len(victims) == 1
    pods = report.tables["pods"]
    live = {r["pod"].split("/")[1]: r["devices"] for r in pods.filter(pl.col("ended_s").is_null()).iter_rows(named=True)}
    victim = victims[0].split("/")[1]
    other = ({"lo0", "lo1"} - {victim}).pop()
    assert live == {other: {"lo0": "0", "lo1": "1"}[other], "hi": {"lo0": "0", "lo1": "1"}[victim]}


def test_kubelet_admission_checks_devices(tmp_path):
    text = node("n", 2) + pod("a", milli=600) + pod("b", milli=600, at="1s") + pod("direct", milli=600, at="2s", node_name="n")
    path = tmp_path / "t.yaml"
    path.write_text(text)
    trace = load_trace([path])
    report = build_report(replay(trace, "pod", config=trace.config))
    row = report.tables["pods"].filter(pl.col("pod") == "default/direct").row(0, named=True)
    assert row["end_reason"] == "Rejected" and row["bound_s"] is None
    events = report.tables["events"].filter(pl.col("object") == "default/direct")["message"].to_list()
    assert "kubelet admission on n: insufficient resources" in events


# ---- fast path equals the reference path on a shared-GPU trace --------------------------------------------
def _random_trace(seed: int) -> str:
    rng = random.Random(seed)
    parts = [HIGH]
    for i in range(12):
        parts.append(node(f"n{i}", rng.choice([1, 2, 4, 8])))
    for i in range(240):
        at = f"{rng.randrange(0, 3000)}s"
        dur = f"{rng.randrange(60, 1200)}s"
        prio = "high" if rng.random() < 0.1 else ""
        if rng.random() < 0.6:
            parts.append(pod(f"p{i}", milli=rng.choice([100, 250, 300, 500, 600, 700, 900]), at=at, duration=dur, priority=prio))
        else:
            parts.append(pod(f"p{i}", gpus=rng.choice([1, 1, 2, 4]), at=at, duration=dur, priority=prio))
    return "".join(parts)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("policy", ["pod", "gang"])
def test_fast_path_equals_reference_on_shared_gpus(tmp_path, seed, policy):
    from gangsim.whatif.variants import parse_policy_spec

    path = tmp_path / "t.yaml"
    path.write_text(_random_trace(seed))
    trace = load_trace([path])
    out = []
    for spec_text in (policy, f"{policy}+no-batching"):
        spec = parse_policy_spec(spec_text)
        report = build_report(replay(trace, spec.policy, config=spec.config(trace.config)))
        out.append(report)
    fast, ref = out
    for name in ("pods", "victims", "timeline"):
        assert fast.tables[name].equals(ref.tables[name]), name
    assert fast.summary == ref.summary
    assert fast.summary["gpu_equiv"]["allocated_s"] > 0
    assert fast.tables["victims"].height > 0  # preemption dry runs were exercised


# ---- the annotation ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(node("n", 2, milli=1001), "t.yaml:4: Node n: metadata.annotations[gangsim.dev/gpu-share]: Invalid value: \"alibaba.com/gpu-milli\": allocatable alibaba.com/gpu-milli (1001) must be a multiple of nvidia.com/gpu (2), both positive", id="uneven"),
        pytest.param(node("n", 2).replace(f"gpu-share: {SHARE}", "gpu-share: nvidia.com/gpu"), "the share must be another resource than nvidia.com/gpu", id="gpu-itself"),
        pytest.param(node("n", 2).replace(f"gpu-share: {SHARE}", "gpu-share: milli"), "must name an extended resource", id="not-extended"),
    ],
)
def test_bad_gpu_share_annotation(tmp_path, text, message):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_trace([path])
    assert message in str(exc.value)


# ---- property: the devices column never over-commits a GPU ----------------------------------------------
def _device_loads(pods: pl.DataFrame) -> dict[tuple[str, int], list[int]]:
    """(node, GPU id) -> what each live pod holds there (1000 for a whole GPU)."""
    live = pods.filter(pl.col("bound_s").is_not_null() & pl.col("ended_s").is_null())
    loads: dict[tuple[str, int], list[int]] = {}
    for r in live.iter_rows(named=True):
        if not r["devices"]:
            continue
        ids = [int(i) for i in r["devices"].split(",")]
        each = 1000 if r["gpus"] else r["gpu_milli"]
        assert len(ids) == max(r["gpus"], 1)
        for i in ids:
            loads.setdefault((r["node"], i), []).append(each)
    return loads


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), policy=st.sampled_from(["pod", "gang"]), horizon_s=st.integers(200, 4000))
def test_no_gpu_is_ever_overcommitted(tmp_path, seed, policy, horizon_s):
    """At any horizon of a random shared-GPU trace with preemption, each GPU holds at most 1000
    milli, a whole-GPU pod has its GPUs to itself, and ids exist on the node."""
    pods = run(tmp_path, _random_trace(seed), policy, horizon_ms=horizon_s * 1000)
    for (_, _), held in _device_loads(pods).items():
        assert sum(held) <= 1000, held
    text = _random_trace(seed)
    sizes = {f"n{i}": int(part.split('nvidia.com/gpu: "')[1].split('"')[0]) for i, part in enumerate(text.split("kind: Node")[1:])}
    assert all(i < sizes[n] for n, i in _device_loads(pods))


def test_capacity_is_unbounded_unless_a_share_is_asked():
    """``CapacityPlugin``: without a declared share NodeResourcesFit counts whole GPUs as any
    resource, so GPUDevices limits nothing (``UNBOUNDED``: no array to take the minimum with);
    a shared request counts, per row, the requests each GPU's free share still holds."""
    from dataclasses import replace

    from gangsim.scheduler.framework.interface import UNBOUNDED
    from scheduler.harness import harness, node, pod, pod_info, rows

    base = {"cpu": 64_000, "memory": 2**36, "pods": 110}
    plain = node("plain", allocatable={**base, "nvidia.com/gpu": 2})
    sched, fw = harness([plain], [])
    gpu_fit = fw.plugins["GPUDevices"]
    assert gpu_fit.capacity(pod_info(sched, pod(containers=[{"nvidia.com/gpu": 1}])), rows(sched)) is UNBOUNDED

    shared = replace(node("shared", allocatable={**base, "nvidia.com/gpu": 2, "example.com/gpu-milli": 2000}), gpu_share="example.com/gpu-milli")
    sched, fw = harness([shared], [])
    gpu_fit = fw.plugins["GPUDevices"]
    assert gpu_fit.capacity(pod_info(sched, pod(containers=[{"example.com/gpu-milli": 300}])), rows(sched)).tolist() == [6]  # 1000 // 300 on each GPU
    assert gpu_fit.capacity(pod_info(sched, pod(containers=[{"cpu": 1000}])), rows(sched)) is UNBOUNDED
