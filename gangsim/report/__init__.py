"""EventLog → Polars tables and a summary → terminal, Markdown, JSON and files.

The report layer reads only the :class:`gangsim.eventlog.EventLog` of a replay; it never imports
the scheduler or the simulator (STYLE §3). Everything is computed once, from :func:`build_report`
(``tables.py``, ``summary.py``: the summary at once, each table when first read); the renderers and
the writer only format and store it. Likewise
``diff.py`` compares runs and ``render_diff.py`` formats the comparison; ``render_plan.py``
formats the plans that ``gangsim.whatif`` computes and ``figures.py`` draws the plots
(matplotlib, imported lazily). Nothing here imports ``gangsim.whatif``.

::

    report = build_report(log)
    render_terminal(report, console)         # rich tables
    text = render_markdown(report)           # GitHub-flavoured Markdown
    data = render_json(report)               # summary.json bytes
    write_report(report, "out/")             # <table>.parquet, <table>.csv, summary.json; atomic
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from gangsim.eventlog import EventLog
from gangsim.report.render_json import render_json
from gangsim.report.render_markdown import render_markdown
from gangsim.report.render_rich import render_terminal
from gangsim.report.summary import build_summary
from gangsim.report.tables import TABLE_NAMES, build_tables
from gangsim.report.write import write_report

__all__ = [
    "TABLE_NAMES",
    "Report",
    "build_report",
    "render_json",
    "render_markdown",
    "render_terminal",
    "write_report",
]


@dataclass(frozen=True, eq=False)
class Report:
    """One replay's report.

    ``summary`` is exactly the ``summary.json`` structure, keys in declared order; ``tables`` maps
    ``gangs``, ``pods``, ``victims``, ``timeline``, ``events`` (in that order) to their frames.
    ``eq=False``: frames do not compare with ``==``; compare ``summary`` and ``frame.equals``.
    """

    summary: dict
    tables: Mapping[str, pl.DataFrame]  # a ``tables.Tables``: each built when first read
    # wall-clock measurements of this run (vary run to run: shown, never written to --out)
    timings: dict[str, Sequence[float]] = field(default_factory=dict)


def build_report(log: EventLog) -> Report:
    """All tables and the summary of one replay."""
    return Report(summary=build_summary(log), tables=build_tables(log), timings={k: array("d", v) for k, v in log.timings.items()})
