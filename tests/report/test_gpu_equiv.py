"""GPU-equivalents in the reports (issue 14 item 2): present exactly when a pod held a GPU share,
with the values a hand count gives, in the summary, the timeline, the terminal rows and diff."""

from __future__ import annotations

import polars as pl

from gangsim.load import load_trace
from gangsim.report import build_report
from gangsim.report.diff import build_diff
from gangsim.report.summary import fmt_in, row_unit
from gangsim.report.summary import summary_rows
from gangsim.sim.replay import replay
from tests.scheduler.plugins.test_gpudevices import node, pod


def _report(tmp_path, text: str, policy: str = "pod"):
    path = tmp_path / "t.yaml"
    path.write_text(text)
    trace = load_trace([path])
    return build_report(replay(trace, policy, config=trace.config, horizon_ms=100_000))


def test_shares_are_counted_by_their_share(tmp_path):
    """2 GPUs: a 250-milli pod from 0 s, a whole GPU from 50 s, both to the 100 s horizon."""
    r = _report(tmp_path, node("n", 2) + pod("s", milli=250) + pod("w", gpus=1, at="50s"))
    eq = r.summary["gpu_equiv"]
    assert eq["capacity_s"] == 200.0
    assert eq["allocated_s"] == 0.25 * 100 + 1 * 50 == eq["busy_s"]
    assert eq["stranded_s"] == 0.0
    assert eq["utilization"] == 0.375
    assert eq["allocated_at_end"] == 0.625
    assert eq["allocation_at_100"] is None  # not static: w arrives at 50 s
    assert r.summary["gpu"]["busy_s"] == 50.0  # whole GPUs only, as before
    tl = r.tables["timeline"]
    assert tl.select("t_s", "gpus_allocated", "gpu_equiv_allocated").rows() == [(0.0, 0, 0.25), (50.0, 1, 1.25)]
    rows = {key: (unit, value) for key, unit, value in summary_rows(r.summary)}
    assert rows["gpu_equiv.allocated_s"] == ("GPU-s", "75")
    assert rows["gpu_equiv.allocated_at_end"] == ("%", "62.5")
    assert rows["gpu_equiv.allocation_at_100"] == ("", "n/a")


def test_static_allocation_at_arrived_request(tmp_path):
    """All at t=0 on 2 GPUs: 600 + 600 + 600 milli (the third cannot be placed) + 1000 whole.
    Arrived 1800 >= 100 % of 2000 only with the 4th pod; placed then: 600 + 600 (w does not fit)."""
    r = _report(tmp_path, node("n", 2) + pod("a", milli=600) + pod("b", milli=600) + pod("c", milli=600) + pod("w", gpus=1))
    eq = r.summary["gpu_equiv"]
    assert eq["allocation_at_100"] == 0.6
    assert eq["allocation_at_130"] == 0.6  # 2800 >= 2600 at the 4th pod too
    assert r.tables["pods"].filter(pl.col("bound_s").is_not_null())["pod"].to_list() == ["default/a", "default/b"]
    short = _report(tmp_path, node("n", 2) + pod("a", milli=600) + pod("b", milli=600))
    assert short.summary["gpu_equiv"]["allocation_at_100"] is None  # 1200 never reaches 2000


def test_whole_gpu_runs_have_no_gpu_equiv_and_diff_shows_it_only_with_shares(tmp_path):
    whole = _report(tmp_path, node("n", 2, share=False) + pod("a", gpus=1))
    assert "gpu_equiv" not in whole.summary and "gpu_equiv_total" not in whole.tables["timeline"].columns
    keys = [m.key for m in build_diff(["pod", "gang"], [whole, whole]).metrics]
    assert not any(k.startswith("gpu_equiv.") for k in keys)
    shared = _report(tmp_path, node("n", 2) + pod("s", milli=500))
    d = build_diff(["pod", "gang"], [shared, _report(tmp_path, node("n", 2) + pod("s", milli=500), "gang")])
    by_key = {m.key: m for m in d.metrics}
    assert by_key["gpu_equiv.allocated_s"].values == (50.0, 50.0)
    assert by_key["gpu_equiv.allocation_at_100"].values == (None, None)
    # one unit per row (issue 14 item 5): GPU-equivalent time in GPU-s / GPU-h, the ratios in %
    assert (row_unit("gpu_equiv.allocated_s", [50.0, 50.0]), fmt_in("GPU-s", 50.0)) == ("GPU-s", "50")
    assert (row_unit("gpu_equiv.allocation_at_130", [0.9415]), fmt_in("%", 0.9415)) == ("%", "94.2")
