"""A :class:`~gangsim.report.diff.Diff` as rich tables, Markdown and JSON.

Formatting only: values, deltas, tones (better / worse) and verdicts come computed from
``diff.py``. Each table is first a :class:`ToneGrid` — formatted cells plus a tone per cell — so
the terminal (colour), Markdown (🟢 / 🔴 markers) and HTML (classes) say the same thing.

The JSON (``gangsim diff --format json``) is deterministic (no wall times), keys in this order::

    {"trace": …, "baseline": "gang", "labels": ["gang", "pod"],
     "summaries": [{"label": "gang", <summary.json keys>}, …],      # one per policy, in order
     "deltas": [{"label": "pod", "baseline": "gang",
                 "delta": {<summary sections, numbers: label − baseline>},
                 "better": ["gpu.stranded_s", …], "worse": […]}],   # one per non-baseline policy
     "gangs": [{"gang": …, "wait_s": {label: s | null}, "delta_s": {label: s | null}}],
     "fail_if": [{"expr": …, "held": true, "left": 1, "right": 2}]}
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from gangsim.report.diff import Diff
from gangsim.report.render_markdown import md_cell
from gangsim.report.render_rich import new_table
from gangsim.report.summary import Grid, fmt_count, fmt_duration, fmt_number

__all__ = [
    "ToneGrid",
    "diff_json",
    "diff_metrics_grid",
    "fmt_delta",
    "fmt_metric",
    "gang_changes_grid",
    "render_diff_json",
    "render_diff_markdown",
    "render_diff_terminal",
    "table_width",
    "verdict_lines",
]

MARKERS = {"better": "🟢 ", "worse": "🔴 "}
STYLES = {"better": "green", "worse": "red", "same": "dim", "neutral": "", "": ""}


@dataclass(frozen=True, slots=True)
class ToneGrid:
    """A :class:`~gangsim.report.summary.Grid` whose cells each carry a tone
    (``better``, ``worse``, ``same``, ``neutral`` or ``""``)."""

    title: str
    columns: tuple[str, ...]
    numeric: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]
    tones: tuple[tuple[str, ...], ...]

    def plain(self) -> Grid:
        return Grid(self.title, self.columns, self.numeric, self.rows)


# ---------------------------------------------------------------------------------------------
# How a metric and a delta read


def _is_gpu_time(key: str) -> bool:
    section, _, leaf = key.rpartition(".")
    return section.startswith("gpu") or "gpu" in leaf  # gpu and gpu_equiv sections


def _gpu_time(gpu_s: float) -> str:
    """Compact GPU time for side-by-side cells: ``63 GPU-s``, ``85.3 GPU-h``."""
    if abs(gpu_s) >= 3600:
        return f"{gpu_s / 3600:,.1f} GPU-h"
    return f"{fmt_number(gpu_s)} GPU-s"


def fmt_metric(key: str, value: float | int | None) -> str:
    """One cell: GPU time in GPU-s or GPU-h, durations as ``1h1m3s``, utilization in %, counts;
    ``n/a`` for an undefined value (a wait percentile when no gang started)."""
    if value is None:
        return "n/a"
    leaf = key.rpartition(".")[2]
    if leaf in ("utilization", "allocated_at_end") or leaf.startswith("allocation_at_"):  # ratios (gpu_equiv.allocation_at_*)
        return f"{value:.1%}"
    if leaf.endswith("_s"):
        return _gpu_time(value) if _is_gpu_time(key) else fmt_duration(value)
    if isinstance(value, int):
        return fmt_count(value)
    return fmt_number(value)


def fmt_delta(key: str, value: float | int | None) -> str:
    """A signed difference: ``+28m57s``, ``-5.2 pp``, ``+3``; ``=`` when nothing changed."""
    if value is None:
        return "n/a"
    if value == 0:
        return "="
    sign = "+" if value > 0 else ""
    leaf = key.rpartition(".")[2]
    if leaf in ("utilization", "allocated_at_end") or leaf.startswith("allocation_at_"):
        return f"{sign}{value * 100:.1f} pp"
    return sign + fmt_metric(key, value)


def _wait(value: float | None) -> str:
    return "never" if value is None else fmt_duration(value)


# ---------------------------------------------------------------------------------------------
# Grids


def diff_metrics_grid(diff: Diff) -> ToneGrid:
    """metric | baseline | other | Δ other | …"""
    others = diff.labels[1:]
    columns = ("metric", diff.baseline) + tuple(c for label in others for c in (label, f"Δ {label}"))
    numeric = (False,) + (True,) * (len(columns) - 1)
    rows, tones = [], []
    for m in diff.metrics:
        row = [m.key, fmt_metric(m.key, m.values[0])]
        tone_row = ["", ""]
        for value, d, t in zip(m.values[1:], m.deltas, m.tones, strict=True):
            row += [fmt_metric(m.key, value), fmt_delta(m.key, d)]
            tone_row += [t, t]
        rows.append(tuple(row))
        tones.append(tuple(tone_row))
    title = f"Summary: {diff.trace} (deltas against {diff.baseline})"
    return ToneGrid(title, columns, numeric, tuple(rows), tuple(tones))


def gang_changes_grid(diff: Diff) -> ToneGrid:
    """gang | wait under each label | Δ against the baseline, for the gangs that changed most."""
    others = diff.labels[1:]
    columns = ("gang", f"wait {diff.baseline}") + tuple(c for label in others for c in (f"wait {label}", f"Δ {label}"))
    numeric = (False,) + (True,) * (len(columns) - 1)
    rows, tones = [], []
    for g in diff.gangs:
        row = [g.gang, _wait(g.waits[0])]
        tone_row = ["", ""]
        for wait, d, t in zip(g.waits[1:], g.deltas, g.tones, strict=True):
            if d is not None:
                shown = fmt_delta("gangs.wait_s", d)
            elif wait is None and g.waits[0] is None:
                shown = "="
            else:
                shown = "starts" if g.waits[0] is None else "never starts"
            row += [_wait(wait), shown]
            tone_row += [t, t]
        rows.append(tuple(row))
        tones.append(tuple(tone_row))
    return ToneGrid("Gangs whose wait changed most", columns, numeric, tuple(rows), tuple(tones))


def verdict_lines(diff: Diff) -> list[tuple[bool, str]]:
    """``(held, text)`` for every ``--fail-if``, in the order given."""
    return [(v.held, v.describe()) for v in diff.verdicts]


# ---------------------------------------------------------------------------------------------
# Terminal


def table_width(grid: ToneGrid) -> int:
    """Columns the table needs to show every cell on one line (rich's SIMPLE_HEAD box: 3 per column)."""
    widths = [max([len(name)] + [len(row[i]) for row in grid.rows]) for i, name in enumerate(grid.columns)]
    return sum(widths) + 3 * len(widths) + 2


def tone_table(grid: ToneGrid) -> Table:
    """Delta columns are headed ``Δ`` (their label is the column to the left) to save width."""
    table = new_table(grid.title, grid.columns, grid.numeric, grid.rows, header=lambda name: "Δ" if name.startswith("Δ ") else name)
    for row, tones in zip(grid.rows, grid.tones, strict=True):
        table.add_row(*(Text(cell, style=STYLES.get(t, "")) for cell, t in zip(row, tones, strict=True)))
    return table


def render_diff_terminal(diff: Diff, console: Console) -> None:
    """The summary side by side (green better, red worse than the baseline), the gangs whose wait
    changed most, and each ``--fail-if`` that held."""
    console.print(tone_table(diff_metrics_grid(diff)))
    gangs = gang_changes_grid(diff)
    if gangs.rows:
        console.print(tone_table(gangs))
    else:
        console.print(Text("Gang waits: no gang's wait changed."))
    for held, text in verdict_lines(diff):
        if held:
            console.print(Text(f"--fail-if held: {text}", style="bold red"))
        else:
            console.print(Text(f"--fail-if ok: {text}", style="green"))


# ---------------------------------------------------------------------------------------------
# Markdown


def tone_markdown(grid: ToneGrid) -> list[str]:
    lines = [
        "| " + " | ".join(md_cell(c) for c in grid.columns) + " |",
        "|" + "|".join("---:" if numeric else "---" for numeric in grid.numeric) + "|",
    ]
    for row, tones in zip(grid.rows, grid.tones, strict=True):
        cells = []
        for j, (cell, t) in enumerate(zip(row, tones, strict=True)):
            marked = MARKERS.get(t, "") + cell if grid.columns[j].startswith("Δ ") else cell
            cells.append(md_cell(marked))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_diff_markdown(diff: Diff) -> str:
    """GitHub-flavoured Markdown for a job summary or a PR comment."""
    lines = [f"## gangsim diff: {md_cell(diff.trace)}", ""]
    labels = ", ".join(f"`{label}`" for label in diff.labels)
    lines.append(f"Policies: {labels}; deltas against `{diff.baseline}` (🟢 better, 🔴 worse).")
    lines.append("")
    if diff.verdicts:
        lines += ["### --fail-if", ""]
        for held, text in verdict_lines(diff):
            lines.append(f"- {'❌ **held**' if held else '✅ ok'}: `{text}`")
        lines.append("")
    lines += ["### Summary", ""]
    lines += tone_markdown(diff_metrics_grid(diff))
    lines += ["", "### Gangs whose wait changed most", ""]
    gangs = gang_changes_grid(diff)
    lines += tone_markdown(gangs) if gangs.rows else ["No gang's wait changed."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# JSON


def _nest(flat: dict[str, float | int]) -> dict:
    out: dict = {}
    for key, value in flat.items():
        section, dot, leaf = key.partition(".")
        if dot:
            out.setdefault(section, {})[leaf] = value
        else:
            out[key] = value
    return out


def diff_json(diff: Diff) -> dict:
    """The JSON document as a dict (see the module docstring)."""
    summaries = []
    for label, summary in zip(diff.labels, diff.summaries, strict=True):
        item: dict = {"label": label}
        item.update(summary)
        summaries.append(item)
    deltas = []
    for i, label in enumerate(diff.labels[1:]):
        flat = {m.key: m.deltas[i] for m in diff.metrics}
        deltas.append(
            {
                "label": label,
                "baseline": diff.baseline,
                "delta": _nest(flat),
                "better": [m.key for m in diff.metrics if m.tones[i] == "better"],
                "worse": [m.key for m in diff.metrics if m.tones[i] == "worse"],
            }
        )
    gangs = [
        {
            "gang": g.gang,
            "wait_s": dict(zip(diff.labels, g.waits, strict=True)),
            "delta_s": dict(zip(diff.labels[1:], g.deltas, strict=True)),
        }
        for g in diff.gangs
    ]
    return {
        "trace": diff.trace,
        "baseline": diff.baseline,
        "labels": list(diff.labels),
        "summaries": summaries,
        "deltas": deltas,
        "gangs": gangs,
        "fail_if": [v.to_json() for v in diff.verdicts],
    }


def render_diff_json(diff: Diff) -> bytes:
    return orjson.dumps(diff_json(diff), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
