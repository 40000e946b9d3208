"""Parsing an SWF log into compact job columns (``swf.read`` turns them into records).

Two parses give the same ``Header``, ``Jobs`` and counts: :func:`parse_lines`, the reference,
line by line; and ``swf_columns.parse_columns``, which decodes every job line at once and
declines (the reference then runs, and names the bad line) whenever a line is not plainly good.
"""

from __future__ import annotations

import math
from array import array

from gangsim.errors import InputError, cut
from gangsim.load.importers._common import MAX_INT64, MAX_SECONDS, ImportOptions, Stats, check_seconds, field_error, read_lines

FIELDS = (
    "job number", "submit time", "wait time", "run time", "allocated processors", "average CPU time used",
    "used memory", "requested processors", "requested time", "requested memory", "status", "user id",
    "group id", "executable number", "queue number", "partition number", "preceding job number", "think time",
)  # fmt: skip
COMPLETED, FAILED, CANCELLED = 1, 0, 5

# the counts of jobs not replayed as they are (``gangsim import`` prints them), in one place for both parses
SKIPPED_SUBMIT = "jobs skipped (unknown submit time)"
SKIPPED_CANCELLED = "cancelled-before-start jobs skipped"
DELETED_CANCELLED = "cancelled-before-start jobs (deleted at cancellation)"
SKIPPED_RUN = "jobs skipped (unknown run time)"
SKIPPED_PROCS = "jobs skipped (unknown processor count)"
FAILED_JOBS = "failed jobs (replayed for their run time)"
CANCELLED_RUNNING = "jobs cancelled while running (replayed for their run time)"


def _field(i: int) -> str:
    return f"field {i + 1} ({FIELDS[i]})"


def _num(text: str, i: int, path: str, line: int, obj: str) -> float:
    """A field's value; -1 (unknown) is returned as -1, other negatives are errors."""
    try:
        value = float(text)
    except ValueError:
        raise field_error(path, line, obj, _field(i), text, "must be a number") from None
    if not math.isfinite(value):
        raise field_error(path, line, obj, _field(i), text, "must be a finite number")
    if value < 0 and value != -1:
        detail = "must be positive (or -1 for unknown)" if i in (4, 7) else "must not be negative (or -1 for unknown)"
        raise field_error(path, line, obj, _field(i), text, detail)
    return value


class Header:
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def add(self, text: str) -> None:
        body = text.lstrip(";").strip()
        key, sep, value = body.partition(":")
        if sep and key.strip() and " " not in key.strip() and key.strip() not in self.values:
            self.values[key.strip()] = value.strip()

    def int(self, key: str, path: str) -> int | None:
        text = self.values.get(key)
        if text is None:
            return None
        try:
            value = int(text.split()[0])
        except (ValueError, IndexError):
            raise InputError(f"header {key}: Invalid value: {cut(text)!r}: must be a positive integer", file=path) from None
        if value <= 0:
            raise InputError(f"header {key}: Invalid value: {cut(text)!r}: must be a positive integer", file=path)
        return value


class Jobs:
    """Compact columns of the jobs to replay."""

    def __init__(self) -> None:
        self.submit = array("d")
        self.run = array("d")  # -1: none (a cancelled job kept for --cancelled delete)
        self.wait = array("d")
        self.procs = array("q")
        self.number = array("q")
        self.queue = array("q")
        self.end = array("d")  # deletion time for --cancelled delete, else -1
        self.line = array("q")

    def __len__(self) -> int:
        return len(self.submit)


def parse_lines(path: str, options: ImportOptions, stats: Stats) -> tuple[Header, Jobs]:
    """The reference parse: line by line, each job's fields checked and sorted into kept or
    skipped (counted in ``stats``) in file order; the first bad line is the error."""
    header = Header()
    jobs = Jobs()
    keep_cancelled = (options.cancelled or "skip") == "delete"
    seen_jobs = 0
    for number, text in read_lines(path):
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            header.add(stripped)
            continue
        if options.limit is not None and seen_jobs >= options.limit:
            break
        seen_jobs += 1
        parts = stripped.split()
        obj = f"job {parts[0]}" if parts else None
        if len(parts) != len(FIELDS):
            raise InputError(f"expected {len(FIELDS)} whitespace-separated fields, found {len(parts)}: truncated or malformed line", file=path, line=number, obj=obj)
        try:
            values = list(map(float, parts))
            # every "-" of the line in a "-1" field (unknown) and a finite sum: no field is negative
            # other than -1, none infinite or NaN; otherwise the exact check decides
            bad = stripped.count("-") != parts.count("-1") or not math.isfinite(sum(values))
            bad = bad and (any(v < 0 and v != -1 for v in values) or not all(map(math.isfinite, values)))
        except ValueError:
            bad = True
        if bad:  # find the field to name
            values = [_num(text, i, path, number, obj) for i, text in enumerate(parts)]
        for i in (1, 2, 3):  # times: at most 100 years
            if values[i] > MAX_SECONDS:
                raise field_error(path, number, obj, _field(i), parts[i], "must be no more than 100 years")
        for i in (0, 4, 7, 10, 14):  # kept as int64
            if values[i] > MAX_INT64:
                raise field_error(path, number, obj, _field(i), parts[i], f"must be no more than {MAX_INT64}")
        job_no, submit, wait, run, allocated = values[0], values[1], values[2], values[3], values[4]
        requested, status, queue = values[7], values[10], values[14]
        if submit < 0:
            stats.add(SKIPPED_SUBMIT)
            continue
        procs = allocated if allocated != -1 else requested
        end = -1.0
        if status == CANCELLED and run <= 0:
            if not keep_cancelled or wait < 0 or procs <= 0:
                stats.add(SKIPPED_CANCELLED)
                continue
            end = submit + wait
            check_seconds(end, path, number, obj, _field(2), parts[2])
            run = -1.0
            stats.add(DELETED_CANCELLED)
        elif run < 0:
            stats.add(SKIPPED_RUN)
            continue
        if procs == -1:
            stats.add(SKIPPED_PROCS)
            continue
        if procs == 0:
            raise field_error(path, number, obj, _field(4), parts[4], "must be positive: a job that ran used at least one processor")
        if not float(procs).is_integer():
            raise field_error(path, number, obj, _field(4 if allocated != -1 else 7), parts[4 if allocated != -1 else 7], "must be an integer")
        if status == FAILED:
            stats.add(FAILED_JOBS)
        elif status == CANCELLED and run > 0:
            stats.add(CANCELLED_RUNNING)
        jobs.submit.append(submit)
        jobs.run.append(run)
        jobs.wait.append(wait)
        jobs.procs.append(int(procs))
        jobs.number.append(int(job_no))
        jobs.queue.append(int(queue))
        jobs.end.append(end)
        jobs.line.append(number)
    return header, jobs
