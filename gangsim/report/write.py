"""``--out DIR``: every table as ``<table>.parquet`` and ``<table>.csv``, plus ``summary.json``.

INTERFACE rule 1: nothing is left in DIR from a failed run. So:

1. every file is written into a fresh temporary directory next to DIR (same parent, hence the same
   file system: ``os.replace`` is a rename), named ``.<DIR>.tmp-XXXX``;
2. DIR is created if needed and each file is moved in with ``os.replace``; a file of the same name
   from an earlier run is first moved aside into the temporary directory;
3. if anything fails, the files already moved in are taken out again, the earlier ones put back,
   DIR removed if this call created it, and the exception re-raised. The temporary directory is
   always removed — except when putting an earlier file back itself failed: then it is kept (its
   path is added to the exception's notes) so nothing of the earlier run is lost.

Bytes are deterministic: the same :class:`~gangsim.report.Report` gives identical Parquet, CSV and
JSON files (fixed compression, no timestamps). CSV: a null is an empty field, an empty string is
``""`` (the two survive a round trip), floats in Polars' shortest round-trip form (``250.0``). ``summary.json`` is moved in last, so its presence marks a complete report.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from gangsim.errors import InputError
from gangsim.report.render_json import render_json
from gangsim.report.tables import TABLE_NAMES

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["SUMMARY_FILE", "report_files", "write_report"]

SUMMARY_FILE = "summary.json"


def report_files() -> tuple[str, ...]:
    """The file names ``write_report`` produces, in the order they are moved into DIR."""
    return tuple(f"{name}.{ext}" for name in TABLE_NAMES for ext in ("parquet", "csv")) + (SUMMARY_FILE,)


def _write_parquet(frame: pl.DataFrame, path: Path) -> None:
    frame.write_parquet(path, compression="zstd", statistics=True)


def _write_csv(frame: pl.DataFrame, path: Path) -> None:
    frame.write_csv(path, null_value="", line_terminator="\n", include_header=True)


def _write_summary(report: Report, path: Path) -> None:
    path.write_bytes(render_json(report))


def _stage(report: Report, staging: Path) -> list[str]:
    """Write every file into ``staging``; return their names in commit order."""
    for name in TABLE_NAMES:
        frame = report.tables[name]
        _write_parquet(frame, staging / f"{name}.parquet")
        _write_csv(frame, staging / f"{name}.csv")
    _write_summary(report, staging / SUMMARY_FILE)
    return list(report_files())


def _commit(names: list[str], staging: Path, backup: Path, out: Path) -> None:
    """Move the staged files into ``out``; on failure undo every move, then re-raise."""
    created = not out.is_dir()
    out.mkdir(exist_ok=True)
    moved: list[tuple[str, bool]] = []  # (name, an earlier file was moved aside)
    try:
        for name in names:
            target = out / name
            had_old = target.exists() or target.is_symlink()
            if had_old:
                os.replace(target, backup / name)
            moved.append((name, had_old))
            os.replace(staging / name, target)
    except BaseException as exc:
        if not _rollback(moved, backup, out):
            exc.add_note(f"earlier report files could not all be put back into {out}; they are in {backup}")
        if created:
            try:
                out.rmdir()
            except OSError:
                pass  # not empty: what is left was not written by this call
        raise


def _rollback(moved: list[tuple[str, bool]], backup: Path, out: Path) -> bool:
    ok = True
    for name, had_old in reversed(moved):
        target = out / name
        try:
            if had_old:
                os.replace(backup / name, target)
            else:
                target.unlink(missing_ok=True)
        except OSError:
            ok = False
    return ok


def write_report(report: Report, out_dir: str | Path) -> None:
    """Write all report files into ``out_dir``, all or nothing (see the module docstring).

    Raises :class:`~gangsim.errors.InputError` when ``out_dir`` (or a parent) exists and is not a
    directory.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory")
    absolute = Path(os.path.abspath(out))
    parent = absolute.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create {parent}: {exc.strerror or exc}") from None
    tmp = Path(tempfile.mkdtemp(prefix=f".{absolute.name or 'out'}.tmp-", dir=parent))
    staging = tmp / "new"
    backup = tmp / "old"
    done = False
    try:
        staging.mkdir()
        backup.mkdir()
        _commit(_stage(report, staging), staging, backup, absolute)
        done = True
    finally:
        # after a failure, an earlier run's file still in ``backup`` means the rollback failed: keep it
        if done or not (backup.is_dir() and any(backup.iterdir())):
            shutil.rmtree(tmp, ignore_errors=True)
