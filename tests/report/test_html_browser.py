"""report.html in a real headless browser (issue 13): Debian's chromium opens the file and the
screenshot shows the page with the gang timeline figure. Skipped where chromium is not installed
(``which chromium`` / ``chromium-browser``); the same command, by hand:

    chromium --headless --no-sandbox --disable-gpu --disable-background-networking \\
        --screenshot=/tmp/x.png --window-size=1280,2000 file:///path/to/out/report.html
"""

import shutil
import subprocess

import pytest

from cli_kit import ROOT, invoke
from report.test_plots import needs_matplotlib, open_png

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@needs_matplotlib
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_report_html_renders_with_the_gang_timeline(tmp_path):
    out = tmp_path / "run"
    res = invoke("run", str(ROOT / "traces" / "victims-in-vain.yaml"), "--policy", "permit", "--out", str(out), "--plot", "--format", "json")
    assert res.exit_code == 0, res.stderr
    html = (out / "report.html").read_text()
    assert 'alt="Gang timeline: waiting, partially running, running, preempted"' in html
    assert '"waited 1h50m"' in html  # the longest wait's label, in whole seconds (was "waited 6600s")
    shot = tmp_path / "shot.png"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           f"--screenshot={shot}", "--window-size=1280,2000", (out / "report.html").as_uri()]  # fmt: skip
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    pixels = open_png(shot)
    assert pixels.shape[:2] == (2000, 1280)
    # the page drew something: a blank (all-white) or failed render would not have these many dark pixels
    dark = (pixels[..., :3].astype(float).mean(axis=-1) < (0.5 if pixels.dtype.kind == "f" else 128)).mean()
    assert dark > 0.01, dark


@needs_matplotlib
def test_explain_plot_draws_the_gang(tmp_path):
    png = tmp_path / "gang.png"
    res = invoke("explain", str(ROOT / "traces" / "victims-in-vain.yaml"), "--gang", "ml/llm-pretrain", "--policy", "permit", "--plot", str(png), "--format", "json")
    assert res.exit_code == 0, res.stderr
    open_png(png)
