"""Issue 14 item 5: every table fits 80 and 120 columns without wrapping a cell.

Each table is rendered on a rich ``Console(width=W)`` (``run``, ``diff``) or through the CLI with
``$COLUMNS=W`` (``plan``, ``sweep``). A cell wrapped or cut would be missing from every output
line, so every non-empty cell must appear whole on some line, and no line may exceed W.
(``validate`` prints one ``file:line: severity: message [code]`` line per finding, compiler
style, not a table.)
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from cli_kit import DEADLOCK, ROOT, invoke
from gangsim import pipeline
from gangsim.report import render_terminal
from gangsim.report.diff import build_diff
from gangsim.report.render_diff import diff_metrics_grid, gang_changes_grid, render_diff_terminal
from gangsim.report.summary import podgroup_cycles_grid, summary_grid
from gangsim.report.tables import gang_grid, gangs_that_paid_grid, top_preemptors_grid

VICTIMS = str(ROOT / "traces" / "victims-in-vain.yaml")
WIDTHS = (80, 120)


def _render(width: int, draw) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    draw(console)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def assert_fits(lines: list[str], width: int, cells) -> None:
    too_wide = [line for line in lines if len(line) > width]
    assert not too_wide, too_wide
    missing = [cell for cell in cells if cell.strip() and not any(cell.strip() in line for line in lines)]
    assert not missing, missing


def _cells(*grids) -> list[str]:
    return [cell for grid in grids if grid is not None for row in grid.rows for cell in row]


@pytest.fixture(scope="module")
def reports():
    trace = pipeline.load([VICTIMS])
    return {p: pipeline.run_policy(trace, p) for p in ("gang", "permit", "pod")}


@pytest.mark.parametrize("width", WIDTHS)
def test_run_tables_fit(reports, width):
    report = reports["pod"]
    lines = _render(width, lambda c: render_terminal(report, c))
    grids = (summary_grid(report.summary), gang_grid(report.tables["gangs"], 10), podgroup_cycles_grid(report.summary, {}),
             top_preemptors_grid(report.tables["victims"], 10), gangs_that_paid_grid(report.tables["victims"], 10))
    assert_fits(lines, width, _cells(*grids))


@pytest.mark.parametrize("width", WIDTHS)
def test_diff_fits_side_by_side_or_long(reports, width):
    diff = build_diff(list(reports), list(reports.values()))
    lines = _render(width, lambda c: render_diff_terminal(diff, c))
    assert_fits(lines, width, _cells(diff_metrics_grid(diff), gang_changes_grid(diff)))
    side_by_side = any(line.startswith("  metric ") for line in lines)
    assert side_by_side == (width == 120)  # 3 policies: long layout at 80, side by side at 120
    if not side_by_side:  # long layout: one block per metric, a policy per line, its delta beside it
        i = lines.index("  stranded_s (GPU-h)")
        assert [line.split()[0] for line in lines[i + 1:i + 4]] == ["gang", "permit", "pod"]


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_table_fits(width):
    res = invoke("plan", DEADLOCK, "--pool", "gpu", "--range", "28..34", "--target", "gangs.wait_p95_s <= 10m", "-j", "1", columns=width)
    assert res.exit_code == 0, res.stderr
    lines = [line.rstrip() for line in res.stdout.splitlines()]
    assert_fits(lines, width, ["yes ← answer", "gangs.wait_p95_s", "gpu.stranded_s (GPU-s)", "1h1m3s"])


@pytest.mark.parametrize("width", WIDTHS)
def test_sweep_table_fits(width):
    res = invoke("sweep", "--trace", DEADLOCK, "--policy", "gang", "--policy", "pod", "--pool", "gpu=25,30", "-j", "1", columns=width)
    assert res.exit_code == 0, res.stderr
    lines = [line.rstrip() for line in res.stdout.splitlines()]
    assert_fits(lines, width, ["gangs.wait_p99_s", "gpu.stranded_s (GPU-h)", "pool.gpu"])


def test_piped_output_defaults_to_100_columns():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod")
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert any(line.startswith("  metric ") for line in lines)  # two policies fit side by side
