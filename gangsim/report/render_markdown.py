"""The report as GitHub-flavoured Markdown (for CI job summaries and pull-request comments).

Formatting only: the same :class:`~gangsim.report.summary.Grid` rows as the terminal renderer.
Deterministic text, ``\\n`` line ends, one trailing newline; ``|`` and line breaks in cells are
escaped so a pod name can never break a table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangsim.report.summary import Grid, is_section_row, summary_grid
from gangsim.report.tables import gang_grid, gangs_that_paid_grid, top_preemptors_grid

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["grid_markdown", "md_cell", "render_markdown"]


def md_cell(text: str) -> str:
    """A table cell: pipes and backslashes escaped, line breaks flattened."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def grid_markdown(grid: Grid) -> list[str]:
    """A :class:`Grid` as GFM table lines (numeric columns right-aligned)."""
    lines = [
        "| " + " | ".join(md_cell(c) for c in grid.columns) + " |",
        "|" + "|".join("---:" if numeric else "---" for numeric in grid.numeric) + "|",
    ]
    for row in grid.rows:
        cells = [f"**{md_cell(row[0])}**", *row[1:]] if is_section_row(row) else [md_cell(c) for c in row]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_markdown(report: Report, *, top: int = 10) -> str:
    """Summary table, the ``top`` slowest gangs, and the preemption tables when there were victims."""
    summary = report.summary
    lines = [f"# gangsim report: {md_cell(str(summary['trace']))} (policy {md_cell(str(summary['policy']))})", ""]

    lines += ["## Summary", ""]
    lines += grid_markdown(summary_grid(summary))

    lines += ["", "## Slowest gangs", ""]
    gangs = gang_grid(report.tables["gangs"], top)
    lines += grid_markdown(gangs) if gangs.rows else ["No gangs in this trace."]

    lines += ["", "## Preemption", ""]
    victims = report.tables["victims"]
    if victims.height == 0:
        lines.append("No victims.")
    else:
        for grid in (top_preemptors_grid(victims, top), gangs_that_paid_grid(victims, top)):
            lines += [f"### {grid.title}", ""]
            lines += grid_markdown(grid)
            lines.append("")
        lines.pop()
    return "\n".join(lines) + "\n"
