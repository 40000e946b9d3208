"""`--plot`: the PNG files open, report.html embeds them and the documented data series."""

import importlib.util
import json

import pytest

from cli_kit import DEADLOCK, ROOT, invoke
from gangsim.report.html import extract_data
from gangsim.report.plots import GPU_STATES

needs_matplotlib = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="pip install 'gangsim[plot]'")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def open_png(path):
    from matplotlib import image

    pixels = image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 300 and pixels.shape[1] > 600
    assert pixels.std() > 0.05  # not a blank canvas
    return pixels


@needs_matplotlib
def test_run_plot_writes_pngs_and_html_beside_the_tables(tmp_path):
    out = tmp_path / "run"
    res = invoke("run", DEADLOCK, "--policy", "pod", "--out", str(out), "--plot", "--format", "json")
    assert res.exit_code == 0, res.stderr
    names = {p.name for p in out.iterdir() if not p.name.startswith(".")}
    assert {"gpu_state.png", "gang_wait_cdf.png", "victims.png", "gang_timeline.png", "report.html", "summary.json", "timeline.parquet"} <= names
    for name in ("gpu_state.png", "gang_wait_cdf.png", "victims.png", "gang_timeline.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
        open_png(out / name)
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 4 and "<caption>Summary</caption>" in html
    data = extract_data(html)
    assert data["kind"] == "run" and data["labels"] == ["pod"]
    assert data["summaries"]["pod"] == json.loads(res.stdout)
    series = data["series"]
    assert set(series) == {"gpu_state", "gang_wait_cdf", "victims", "gang_timeline"}
    gpu = series["gpu_state"]["pod"]
    assert set(gpu) == {"t_h", *GPU_STATES}
    # the four stacked states add up to the capacity at every step; the last point is the horizon
    assert all(sum(gpu[k][i] for k in GPU_STATES) == 100 for i in range(len(gpu["t_h"])))
    assert gpu["t_h"][0] == 0.0 and gpu["t_h"][-1] == 6.0
    assert max(gpu["stranded"]) == 100  # the deadlock: every GPU held by incomplete gangs
    # the integral of the series is the summary's GPU time
    stranded_gpu_h = sum(gpu["stranded"][i] * (gpu["t_h"][i + 1] - gpu["t_h"][i]) for i in range(len(gpu["t_h"]) - 1))
    assert stranded_gpu_h == pytest.approx(data["summaries"]["pod"]["gpu"]["stranded_s"] / 3600, rel=1e-4)
    cdf = series["gang_wait_cdf"]["pod"]
    assert cdf == {"wait_h": [0.5, 1.5], "fraction": [0.5, 1.0], "gangs": 2, "started": 2}
    assert series["victims"]["pod"]["victims"][-1] == 0
    # the gang timeline: two gangs by arrival, each waiting (partially running: pods bound one by
    # one while the rendezvous waits) then running; the longest wait labelled
    tl = series["gang_timeline"]["pod"]
    assert (tl["gangs"], tl["shown"], tl["horizon_h"]) == (2, 2, 6.0)
    assert [r["gang"] for r in tl["rows"]] == ["ml/train-a", "ml/train-b"]
    assert [r["wait_h"] for r in tl["rows"]] == [0.5, 1.5]
    assert tl["rows"][1]["label"] == "waited 1h30m" and tl["rows"][1]["running"][0] == 1.5
    assert all(r["partial"] is not None and r["partial"][1] == r["running"][0] for r in tl["rows"])


@needs_matplotlib
def test_diff_plot_overlays_policies(tmp_path):
    out = tmp_path / "diff"
    trace = str(ROOT / "traces" / "victims-in-vain.yaml")
    res = invoke("diff", trace, "-p", "permit", "-p", "gang", "--out", str(out), "--plot", "--format", "json")
    assert res.exit_code == 0, res.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["diff.json", "diff.md", "gang_timeline.png", "gang_wait_cdf.png", "gpu_state.png", "report.html", "victims.png"]
    pixels = open_png(out / "gpu_state.png")
    assert pixels.shape[0] > 500  # one panel per policy
    data = extract_data((out / "report.html").read_bytes())
    assert data["kind"] == "diff" and data["labels"] == ["permit", "gang"]
    doc = json.loads(res.stdout)
    victims = data["series"]["victims"]
    for summary in doc["summaries"]:
        v = victims[summary["label"]]
        assert v["victims"][-1] == summary["preemption"]["victims"]
        assert v["in_vain"][-1] == summary["preemption"]["victims_in_vain"]
        assert v["t_h"] == sorted(v["t_h"])
    assert victims["permit"]["in_vain"][-1] > 0 == victims["gang"]["in_vain"][-1]
    html = (out / "report.html").read_text()
    assert "Summary: victims-in-vain (deltas against permit)" in html


@needs_matplotlib
def test_plan_plot(tmp_path):
    out = tmp_path / "plan"
    res = invoke("plan", DEADLOCK, "--pool", "gpu", "--range", "28..34", "--target", "gangs.wait_p95_s <= 600", "-j", "1",
                 "--out", str(out), "--plot")
    assert res.exit_code == 0, res.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["plan.json", "plan.md", "plan_gpu.png", "report.html"]
    open_png(out / "plan_gpu.png")
    data = extract_data((out / "report.html").read_text())
    (series,) = data["series"]
    assert series["answer"] == 32 and series["targets"] == ["gangs.wait_p95_s"]
    assert series["thresholds"] == {"gangs.wait_p95_s": [{"value": 600.0, "expr": "gangs.wait_p95_s <= 600"}]}
    assert dict(zip(series["sizes"], series["meets"], strict=True))[31] is False


def test_plot_without_matplotlib_exits_2(monkeypatch, tmp_path):
    import gangsim.report.figures

    real = importlib.util.find_spec
    monkeypatch.setattr(gangsim.report.figures.importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    res = invoke("run", DEADLOCK, "--out", str(tmp_path / "o"), "--plot")
    assert res.exit_code == 2
    assert res.stderr == "gangsim: error: --plot needs matplotlib: pip install 'gangsim[plot]'\n"
    assert not (tmp_path / "o").exists()


def test_plot_needs_out():
    res = invoke("run", DEADLOCK, "--plot")
    assert res.exit_code == 2
    assert "--plot writes PNG files and report.html into --out DIR" in res.stderr
