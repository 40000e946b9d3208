"""``swf_parse.parse_lines`` over columns (issue 16, RICC: 5.2 s of a 10 s three-day replay was
the line-by-line parse of the whole 447,794-job log).

The file is decoded as it is read; its lines are sorted into header and job lines by the same
rules and in the same order as the reference (a blank line is skipped, a line starting with ``;``
is a header line, ``--limit`` stops at its first job line past the limit). The job lines are
split and converted by Polars ``CHUNK`` lines at a time, and each job is sorted into kept or
skipped with numpy masks, by the reference's rules in the reference's order of checks.

It declines (returns None; the reference parse then runs and reports what it finds) whenever
anything is not plainly good, so it never has to name an error itself:

- the file cannot be read or decoded to its end (the reference names the line);
- a job line is not 18 tokens separated by spaces or tabs, or a token is not a plain decimal
  (``-?digits[.digits]``, ``.digits``): other spellings (``1e3``, ``1_000``, other whitespace)
  are the reference's business. For a plain decimal, Polars' and Python's ``float`` are the
  same correctly rounded double;
- a value the reference would reject: negative other than -1, a time past 100 years, an
  integer field past int64, a job that ran on 0 or a fractional number of processors, a
  cancellation time past 100 years.

The counts go into ``stats`` in the order the reference first counts them. Switched off (the
reference parse only) with the environment variable ``GANGSIM_REFERENCE_LOADER=1``;
``tests/importers/test_swf_columns.py`` holds both parses equal on the PWA logs and on
generated ones.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import numpy as np
import polars as pl

from gangsim.load.importers._common import MAX_SECONDS, ImportOptions, Stats
from gangsim.load.importers.swf_parse import (
    CANCELLED,
    CANCELLED_RUNNING,
    DELETED_CANCELLED,
    FAILED,
    FAILED_JOBS,
    FIELDS,
    SKIPPED_CANCELLED,
    SKIPPED_PROCS,
    SKIPPED_RUN,
    SKIPPED_SUBMIT,
    Header,
    Jobs,
)

TOKEN = r"[^ \t]+"
PLAIN = r"^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$"  # a plain decimal: float() and Polars agree
CHUNK = 16_384  # job lines decoded at once (RICC: 127 MiB peak for the parse, 2.7 s; 65,536: 170 MiB, the same time)
INT64_END = 2.0**63  # the least double past int64 (no double lies strictly between 2**63 - 1 and it)


@contextmanager
def _text_lines(path: str) -> Iterator[Iterator[str]]:
    """The file's lines as text, each ending at "\\n" only as the reference's (gzip by its magic
    bytes), decoded as they are read."""
    with open(path, "rb") as raw:
        stream: IO[bytes] = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
        with io.TextIOWrapper(stream, encoding="utf-8", newline="\n") as text:
            yield iter(text)


def _add(jobs: Jobs, counts: dict[str, list[int]], lines: list[str], numbers: list[int], first: int, options: ImportOptions) -> bool:
    """Append the kept jobs of ``lines`` (job lines ``first``, ``first + 1``, … of the file) to
    ``jobs`` and count the others in ``counts`` (key -> [first job line counted, count]), as the
    reference would; False (a decline) when it would reject one of them."""
    v = _values(lines)
    if v is None:
        return False
    if bool(((v < 0) & (v != -1)).any()) or bool((v[:, 1:4] > MAX_SECONDS).any()) or bool((v[:, [0, 4, 7, 10, 14]] >= INT64_END).any()):
        return False
    job_no, submit, wait, run, allocated = v[:, 0], v[:, 1], v[:, 2], v[:, 3], v[:, 4]
    requested, status, queue = v[:, 7], v[:, 10], v[:, 14]
    procs = np.where(allocated != -1, allocated, requested)
    timed = submit >= 0  # the reference's checks, in its order; each mask excludes the earlier ones
    before_start = timed & (status == CANCELLED) & (run <= 0)
    keep_cancelled = (options.cancelled or "skip") == "delete"
    skipped_cancelled = before_start & ((not keep_cancelled) | (wait < 0) | (procs <= 0))
    deleted = before_start & ~skipped_cancelled
    no_run = timed & ~before_start & (run < 0)
    counted = (timed & ~before_start & ~no_run) | deleted
    no_procs = counted & (procs == -1)
    kept = counted & ~no_procs
    end = np.where(deleted, submit + wait, -1.0)
    if bool((end > MAX_SECONDS).any()) or bool((kept & ((procs == 0) | (procs != np.floor(procs)))).any()):
        return False
    skips = (
        (SKIPPED_SUBMIT, ~timed), (SKIPPED_CANCELLED, skipped_cancelled), (DELETED_CANCELLED, deleted), (SKIPPED_RUN, no_run),
        (SKIPPED_PROCS, no_procs), (FAILED_JOBS, kept & (status == FAILED)), (CANCELLED_RUNNING, kept & (status == CANCELLED) & (run > 0)),
    )  # fmt: skip
    for key, mask in skips:
        n = int(np.count_nonzero(mask))
        if n:
            counts.setdefault(key, [first + int(np.argmax(mask)), 0])[1] += n
    rows = np.flatnonzero(kept)
    jobs.submit.frombytes(submit[rows].tobytes())
    jobs.run.frombytes(np.where(deleted, -1.0, run)[rows].tobytes())
    jobs.wait.frombytes(wait[rows].tobytes())
    jobs.procs.frombytes(procs[rows].astype(np.int64).tobytes())
    jobs.number.frombytes(job_no[rows].astype(np.int64).tobytes())
    jobs.queue.frombytes(queue[rows].astype(np.int64).tobytes())
    jobs.end.frombytes(end[rows].tobytes())
    jobs.line.frombytes(np.asarray(numbers, dtype=np.int64)[rows].tobytes())
    return True


def _values(lines: list[str]) -> np.ndarray | None:
    """(jobs × 18) values of the job lines, or None unless each is 18 plain decimals."""
    tokens = pl.Series(lines, dtype=pl.String).str.extract_all(TOKEN)
    if not (tokens.list.len() == len(FIELDS)).all():
        return None
    flat = tokens.explode()
    if not flat.str.contains(PLAIN).all():
        return None
    return flat.cast(pl.Float64, strict=True).to_numpy().reshape(-1, len(FIELDS))


def parse_columns(path: str, options: ImportOptions, stats: Stats) -> tuple[Header, Jobs] | None:
    """``parse_lines(path, options, stats)``'s result, or None (``stats`` untouched) when the
    file holds anything that parse would reject or that this one does not decode itself. The
    job lines are decoded ``CHUNK`` at a time (bounded memory: one chunk, and the columns kept)."""
    header, jobs = Header(), Jobs()
    counts: dict[str, list[int]] = {}
    lines: list[str] = []
    numbers: list[int] = []
    seen = 0  # job lines before ``lines``
    limit = options.limit
    try:
        with _text_lines(path) as text:
            for number, line in enumerate(text, start=1):
                stripped = (line[1:] if number == 1 and line.startswith("\ufeff") else line).strip()
                if not stripped:
                    continue
                if stripped[0] == ";":
                    header.add(stripped)
                    continue
                if limit is not None and seen + len(lines) >= limit:
                    break
                lines.append(stripped)
                numbers.append(number)
                if len(lines) == CHUNK:
                    if not _add(jobs, counts, lines, numbers, seen, options):
                        return None
                    seen += len(lines)
                    lines, numbers = [], []
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):  # the reference names the line
        return None
    if lines and not _add(jobs, counts, lines, numbers, seen, options):
        return None
    for key, (_, n) in sorted(counts.items(), key=lambda kv: kv[1][0]):  # each job counts under one key at most: first counted, first listed
        stats.add(key, n)
    return header, jobs
