"""The report as rich tables on a terminal.

Formatting only (STYLE §2.3, §9 "rendering that computes"): the rows come as already-formatted
:class:`~gangsim.report.summary.Grid` values from ``summary.py`` and ``tables.py``, the same ones
the Markdown renderer prints. Cells are ``Text`` objects, so a ``[`` in a pod name is never read
as rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gangsim.report.summary import Grid, podgroup_cycles_grid, summary_grid
from gangsim.report.tables import gang_grid, gangs_that_paid_grid, top_preemptors_grid

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["grid_table", "new_table", "render_terminal"]


def new_table(title: str, columns: tuple[str, ...], numeric: tuple[bool, ...], rows: tuple[tuple[str, ...], ...], *, header=lambda name: name) -> Table:
    """An empty rich ``Table`` with the columns set up (numeric ones right-aligned); the key
    column (gang, preemptor, metric) is never cut, so names stay readable."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for i, (name, is_numeric) in enumerate(zip(columns, numeric, strict=True)):
        if i == 0:
            longest = max([len(name)] + [len(row[0]) for row in rows])
            table.add_column(name, justify="left", no_wrap=True, min_width=longest)
        else:
            table.add_column(header(name), justify="right" if is_numeric else "left", overflow="fold")
    return table


def grid_table(grid: Grid) -> Table:
    """A :class:`Grid` as a rich ``Table``."""
    table = new_table(grid.title, grid.columns, grid.numeric, grid.rows)
    for row in grid.rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def render_terminal(report: Report, console: Console, *, top: int = 10) -> None:
    """Summary, the ``top`` slowest gangs and, when there were victims, who preempted whom."""
    console.print(grid_table(summary_grid(report.summary)))

    gangs = gang_grid(report.tables["gangs"], top)
    if gangs.rows:
        console.print(grid_table(gangs))
    else:
        console.print(Text("Slowest gangs: no gangs in this trace."))

    cycles = podgroup_cycles_grid(report.summary, report.timings)
    if cycles is not None:
        console.print(grid_table(cycles))

    victims = report.tables["victims"]
    if victims.height == 0:
        console.print(Text("Preemption: no victims."))
        return
    console.print(grid_table(top_preemptors_grid(victims, top)))
    console.print(grid_table(gangs_that_paid_grid(victims, top)))
