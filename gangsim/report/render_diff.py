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
     "fail_if": [{"expr": …, "held": true, "left": 1, "right": 2}],
     "window": {"window_s": {label: s}, "natural_horizon_s": {label: s}}}   # see window_line
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from rich.console import Console, Group
from rich.text import Text

from gangsim.report.diff import Diff, flatten
from gangsim.report.render_markdown import md_cell
from gangsim.report.render_rich import fitted_table, grid_width
from gangsim.report.summary import Grid, fmt_delta_in, fmt_duration, is_section_row, metric_cell, row_unit, sectioned
from gangsim.report.waiting import short_reason

__all__ = [
    "ToneGrid",
    "diff_json",
    "diff_metrics_grid",
    "gang_changes_grid",
    "render_diff_json",
    "render_diff_markdown",
    "render_diff_terminal",
    "table_width",
    "verdict_lines",
    "window_line",
]

MARKERS = {"better": "🟢 ", "worse": "🔴 "}


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


def _wait(value: float | None) -> str:
    return "never" if value is None else fmt_duration(value)


def window_line(diff: Diff) -> str:
    """Which window every policy is compared over, and whose run was read past where it stopped."""
    if not diff.windows_s:
        return ""
    windows = sorted(set(diff.windows_s))
    if len(windows) > 1:
        each = ", ".join(f"{label} {fmt_duration(w)}" for label, w in zip(diff.labels, diff.windows_s, strict=True))
        return f"Windows differ (a replay hit its safety horizon): {each}."
    text = f"Window: 0 to {fmt_duration(windows[0])} for every policy"
    widened = [f"{label} stopped at {fmt_duration(n)}" for label, n, w in zip(diff.labels, diff.natural_s, diff.windows_s, strict=True) if n < w]
    if widened:
        text += " (the longest run; " + ", ".join(widened) + ", idle after)"
    return text + "."


LEGEND = (
    "Coloured only where one direction is right (README 'Which way is better'); "
    "(N never): gangs that never started, left out of '(started only)' percentiles, "
    "counted as waiting until the window's end in wait_censored_*."
)


# ---------------------------------------------------------------------------------------------
# Grids


def diff_metrics_grid(diff: Diff) -> ToneGrid:
    """metric | unit | baseline | other | Δ other | …, grouped under section rows; every value of
    a row in one unit (:func:`~gangsim.report.summary.row_unit`)."""
    others = diff.labels[1:]
    columns = ("metric", "unit", diff.baseline) + tuple(c for label in others for c in (label, f"Δ {label}"))
    numeric = (False, False) + (True,) * (len(columns) - 2)
    never = [flatten(s).get("gangs.never_started", 0) for s in diff.summaries]
    rows: list[tuple[str, ...]] = []
    tones: dict[str, tuple[str, ...]] = {}
    for m in diff.metrics:
        unit = row_unit(m.key, [*m.values, *m.deltas])
        row = [m.key, unit, metric_cell(m.key, unit, m.values[0], never[0])]
        tone_row = ["", "", ""]
        for i, (v, d, t) in enumerate(zip(m.values[1:], m.deltas, m.tones, strict=True), start=1):
            row += [metric_cell(m.key, unit, v, never[i]), fmt_delta_in(unit, d)]
            tone_row += [t, t]
        rows.append(tuple(row))
        tones[m.key] = tuple(tone_row)
    shown = sectioned(rows)
    keys = [m.key for m in diff.metrics]
    # the tones follow the rows; a section heading has none
    tone_rows, k = [], 0
    for row in shown:
        if is_section_row(row):
            tone_rows.append(("section",) + ("",) * (len(columns) - 1))
        else:
            tone_rows.append(tones[keys[k]])
            k += 1
    title = f"Summary: {diff.trace} (deltas against {diff.baseline})"
    return ToneGrid(title, columns, numeric, tuple(shown), tuple(tone_rows))


def gang_changes_grid(diff: Diff) -> ToneGrid:
    """gang | wait under each label | Δ against the baseline, for the gangs that changed most."""
    others = diff.labels[1:]
    columns = ("gang", f"wait {diff.baseline}") + tuple(c for label in others for c in (f"wait {label}", f"Δ {label}")) + ("why",)
    numeric = (False,) + (True,) * (len(columns) - 2) + (False,)
    rows, tones = [], []
    for g in diff.gangs:
        row = [g.gang, _wait(g.waits[0])]
        tone_row = ["", ""]
        for wait, d, t in zip(g.waits[1:], g.deltas, g.tones, strict=True):
            if d is not None:
                shown = fmt_delta_in("time", d)
            elif wait is None and g.waits[0] is None:
                shown = "="
            else:
                shown = "starts" if g.waits[0] is None else "never starts"
            row += [_wait(wait), shown]
            tone_row += [t, t]
        # the waiting reason under each run where the gang is still pending at the end
        row.append("; ".join(f"{label}: {short_reason(r)}" for label, r in zip(diff.labels, g.reasons, strict=True) if r))
        tone_row.append("")
        rows.append(tuple(row))
        tones.append(tuple(tone_row))
    return ToneGrid("Gangs whose wait changed most", columns, numeric, tuple(rows), tuple(tones))


def verdict_lines(diff: Diff) -> list[tuple[bool, str]]:
    """``(held, text)`` for every ``--fail-if``, in the order given."""
    return [(v.held, v.describe()) for v in diff.verdicts]


# ---------------------------------------------------------------------------------------------
# Terminal


def table_width(grid: ToneGrid) -> int:
    """Columns the side-by-side table needs (wider terminals get it, narrower the long layout)."""
    return grid_width(grid.columns, grid.rows)


def tone_table(grid: ToneGrid, width: int = 10_000) -> Group:
    """Side by side when it fits ``width``, else one block per row; delta columns are headed
    ``Δ`` (their label is the column to the left) to save width."""
    return fitted_table(grid.title, grid.columns, grid.numeric, grid.rows, width, tones=grid.tones,
                        header=lambda name: "Δ" if name.startswith("Δ ") else name)


def render_diff_terminal(diff: Diff, console: Console) -> None:
    """The comparison window, the summary side by side (green better, red worse than the
    baseline; long layout when the terminal is narrow), the gangs whose wait changed most, and
    each ``--fail-if``."""
    line = window_line(diff)
    if line:
        console.print(Text(line))
    console.print(tone_table(diff_metrics_grid(diff), console.width))
    console.print(Text(LEGEND, style="dim"))
    gangs = gang_changes_grid(diff)
    if gangs.rows:
        console.print(tone_table(gangs, console.width))
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
        if is_section_row(row):
            lines.append("| " + " | ".join([f"**{md_cell(row[0])}**"] + [""] * (len(row) - 1)) + " |")
            continue
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
    if window_line(diff):
        lines += ["", window_line(diff)]
    lines += ["", LEGEND]
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
            "waiting_reason": dict(zip(diff.labels, g.reasons, strict=True)),
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
        "window": {
            "window_s": dict(zip(diff.labels, diff.windows_s, strict=True)),
            "natural_horizon_s": dict(zip(diff.labels, diff.natural_s, strict=True)),
        },
    }


def render_diff_json(diff: Diff) -> bytes:
    return orjson.dumps(diff_json(diff), option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
