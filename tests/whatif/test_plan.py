"""`gangsim plan`, the bisection (gangsim.whatif.plan) and pool resizing (gangsim.whatif.pools)."""

import json
from pathlib import Path

import pytest

from cli_kit import DEADLOCK, invoke, invoke_json
from gangsim.eventlog import EventLog
from gangsim.pipeline import load
from gangsim.report.diff import parse_condition
from gangsim.report.summary import build_summary
from gangsim.whatif.plan import PoolPlan, plan_pool
from gangsim.whatif.pools import pools, resize_pools
from gangsim.whatif.sweep import Outcome, Task

from .kit import write_two_pools


def deadlock_with(tmp_path: Path, count: int) -> str:
    """The bundled deadlock trace with its pool's count edited in the YAML: an independent check."""
    text = Path(DEADLOCK).read_text()
    assert "  count: 25\n" in text
    path = tmp_path / f"deadlock-{count}.yaml"
    path.write_text(text.replace("  count: 25\n", f"  count: {count}\n"))
    return str(path)


def test_plan_finds_n_that_meets_while_n_minus_1_does_not(tmp_path):
    doc = invoke_json("plan", DEADLOCK, "--pool", "gpu", "--range", "10..40", "--target", "gangs.wait_p95_s <= 600", "-j", "1")
    (pool,) = doc["pools"]
    assert pool["status"] == "found" and pool["verified"] and pool["non_monotonic"] == []
    n = pool["answer"]
    tried = {t["size"]: t["meets"] for t in pool["trials"]}
    assert tried[n] is True and tried[n - 1] is False
    # replay N and N-1 ourselves, from edited YAML; with two gangs p95 (nearest rank) is the max
    for count, meets in ((n, True), (n - 1, False)):
        res = invoke("run", deadlock_with(tmp_path, count), "--policy", "gang", "--format", "json")
        s = json.loads(res.stdout)
        assert s["gangs"]["started"] == 2
        assert (s["gangs"]["wait_max_s"] <= 600) is meets, (count, s["gangs"])
    assert n == 32  # 2 x 64 one-GPU workers fit at once from 128 GPUs = 32 nodes of 4


def test_plan_table_and_answer_line():
    res = invoke("plan", DEADLOCK, "--pool", "gpu", "--range", "28..34", "--target", "gangs.wait_p95_s <= 10m", "-j", "1")
    assert res.exit_code == 0, res.stderr
    assert "NodePool gpu: sizes tried (the trace has 25)" in res.stdout
    assert "32 nodes (128 GPUs) is the smallest size that meets every target; 31 does not (both replayed)" in " ".join(res.stdout.split())
    assert "yes ← answer" in res.stdout


def test_unmet_range_exits_1_and_says_so():
    res = invoke("plan", DEADLOCK, "--pool", "gpu", "--range", "10..20", "--target", "gangs.wait_p95_s <= 600", "-j", "1", "--format", "markdown")
    assert res.exit_code == 1
    assert "no size in 10..20 meets every target; at 20: gangs.wait_p95_s <= 600 (3663 <= 600) does not hold" in res.stdout


def test_range_bottom_already_meeting_is_reported():
    doc = invoke_json("plan", DEADLOCK, "--pool", "gpu", "--range", "35..40", "--target", "gangs.never_started == 0", "-j", "1")
    (pool,) = doc["pools"]
    assert pool["answer"] == 35 and pool["status"] == "below-range" and not pool["verified"]
    assert {t["size"] for t in pool["trials"]} == {34, 35, 40}


def test_several_pools_one_at_a_time_and_the_parallel_search(tmp_path):
    trace = write_two_pools(tmp_path)
    doc = invoke_json("plan", trace, "--pool", "big", "--pool", "small", "--range", "big=1..8", "--range", "small=1..8",
                      "--target", "gangs.never_started == 0", "-j", "2")
    big, small = doc["pools"]
    # the 3-pod Job needs three 8-GPU nodes; the 4 x 2-GPU gang needs all of 4 two-GPU nodes (8 GPUs)
    assert (big["pool"], big["answer"], big["verified"]) == ("big", 3, True)
    assert (small["pool"], small["answer"], small["verified"]) == ("small", 4, True)
    # planning one pool holds the other as in the trace (big 3, small 4): only the planned pool limits
    assert all(t["metrics"]["gangs.never_started"] == (0 if t["size"] >= 3 else 1) for t in big["trials"])
    assert all(t["metrics"]["gangs.never_started"] == (0 if t["size"] >= 4 else 1) for t in small["trials"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(["--pool", "gpus", "--target", "gangs.started >= 2"], "--pool 'gpus': the trace has no NodePool of that name (NodePools: gpu (25 nodes))", id="unknown-pool"),
        pytest.param(["--pool", "gpu", "--target", "gangs.wait_p95x_s <= 600"], """--target 'gangs.wait_p95x_s <= 600': unknown key "gangs.wait_p95x_s\"""", id="bad-target"),
        pytest.param(["--pool", "gpu", "--target", "gangs.started >= 2", "--range", "40..10"], "--range '40..10': want 0 <= LO <= HI", id="bad-range"),
        pytest.param(["--pool", "gpu", "--target", "gangs.started >= 2", "--range", "tpu=1..4"], "'tpu' is not one of the --pool values", id="range-for-other-pool"),
    ],
)
def test_plan_bad_input_exits_2(args, needle):
    res = invoke("plan", DEADLOCK, *args)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert needle in res.stderr and res.stderr.count("\n") == 1


def test_unknown_backend_is_a_usage_error():
    res = invoke("plan", DEADLOCK, "--pool", "gpu", "--target", "gangs.started >= 2", "--backend", "slurm")
    assert res.exit_code == 2 and "slurm" in res.stderr


# --- the bisection itself, against a fake runner ------------------------------------------------


class FakeRunner:
    """Replays nothing: the metric is a function of the pool size."""

    def __init__(self, wait_of_size, width=1):
        self.wait_of_size = wait_of_size
        self.width = width
        self.calls: list[list[int]] = []

    def map(self, tasks, progress=None):
        sizes = [dict(t.pools)["p"] for t in tasks]
        self.calls.append(sizes)
        return [Outcome(summary_with(started=1, wait_p99_s=float(self.wait_of_size(s)))) for s in sizes]


def summary_with(**gangs) -> dict:
    summary = build_summary(EventLog())
    summary["gangs"].update(gangs)
    return summary


def plan_with(wait_of_size, lo, hi, width=1) -> tuple[PoolPlan, FakeRunner]:
    runner = FakeRunner(wait_of_size, width)
    cond = parse_condition("gangs.wait_p99_s <= 100", ["x"], default_label="x", option="--target")
    return plan_pool(runner, Task(0, "gang"), "p", 5, 8, lo, hi, [cond]), runner  # type: ignore[arg-type]


@pytest.mark.parametrize("width", [1, 2, 4])
@pytest.mark.parametrize("threshold", [1, 2, 37, 199, 200])
def test_bisection_finds_the_threshold(width, threshold):
    plan, runner = plan_with(lambda s: 50 if s >= threshold else 500, 1, 200, width)
    assert plan.answer == threshold and plan.verified and plan.non_monotonic == ()
    runs = sum(len(c) for c in runner.calls)
    assert runs <= 2 + 2 * 8  # logarithmic, not a scan
    assert all(len(c) <= max(width, 2) for c in runner.calls)


def test_bisection_reports_non_monotonic_findings():
    # meets at 10..19, fails 20..39, meets from 40 on; the first round tries 17, 33 and 48
    plan, _ = plan_with(lambda s: 50 if 10 <= s < 20 or s >= 40 else 500, 1, 64, width=3)
    assert plan.answer == 10 and plan.verified
    assert (17, 33) in plan.non_monotonic
    assert all(small < big for small, big in plan.non_monotonic)


def test_unmet_and_undefined():
    plan, _ = plan_with(lambda s: 500, 1, 10)
    assert plan.status == "unmet" and plan.answer is None


# --- resizing ---------------------------------------------------------------------------------


def test_resize_shrinks_and_grows_cloning_pool_wide_events(tmp_path):
    trace = load([write_two_pools(tmp_path)])
    assert {p.name: (p.size, p.gpus_per_node) for p in pools(trace).values()} == {"big": (3, 8), "small": (4, 2)}
    grown = resize_pools(trace, {"big": 5, "small": 1})
    assert {p.name: p.size for p in pools(grown).values()} == {"big": 5, "small": 1}
    node_events = [(e.at_ms, e.op.value, e.name) for e in grown.events if e.kind == "Node"]
    # clones get the pool-wide remove-at deletion (2h) but not big-1's own patch (30m)
    assert (7_200_000, "delete", "big-3") in node_events and (7_200_000, "delete", "big-4") in node_events
    assert [n for t, op, n in node_events if op == "patch"] == ["big-1"]
    assert not any(n.startswith("small-") and n != "small-0" for _, _, n in node_events)
    clone = next(e.obj for e in grown.events if e.kind == "Node" and e.name == "big-4" and e.obj is not None)
    assert clone.labels["kubernetes.io/hostname"] == "big-4" and clone.pool == "big" and clone.labels["size"] == "big"
    # the rest of the trace keeps its events and order
    others = [e for e in trace.events if e.kind != "Node"]
    assert [e for e in grown.events if e.kind != "Node"] == others
    shrunk = resize_pools(trace, {"big": 1})
    assert [e.name for e in shrunk.events if e.kind == "Node" and e.name.startswith("big")] == ["big-0", "big-0"]


def test_every_size_is_compared_over_one_window():
    # victims-in-vain has no horizon: each size would end where it goes idle; the plan reads all
    # of them over the window of its first round (the longest of the range's two ends)
    trace = str(Path(DEADLOCK).parent / "victims-in-vain.yaml")
    doc = invoke_json("plan", trace, "--pool", "gpu", "--range", "10..20", "--target", "gangs.never_started == 0", "-j", "1")
    pool = doc["pools"][0]
    assert len(pool["trials"]) >= 3
    assert {t["metrics"]["horizon_s"] for t in pool["trials"]} == {pool["window_s"]}
