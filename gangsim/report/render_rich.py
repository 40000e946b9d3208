"""The report as rich tables on a terminal.

Formatting only (STYLE §2.3, §9 "rendering that computes"): the rows come as already-formatted
:class:`~gangsim.report.summary.Grid` values from ``summary.py`` and ``tables.py``, the same ones
the Markdown renderer prints. Cells are ``Text`` objects, so a ``[`` in a pod name is never read
as rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from gangsim.report.summary import Grid, is_section_row, podgroup_cycles_grid, summary_grid
from gangsim.report.tables import gang_grid, gangs_that_paid_grid, top_preemptors_grid

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["fitted_table", "grid_table", "grid_width", "new_table", "render_terminal"]

STYLES = {"better": "green", "worse": "red", "same": "dim", "neutral": "", "section": "bold", "": ""}


def grid_width(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> int:
    """Columns a SIMPLE_HEAD table needs to show every cell on one line: each column is its
    widest cell plus one space of padding on each side, one blank divider between columns and
    one blank edge on each side."""
    widths = [max([len(name)] + [len(row[i]) for row in rows]) for i, name in enumerate(columns)]
    return sum(widths) + 3 * len(widths) + 1


def new_table(columns: tuple[str, ...], numeric: tuple[bool, ...], rows: tuple[tuple[str, ...], ...], *, header=lambda name: name) -> Table:
    """An empty rich ``Table`` with the columns set up (numeric ones right-aligned). No cell ever
    wraps: callers that cannot fit the width use :func:`fitted_table`, which switches layout."""
    table = Table(box=box.SIMPLE_HEAD)
    for i, (name, is_numeric) in enumerate(zip(columns, numeric, strict=True)):
        longest = max([len(name)] + [len(row[i]) for row in rows])
        justify = "right" if is_numeric and i > 0 else "left"
        table.add_column(header(name), justify=justify, no_wrap=True, min_width=longest if i == 0 else None)
    return table


def fitted_table(
    title: str,
    columns: tuple[str, ...],
    numeric: tuple[bool, ...],
    rows: tuple[tuple[str, ...], ...],
    width: int,
    *,
    tones: tuple[tuple[str, ...], ...] | None = None,
    header=lambda name: name,
) -> Group:
    """The grid side by side when it fits ``width`` columns; otherwise the long layout: one block
    per row, its first cell as a heading (with the row's ``unit`` column, if any) and every other
    cell on its own line under its column's name, a ``Δ NAME`` column beside ``NAME`` (sections
    stay headings). Cells never wrap in either layout; the title is a line of its
    own above the table (wrapping only when it is longer than the terminal)."""
    tones = tones if tones is not None else tuple(("",) * len(columns) for _ in rows)
    if grid_width(columns, rows) <= width:
        table = new_table(columns, numeric, rows, header=header)
        for row, row_tones in zip(rows, tones, strict=True):
            style = "bold" if is_section_row(row) else None
            table.add_row(*(Text(cell, style=style or STYLES.get(t, "")) for cell, t in zip(row, row_tones, strict=True)))
        return Group(Text(title, style="italic"), table)
    return Group(Text(title, style="italic"), *_long_lines(columns, rows, tones))


def _long_lines(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...], tones: tuple[tuple[str, ...], ...]) -> list[Text]:
    """The long layout as plain lines (no table: a heading never widens the value column)::

        SECTION
        heading (unit)
            column      value   delta
    """
    index = {name: j for j, name in enumerate(columns)}
    shown = [j for j, name in enumerate(columns) if j > 0 and name != "unit" and not name.startswith("Δ ")]
    name_w = max([len(columns[j]) for j in shown] + [0])
    value_w = max([len(row[j]) for row in rows for j in shown] + [0])
    lines: list[Text] = []
    for row, row_tones in zip(rows, tones, strict=True):
        heading = row[0].rstrip()
        if is_section_row(row):
            lines.append(Text(heading, style="bold underline"))
            continue
        unit = row[index["unit"]] if "unit" in index else ""
        lines.append(Text(f"{heading} ({unit})" if unit else heading, style="bold"))
        indent = " " * (len(heading) - len(heading.lstrip()) + 4)
        for j in shown:
            if not row[j]:
                continue
            line = Text(f"{indent}{columns[j]:<{name_w}}  ")
            line.append(f"{row[j]:>{value_w}}", style=STYLES.get(row_tones[j], ""))
            d = index.get(f"Δ {columns[j]}")
            if d is not None:
                line.append(f"  {row[d]}", style=STYLES.get(row_tones[d], ""))
            line.no_wrap = True
            lines.append(line)
    return lines


def grid_table(grid: Grid, width: int = 10_000) -> Group:
    """A :class:`Grid` as a rich ``Table`` that fits ``width`` columns (:func:`fitted_table`)."""
    return fitted_table(grid.title, grid.columns, grid.numeric, grid.rows, width)


def render_terminal(report: Report, console: Console, *, top: int = 10) -> None:
    """Summary, the ``top`` slowest gangs and, when there were victims, who preempted whom."""
    console.print(grid_table(summary_grid(report.summary), console.width))

    gangs = gang_grid(report.tables["gangs"], top)
    if gangs.rows:
        console.print(grid_table(gangs, console.width))
    else:
        console.print(Text("Slowest gangs: no gangs in this trace."))

    cycles = podgroup_cycles_grid(report.summary, report.timings)
    if cycles is not None:
        console.print(grid_table(cycles, console.width))

    victims = report.tables["victims"]
    if victims.height == 0:
        console.print(Text("Preemption: no victims."))
        return
    console.print(grid_table(top_preemptors_grid(victims, top), console.width))
    console.print(grid_table(gangs_that_paid_grid(victims, top), console.width))
