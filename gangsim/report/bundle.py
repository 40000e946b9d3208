"""Write a set of named files (``diff.json``, figures, ``report.html`` …) into a directory with the
same guarantee as the report tables: staged inside ``DIR/.gangsim/``, made visible in one atomic
switch, DIR as it was after a failure, previous or new complete set after a kill, files of the
current set that this call does not name kept (see :mod:`gangsim.report.write`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gangsim.report.write import commit_files

__all__ = ["write_files"]


def write_files(out_dir: str | Path, files: Mapping[str, bytes]) -> None:
    """Raises :class:`~gangsim.errors.OutputError` (exit 2) when the environment refuses a write."""
    commit_files(out_dir, {name: (lambda data=data: data) for name, data in files.items()})
