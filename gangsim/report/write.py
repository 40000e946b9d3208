"""``--out DIR``: every table as ``<table>.parquet`` and ``<table>.csv``, plus ``summary.json`` —
written so that DIR always shows one complete report, on any file system, DIR a mount point or not.

Layout. The files stay at the top of DIR (INTERFACE: "``--out DIR`` writes ``<table>.parquet`` and
``<table>.csv`` for every table, and ``summary.json``"), but each is a relative symlink into the
*current generation*, and the generation is chosen by one more symlink::

    DIR/gangs.parquet  -> .gangsim/current/gangs.parquet      (one such link per file, never changes)
    DIR/.gangsim/current -> 3f9c2a…                           (the one pointer that is switched)
    DIR/.gangsim/3f9c2a…/gangs.parquet …  summary.json        (the complete current report)

Writing (``commit_files``, also used by ``bundle.write_files`` for diff/plan/figures):

1. DIR is created if missing; an advisory ``flock`` on DIR serialises concurrent writers;
2. ``DIR/.gangsim/`` is cleaned of everything but the current generation (a stale staging folder or
   an old generation left by a killed run);
3. if a name about to be written is a plain file at the top of DIR (a report written by an earlier
   gangsim, or by hand), it is first adopted: a generation holding copies of those files is made
   current, then each plain file is swapped (``rename``) for its link — every intermediate state
   shows the same bytes as before;
4. the new generation is staged in ``DIR/.gangsim/<id>/`` (same file system as DIR, so no copy
   across devices ever happens): every new file, plus a hard link (or copy) of each file of the
   current generation that this write does not replace (figures next to a report, ``diff.md`` …);
   every file and the folder are fsynced;
5. a link ``DIR/<name>`` is made for every name that has none yet (it dangles until step 6);
6. **the switch**: a symlink ``.gangsim/current.<id>`` → ``<id>`` is renamed over
   ``.gangsim/current`` — one atomic ``rename(2)``;
7. the previous generation is removed (best effort: what is left is removed by the next write).

Guarantee. At every instant — in particular after a ``kill -9`` at any point — every top-level
report name resolves either entirely into the previous generation or entirely into the new one:
the previous complete report before step 6's rename, the new complete report from it on; never a
mix. Nothing is ever written outside DIR. A failure that raises (disk full, read-only, permission
denied, Ctrl-C) before the switch undoes steps 2–5's visible effects: DIR is as it was (DIR itself
is removed again if this call created it) and an :class:`~gangsim.errors.OutputError` names DIR and
the OS error. A kill before the switch can leave, besides the previous report, only
``DIR/.gangsim/<id>/`` and a dangling link for a name the previous report did not have; both read
as "not there" and the next write removes the folder. With power loss as well as kills in mind
the files are fsynced before the switch and DIR/.gangsim after it.

Reading. A report is complete when ``DIR/summary.json`` resolves; a reader that must not see a
concurrent writer's switch between two files resolves ``DIR/.gangsim/current`` once and reads
from that folder.

Bytes are deterministic: the same :class:`~gangsim.report.Report` gives identical Parquet, CSV and
JSON files (fixed compression, no timestamps). CSV: a null is an empty field, an empty string is
``""`` (the two survive a round trip), floats in Polars' shortest round-trip form (``250.0``).
Files are rendered in memory (a CSV file :data:`CSV_CHUNK_ROWS` rows at a time) and written with
``os.write``, so every I/O failure is an ``OSError`` with its errno.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from gangsim.errors import OutputError
from gangsim.report.render_json import render_json
from gangsim.report.tables import TABLE_NAMES, Tables

if TYPE_CHECKING:
    from gangsim.report import Report

__all__ = ["META_DIR", "SUMMARY_FILE", "commit_files", "report_files", "write_report"]

SUMMARY_FILE = "summary.json"
META_DIR = ".gangsim"
CURRENT = "current"
CSV_CHUNK_ROWS = 100_000  # rows of a CSV file rendered at a time (csv_chunks)


def report_files() -> tuple[str, ...]:
    """The file names ``write_report`` produces."""
    return tuple(f"{name}.{ext}" for name in TABLE_NAMES for ext in ("parquet", "csv")) + (SUMMARY_FILE,)


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd", statistics=True)
    return buf.getvalue()


def csv_chunks(frame: pl.DataFrame, rows: int = CSV_CHUNK_ROWS) -> Iterator[bytes]:
    """The CSV file of ``frame`` in pieces of ``rows`` rows, the header in the first: the same
    bytes as one ``write_csv`` (each value is rendered on its own), without ever holding a large
    table's whole text, once as ``str`` and once encoded, in memory."""
    for start in range(0, max(frame.height, 1), rows):
        piece = frame.slice(start, rows).write_csv(None, null_value="", line_terminator="\n", include_header=start == 0)
        yield piece.encode("utf-8")


def _report_contents(report: Report) -> dict[str, Callable[[], bytes | Iterable[bytes]]]:
    """Each file's bytes, rendered lazily, in order: a table is built (or taken from the report if
    something read it already) for its Parquet file, kept for its CSV file (a piece at a time) and
    dropped when the next table is built, so one table is in memory at a time."""
    tables = report.tables
    building: dict[str, pl.DataFrame] = {}  # the table whose files are being written

    def frame(name: str) -> pl.DataFrame:
        if name not in building:
            building.clear()
            building[name] = tables.build(name) if isinstance(tables, Tables) else tables[name]
        return building[name]

    contents: dict[str, Callable[[], bytes | Iterable[bytes]]] = {}
    for name in TABLE_NAMES:
        contents[f"{name}.parquet"] = lambda name=name: _parquet_bytes(frame(name))
        contents[f"{name}.csv"] = lambda name=name: csv_chunks(frame(name), CSV_CHUNK_ROWS)
    contents[SUMMARY_FILE] = lambda: render_json(report)
    return contents


def write_report(report: Report, out_dir: str | Path, extra: Mapping[str, bytes] | None = None) -> None:
    """Write all report files (and ``extra`` files such as figures, in the same switch) into
    ``out_dir``; see the module docstring. Raises :class:`~gangsim.errors.OutputError`."""
    contents = _report_contents(report)
    for name, data in (extra or {}).items():
        contents[name] = lambda data=data: data
    commit_files(out_dir, contents)


# --- the one place that changes the file system --------------------------------------------------


def _step(kind: str, path: str) -> None:
    """Called before every change to the file system; tests replace it to fail or "kill" there."""


def _abort(undo: list[Callable[[], None]]) -> None:
    """Undo a failed write's visible effects, newest first (tests replace it to simulate a kill)."""
    for action in reversed(undo):
        with contextlib.suppress(OSError):
            action()


def _write_file(path: str, data: bytes | Iterable[bytes]) -> None:
    _step("write", path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a directory be fsynced
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _link_target(name: str) -> str:
    return os.path.join(META_DIR, CURRENT, name)


def _is_our_link(path: str, name: str) -> bool:
    return os.path.islink(path) and os.readlink(path) == _link_target(name)


def _set_symlink(target: str, path: str, tmp: str) -> None:
    """Point ``path`` at ``target`` in one rename (``tmp`` is a free name in the same folder)."""
    _step("symlink", tmp)
    os.symlink(target, tmp)
    _step("rename", path)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _carry(src: str, dst: str) -> None:
    """``dst`` becomes a hard link to (or, where links are refused, a copy of) ``src``."""
    _step("link", dst)
    try:
        os.link(src, dst, follow_symlinks=True)
    except OSError:
        shutil.copyfile(src, dst)


def _current_generation(meta: str) -> str | None:
    try:
        name = os.readlink(os.path.join(meta, CURRENT))
    except OSError:
        return None
    return name if os.path.isdir(os.path.join(meta, name)) else None


@contextlib.contextmanager
def _locked(path: str) -> Iterator[None]:
    """An advisory lock on DIR for the whole write (no-op where flock is unsupported)."""
    try:
        import fcntl

        fd = os.open(path, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _clean_stale(meta: str, keep: str | None) -> None:
    for entry in os.listdir(meta):
        if entry in (CURRENT, keep):
            continue
        path = os.path.join(meta, entry)
        _step("clean", path)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _check_target(out: str, shown: str, names: list[str]) -> None:
    if os.path.lexists(out) and not os.path.isdir(out):
        raise OutputError(shown, f"[Errno {errno.ENOTDIR}] {os.strerror(errno.ENOTDIR)}")
    for name in names:
        if os.sep in name or name in ("", ".", "..", META_DIR) or (os.altsep and os.altsep in name):
            raise ValueError(f"not a plain file name: {name!r}")  # a bug in the caller
        path = os.path.join(out, name)
        if os.path.isdir(path) and not _is_our_link(path, name):
            raise OutputError(shown, f"{name} exists and is a directory")


def commit_files(out_dir: str | Path, contents: Mapping[str, Callable[[], bytes | Iterable[bytes]]]) -> None:
    """Make ``contents`` (name → its bytes, or its pieces in order) the files of ``out_dir``, in one switch (module docstring).

    Names already in the current generation and not in ``contents`` are kept. Raises
    :class:`~gangsim.errors.OutputError` (exit 2) for every ``OSError``, with DIR as it was.
    """
    shown = os.fspath(out_dir)
    out = os.path.abspath(shown)
    names = list(contents)
    _check_target(out, shown, names)
    undo: list[Callable[[], None]] = []
    try:
        try:
            if not os.path.isdir(out):
                parent = os.path.dirname(out)
                missing = []
                while not os.path.lexists(parent) and parent != os.path.dirname(parent):
                    missing.append(parent)
                    parent = os.path.dirname(parent)
                if not os.path.isdir(parent):  # a file where a folder should be
                    raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), parent)
                for path in reversed([out, *missing]):
                    _step("mkdir", path)
                    os.mkdir(path)
                    undo.append(lambda path=path: shutil.rmtree(path))
            with _locked(out):
                _commit_locked(out, contents, undo)
        except BaseException:
            _abort(undo)
            raise
    except OSError as exc:
        raise OutputError.from_os_error(shown, exc) from exc


def _commit_locked(out: str, contents: Mapping[str, Callable[[], bytes | Iterable[bytes]]], undo: list[Callable[[], None]]) -> None:
    meta = os.path.join(out, META_DIR)
    if not os.path.isdir(meta):
        _step("mkdir", meta)
        os.mkdir(meta)
        undo.append(lambda: shutil.rmtree(meta))
    current = _current_generation(meta)
    _clean_stale(meta, current)
    token = uuid.uuid4().hex[:16]

    # step 3: adopt plain files in the way, keeping their bytes visible throughout
    plain = [n for n in contents if os.path.lexists(os.path.join(out, n)) and not _is_our_link(os.path.join(out, n), n)]
    if plain:
        current = _adopt(out, meta, current, plain, f"{token}a", undo)

    # step 4: stage the new generation
    gen = os.path.join(meta, token)
    _step("mkdir", gen)
    os.mkdir(gen)
    undo.append(lambda: shutil.rmtree(gen))
    for name, render in contents.items():
        _write_file(os.path.join(gen, name), render())
    if current is not None:
        old = os.path.join(meta, current)
        for name in sorted(os.listdir(old)):
            if name not in contents:
                _carry(os.path.join(old, name), os.path.join(gen, name))
    _fsync_dir(gen)

    # step 5: a link for every name that has none
    for name in sorted(os.listdir(gen)):
        path = os.path.join(out, name)
        if not _is_our_link(path, name):
            _set_symlink(_link_target(name), path, os.path.join(meta, f"link.{token}.{name}"))
            undo.append(lambda path=path: os.unlink(path))

    # step 6: the switch
    _set_symlink(token, os.path.join(meta, CURRENT), os.path.join(meta, f"{CURRENT}.{token}"))
    undo.clear()  # the new report is visible: nothing to undo any more
    _fsync_dir(meta)

    # step 7: best effort; the next write removes what is left
    if current is not None:
        with contextlib.suppress(OSError):
            _step("clean", os.path.join(meta, current))
            shutil.rmtree(os.path.join(meta, current))


def _adopt(out: str, meta: str, current: str | None, plain: list[str], token: str, undo: list[Callable[[], None]]) -> str:
    """Step 3: a generation with the current one's files plus copies of ``plain``, made current,
    then each plain file swapped for its link. Returns the new generation's name."""
    gen = os.path.join(meta, token)
    _step("mkdir", gen)
    os.mkdir(gen)
    try:
        if current is not None:
            for name in os.listdir(os.path.join(meta, current)):
                if name not in plain:
                    _carry(os.path.join(meta, current, name), os.path.join(gen, name))
        for name in plain:
            src = os.path.join(out, name)
            if os.path.exists(src):  # a dangling symlink of someone else's stays "not there"
                _carry(src, os.path.join(gen, name))
        _fsync_dir(gen)
        _set_symlink(token, os.path.join(meta, CURRENT), os.path.join(meta, f"{CURRENT}.{token}"))
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(gen)
        raise
    # from here on, the adopted generation is current and shows the same bytes as the plain files:
    # a failure leaves DIR showing the previous report, which must not be undone
    undo.clear()
    if current is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(os.path.join(meta, current))
    for name in plain:
        _set_symlink(_link_target(name), os.path.join(out, name), os.path.join(meta, f"link.{token}.{name}"))
    return token
