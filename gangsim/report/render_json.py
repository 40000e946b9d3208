"""The summary as JSON bytes: what ``--format json`` prints and ``summary.json`` holds.

orjson, 2-space indent, keys in declared order (never sorted: the order is part of the contract),
one trailing newline. The same bytes for the same report, always.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["render_json", "summary_json"]

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def summary_json(summary: dict) -> bytes:
    return orjson.dumps(summary, option=_OPTIONS)


def render_json(report: Report) -> bytes:
    """``summary.json`` bytes: orjson, indent 2, trailing newline."""
    return summary_json(report.summary)
