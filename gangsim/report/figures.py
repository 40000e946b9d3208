"""``--plot``: PNG figures and the self-contained ``report.html`` (optional extra ``gangsim[plot]``).

matplotlib is imported lazily, inside the functions, and only through ``matplotlib.figure.Figure``
(no pyplot, no global backend state: the Agg canvas renders the PNG). Without matplotlib,
:func:`require_matplotlib` raises the usage error the CLI turns into exit 2 — before any replay.

The series come computed from ``gangsim.report.plots`` (or ``gangsim.report.render_plan`` for
the planner); this module only draws. The rest of ``report/`` never imports matplotlib. Files:

- ``gpu_state.png`` — GPUs busy / stranded / free while pods pend / free, stacked over time, one
  panel per policy (whole ``nvidia.com/gpu``); with shared GPUs, GPU-equivalents allocated and
  busy drawn as lines over them;
- ``gang_wait_cdf.png`` — the CDF of gang wait, one line per policy;
- ``victims.png`` — cumulative preemption victims (solid) and victims in vain (dashed);
- ``gang_timeline.png`` — a Gantt chart of the gangs by arrival (waiting / partially running /
  running, preemptions of their pods), the longest waits labelled (``gangsim.report.timeline``);
  ``gangsim explain --plot`` draws one gang's with its attempts and victims (:func:`explain_figure`);
- ``plan_<pool>.png`` — each target metric against the pool's node count;
- ``report.html`` — the tables, the figures (base64) and the data as JSON.

PNG bytes carry no timestamp or software version (``metadata={"Software": None}``).
"""

from __future__ import annotations

import importlib.util
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gangsim.errors import UsageError
from gangsim.report.html import Block, Heading, Image, Paragraph, render_html
from gangsim.report.plots import plots_data

if TYPE_CHECKING:
    from gangsim.report import Report
    from gangsim.report.render_plan import PlannedPool

__all__ = ["PLOT_FILES", "explain_figure", "plan_figure", "plan_files", "report_files", "require_matplotlib"]

PLOT_FILES = ("gpu_state.png", "gang_wait_cdf.png", "victims.png", "gang_timeline.png", "report.html")
PHASE_STYLE = {  # gang timeline phase → (legend, colour)
    "waiting": ("waiting", "#f9a825"),
    "partial": ("partially running (some pods bound)", "#ef6c00"),
    "running": ("running", "#2e7d32"),
}
INSTALL_HINT = "pip install 'gangsim[plot]'"

STATE_STYLE = {  # series → (legend, colour)
    "busy": ("busy (gang making progress)", "#2e7d32"),
    "stranded": ("stranded (gang not making progress)", "#c62828"),
    "free_while_pending": ("free while GPU pods pend", "#f9a825"),
    "free": ("free, nothing pending", "#cfd8dc"),
}
EQUIV_STYLE = {  # shared GPUs: GPU-equivalents (GPU-milli / 1000) as lines over the whole-GPU areas
    "equiv_allocated": ("allocated, shared GPUs by their share (GPU-equivalents)", "--"),
    "equiv_busy": ("busy, shared GPUs by their share (GPU-equivalents)", ":"),
}
LINE_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def require_matplotlib(option: str = "--plot") -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(f"{option} needs matplotlib: {INSTALL_HINT}")


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# run / diff


def gpu_state_png(trace: str, series: dict[str, dict[str, list]]) -> bytes:
    labels = list(series)
    fig = _figure(10, 1.2 + 2.4 * len(labels))
    axes = fig.subplots(len(labels), 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(f"GPU state over time — {trace}", fontsize=13)
    handles = []
    for ax, label in zip(axes, labels, strict=True):
        s = series[label]
        x = s["t_h"]
        bottom = [0.0] * len(x)
        for key, (name, colour) in STATE_STYLE.items():
            top = [b + v for b, v in zip(bottom, s[key], strict=True)]
            h = ax.fill_between(x, bottom, top, step="post", color=colour, linewidth=0, label=name)
            if ax is axes[0]:
                handles.append(h)
            bottom = top
        for key, (name, style) in EQUIV_STYLE.items():
            if key in s:
                (h,) = ax.step(x, s[key], where="post", color="#263238", linestyle=style, linewidth=1.2, label=name)
                if ax is axes[0]:
                    handles.append(h)
                bottom = [max(b, v) for b, v in zip(bottom, s[key], strict=True)]
        ax.set_title(f"policy {label}", loc="left", fontsize=10)
        ax.set_ylabel("GPUs")
        ax.set_ylim(0, max(bottom + [1]) * 1.05)
        ax.set_xlim(0, x[-1] if x else 1)
        ax.margins(x=0)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xlabel("simulated time (hours)")
    fig.legend(handles=handles, loc="outside lower center", ncols=4 if len(handles) <= 4 else 2, fontsize=9, frameon=False)
    return _png(fig)


WAIT_TICKS_H = ((0.0, "0"), (1 / 60, "1 min"), (10 / 60, "10 min"), (1.0, "1 h"), (10.0, "10 h"), (100.0, "100 h"), (1000.0, "1000 h"))


def _widths(n: int) -> list[float]:
    """Line widths, widest first: lines drawn later sit inside earlier ones, so equal curves stay visible."""
    return [2.0 + 2.0 * (n - 1 - i) for i in range(n)]


def gang_wait_cdf_png(trace: str, series: dict[str, dict[str, Any]]) -> bytes:
    """Step CDF per policy. When waits span more than an hour, the x axis is linear up to 1 min and
    logarithmic above it (most gangs of a busy day start at once; a few wait for hours)."""
    fig = _figure(8, 4.8)
    ax = fig.subplots()
    longest = max([0.0] + [w for s in series.values() for w in s["wait_h"]])
    right = longest * 1.15 if longest > 0 else 1.0
    widths = _widths(len(series))
    for i, (label, s) in enumerate(series.items()):
        waits, fractions = list(s["wait_h"]), list(s["fraction"])
        legend = f"{label}: {s['started']}/{s['gangs']} gangs started"
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        if waits:
            xs = [0.0] + waits + [right]
            ys = [0.0] + fractions + [fractions[-1]]
            ax.step(xs, ys, where="post", color=colour, linewidth=widths[i], label=legend, solid_joinstyle="miter")
        else:
            ax.plot([], [], color=colour, linewidth=widths[i], label=legend)
    if longest > 1.0:
        ax.set_xscale("symlog", linthresh=1 / 60, linscale=0.5)
        ticks = [(t, text) for t, text in WAIT_TICKS_H if t <= right]
        ax.set_xticks([t for t, _ in ticks], [text for _, text in ticks])
        ax.set_xlabel("gang wait: submission to first progress (hours; log scale above 1 min)")
    else:
        ax.set_xlabel("gang wait: submission to first progress (hours)")
    if longest == 0 and any(s["wait_h"] for s in series.values()):
        ax.text(0.5, 0.5, "every started gang started at once (wait 0)", transform=ax.transAxes, ha="center", va="center", color="#666", fontsize=11)
    ax.set_xlim(0, right)
    ax.set_ylim(0, 1.03)
    ax.set_ylabel("fraction of all gangs started")
    ax.set_title(f"Gang wait CDF — {trace}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=9)
    return _png(fig)


def victims_png(trace: str, series: dict[str, dict[str, list]]) -> bytes:
    """Two panels: all victims, and victims in vain (cumulative pods), one line per policy."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(8, 6)
    axes = fig.subplots(2, 1, sharex=True)
    fig.suptitle(f"Preemption victims over time — {trace}", fontsize=13)
    widths = _widths(len(series))
    end = max([1.0] + [s["t_h"][-1] for s in series.values()])
    for ax, key, title in ((axes[0], "victims", "victims (cumulative pods)"), (axes[1], "in_vain", "victims in vain (cumulative pods)")):
        top = 0
        for i, (label, s) in enumerate(series.items()):
            colour = LINE_COLOURS[i % len(LINE_COLOURS)]
            ax.step(s["t_h"], s[key], where="post", color=colour, linewidth=widths[i], label=f"{label} ({s[key][-1]})")
            top = max(top, s[key][-1])
        if top == 0:
            ax.text(0.5, 0.5, "none", transform=ax.transAxes, ha="center", va="center", color="#666", fontsize=12)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, max(top, 1) * 1.12)
        ax.set_xlim(0, end)
        ax.set_ylabel("pods")
        ax.set_title(title, loc="left", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=9)
    axes[1].set_xlabel("simulated time (hours)")
    return _png(fig)


def _phases(ax: Any, y: float, row: dict, height: float = 0.7) -> None:
    for phase, (_, colour) in PHASE_STYLE.items():
        span = row.get(phase)
        if span is not None and span[1] > span[0]:
            ax.broken_barh([(span[0], span[1] - span[0])], (y - height / 2, height), color=colour, linewidth=0)
    if row["preempted"]:
        ax.scatter(row["preempted"], [y] * len(row["preempted"]), marker="x", color="#c62828", s=28, zorder=3, linewidths=1.5)


def _phase_legend(fig: Any, extra: Sequence[Any] = ()) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=c, label=name) for name, c in PHASE_STYLE.values()]
    handles.append(Line2D([], [], marker="x", color="#c62828", linestyle="", label="pods preempted"))
    fig.legend(handles=handles + list(extra), loc="outside lower center", ncols=4, fontsize=9, frameon=False)


def gang_timeline_png(trace: str, series: dict[str, dict]) -> bytes:
    """Gantt chart per policy: one row per gang by arrival, its phases, preemptions of its pods
    and the longest waits labelled."""
    labels = list(series)
    n = max([1] + [s["shown"] for s in series.values()])
    fig = _figure(10, max(3.2, 1.4 + len(labels) * (0.6 + 0.22 * n)))
    axes = fig.subplots(len(labels), 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(f"Gang timeline — {trace}", fontsize=13)
    for ax, label in zip(axes, labels, strict=True):
        s = series[label]
        rows = s["rows"]
        for i, row in enumerate(rows):
            _phases(ax, i, row)
            if row["label"]:
                ax.annotate(row["label"], (row["waiting"][1], i), xytext=(4, 0), textcoords="offset points", va="center", fontsize=8, color="#444")
        ax.set_yticks(range(len(rows)), [r["gang"] for r in rows], fontsize=8)
        ax.set_ylim(len(rows) - 0.5 if rows else 0.5, -0.5)
        ax.set_xlim(0, max(s["horizon_h"], 1e-6))
        more = f" (first {s['shown']} of {s['gangs']} gangs by arrival)" if s["shown"] < s["gangs"] else ""
        ax.set_title(f"policy {label}{more}", loc="left", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        if not rows:
            ax.text(0.5, 0.5, "no gangs", transform=ax.transAxes, ha="center", va="center", color="#666")
    axes[-1].set_xlabel("simulated time (hours)")
    _phase_legend(fig)
    return _png(fig)


def explain_figure(doc: dict) -> bytes:
    """``gangsim explain --plot``: the one gang's phases, its scheduling attempts (ticks: placed
    all / some / none) and the victims it triggered (triangles; hollow: in vain)."""
    from matplotlib.lines import Line2D

    require_matplotlib()
    h = doc["history"]
    horizon_h = max([h["finished_s"] or 0, h["started_s"] or 0] + [a["t_s"] for a in h["attempts"]] + [e["t_s"] for e in h["events"]]) / 3600 or 1e-6
    start, end = h["started_s"], h["finished_s"]
    arrival = h["arrival_s"]
    row = {
        "waiting": [arrival / 3600, (start if start is not None else horizon_h * 3600) / 3600],
        "partial": None,
        "running": [start / 3600, (end if end is not None else horizon_h * 3600) / 3600] if start is not None else None,
        "preempted": [v["t_s"] / 3600 for v in h["victims_suffered"]],
    }
    fig = _figure(10, 3.4)
    ax = fig.subplots()
    _phases(ax, 1, row)
    colours = {True: "#2e7d32", False: "#c62828"}
    for a in h["attempts"]:
        ax.plot([a["t_s"] / 3600] * 2, [0.15, 0.45], color=colours[a["unplaced"] == 0], linewidth=1)
    victims = h["victims_triggered"]
    if victims:
        ax.scatter([v["t_s"] / 3600 for v in victims], [-0.25] * len(victims), marker="v", s=40,
                   facecolors=["none" if v["in_vain"] else "#6a1b9a" for v in victims], edgecolors="#6a1b9a", zorder=3)  # fmt: skip
    ax.set_yticks([1, 0.3, -0.25], [doc["target"]["name"], "attempts", "victims"], fontsize=9)
    ax.set_ylim(-0.7, 1.6)
    ax.set_xlim(0, horizon_h)
    ax.set_xlabel("simulated time (hours)")
    ax.set_title(f"{doc['target']['kind']} {doc['target']['name']} — {doc['trace']} (policy {doc['policy']})", loc="left", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    extra = [
        Line2D([], [], color="#2e7d32", label="attempt: every pod placed"),
        Line2D([], [], color="#c62828", label="attempt: some pod unplaced"),
        Line2D([], [], marker="v", color="#6a1b9a", linestyle="", label="victim (hollow: in vain)"),
    ]
    _phase_legend(fig, extra)
    return _png(fig)


def report_files(kind: str, labels: Sequence[str], reports: Sequence[Report], tables: Sequence[Block], title: str) -> dict[str, bytes]:
    """The PNGs and ``report.html`` of a run (``kind="run"``) or a diff (``kind="diff"``)."""
    require_matplotlib()
    data = plots_data(kind, labels, reports)
    trace = data["trace"]
    series = data["series"]
    pngs = {
        "gpu_state.png": (gpu_state_png(trace, series["gpu_state"]), "GPU state over time: busy, stranded, free while pending, free"),
        "gang_wait_cdf.png": (gang_wait_cdf_png(trace, series["gang_wait_cdf"]), "CDF of gang wait"),
        "victims.png": (victims_png(trace, series["victims"]), "Preemption victims over time"),
        "gang_timeline.png": (gang_timeline_png(trace, series["gang_timeline"]), "Gang timeline: waiting, partially running, running, preempted"),
    }
    blocks: list[Block] = list(tables)
    blocks.append(Heading("Figures"))
    blocks.extend(Image(name, png, alt) for name, (png, alt) in pngs.items())
    files = {name: png for name, (png, _) in pngs.items()}
    files["report.html"] = render_html(title, blocks, data)
    return files


# ---------------------------------------------------------------------------------------------
# plan


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plan_figure(trace: str, label: str, plan: PlannedPool, series: dict[str, Any]) -> bytes:
    """Every target metric against the pool's node count; threshold lines, meets / fails marks."""
    keys = list(series["targets"])
    fig = _figure(8.5, 1.0 + 3.2 * max(len(keys), 1))
    axes = fig.subplots(max(len(keys), 1), 1, sharex=True, squeeze=False)[:, 0]
    fig.suptitle(f"plan: NodePool {plan.pool} — {trace} (policy {label})", fontsize=12)
    sizes = series["sizes"]
    meets = series["meets"]
    for ax, key in zip(axes, keys, strict=False):
        values = [float("nan") if v is None else v for v in series["metrics"][key]]  # undefined: a gap
        ax.plot(sizes, values, color="#999", linewidth=1, zorder=1)
        ok = [(s, v) for s, v, m in zip(sizes, values, meets, strict=True) if m]
        bad = [(s, v) for s, v, m in zip(sizes, values, meets, strict=True) if not m]
        if ok:
            ax.scatter(*zip(*ok, strict=True), color="#2e7d32", marker="o", s=36, zorder=3, label="meets every target")
        if bad:
            ax.scatter(*zip(*bad, strict=True), color="#c62828", marker="x", s=40, zorder=3, label="misses a target")
        for threshold in series["thresholds"].get(key, []):
            ax.axhline(threshold["value"], color="#555", linestyle="--", linewidth=1, label=f"target: {threshold['expr']}")
        if plan.answer is not None:
            ax.axvline(plan.answer, color="#1f77b4", linestyle=":", linewidth=1.5, label=f"answer: {plan.answer} nodes")
        unit = " (s)" if key.endswith("_s") else ""
        ax.set_ylabel(key + unit)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    gpus = f", {plan.gpus_per_node} GPUs each" if plan.gpus_per_node else ""
    axes[-1].set_xlabel(f"nodes in NodePool {plan.pool}{gpus}")
    return _png(fig)


def plan_files(trace: str, label: str, plans: Sequence[PlannedPool], series: Sequence[dict[str, Any]], tables: Sequence[Block], data: dict, title: str) -> dict[str, bytes]:
    require_matplotlib()
    files: dict[str, bytes] = {}
    blocks: list[Block] = list(tables)
    blocks.append(Heading("Figures"))
    for plan, s in zip(plans, series, strict=True):
        name = f"plan_{_safe(plan.pool)}.png"
        png = plan_figure(trace, label, plan, s)
        files[name] = png
        blocks.append(Image(name, png, f"target metrics against the node count of {plan.pool}"))
    if not plans:
        blocks.append(Paragraph("No pool planned."))
    files["report.html"] = render_html(title, blocks, data)
    return files
