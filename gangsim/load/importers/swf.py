"""Standard Workload Format (Parallel Workloads Archive, SWF v2.2) → gangsim.

Input: one ``.swf`` file, plain or gzip (recognised by its magic bytes). Header comment lines
(``; MaxProcs: 8192``) describe the machine; each other line is one job of 18 whitespace-separated
fields, ``-1`` meaning unknown. Lines are read as a stream; one compact row per job (numbers in
``array`` columns, ~60 bytes a job) is kept to sort by submit time (SWF logs are sorted already;
the sort is stable, so equal submit times keep file order).

Cluster (from the header): ``cores_per_node`` = ``--cores-per-node``, else MaxProcs / MaxNodes
when the header has both, else 1; ``nodes`` = ``--nodes``, else ⌈MaxProcs / cores_per_node⌉
(MaxNodes when MaxProcs is absent). One ``NodePool`` ``swf`` of that many nodes.

Jobs: one line = one rigid job = one gang. Size = field 5 (allocated processors), field 8
(requested) when field 5 is unknown. Processors become the resource chosen with ``--resource``:
``gpu`` (default: one processor = one ``nvidia.com/gpu``, so gangsim's GPU columns — busy,
stranded, free while pending — measure processor-seconds) or ``cpu`` (cores). A job is split into
pods of at most ``--pod-size`` processors (default ``cores_per_node``): ⌊p / s⌋ full pods and one
pod with the remainder (a 12-processor job on 8-core nodes = one 8 and one 4 pod, so small jobs
share nodes as they did on the real, core-allocated machine). A one-pod job is a lone ``Job``;
a multi-pod job is a ``PodGroup`` ``j<id>`` with ``gang.minCount`` = its pods plus ``Job``
``j<id>`` (the full pods) and ``Job`` ``j<id>-r`` (the remainder pod), all in namespace ``swf``.
Arrival = field 2 (submit), ``gangsim.dev/duration`` = field 4 (run time); the recorded wait
(field 3) is kept as the annotation ``swf.gangsim.dev/wait`` to compare with the replay.

Statuses (field 11, per the SWF spec: 1 completed, 0 failed, 5 cancelled, -1 unknown):

* completed, failed and unknown-status jobs run for their recorded run time (a failed job held
  its processors until it failed); so does a job cancelled *while running* (status 5, run > 0);
* a job cancelled *before it started* (status 5, run time 0 or -1) did no work: skipped
  (``--cancelled skip``, default), or with ``--cancelled delete`` submitted at field 2 and deleted
  at its cancellation (submit + wait), holding its processors until then if gangsim starts it;
* any other job whose run time is -1 is skipped (nothing to replay); so is a job whose processor
  count is unknown in both fields 5 and 8; skips are counted on stderr;
* partial-execution lines (status 2, 3, 4; checkpointed or swapped jobs) are replayed as separate
  jobs; a repeated job number gets a ``-2``, ``-3`` … suffix.

Priorities: none by default. ``--priority 2=100`` creates PriorityClass ``swf-queue-2`` (value
100) for the jobs of queue 2 (field 15); jobs of unlisted queues keep priority 0.

Errors (exit 2, naming file:line, job and field): a line without 18 fields (truncated), a field
that is not a number, a negative value other than -1, a job of 0 processors that ran.
"""

from __future__ import annotations

import bisect
import math
import os
from array import array
from collections.abc import Iterator

from gangsim.errors import InputError, UsageError, cut
from gangsim.load.importers._common import (
    check_cluster_gpus,
    GPU,
    MAX_INT64,
    MAX_NODES_PER_POOL,
    MAX_PODS_PER_JOB,
    MAX_SECONDS,
    ImportOptions,
    Stats,
    check_options,
    check_pods,
    check_seconds,
    class_docs,
    create,
    delete,
    duration_text,
    field_error,
    gang_objects,
    priority_classes,
    read_lines,
    trace_header,
    trace_name,
)

OPTIONS = {"name", "limit", "priorities", "nodes", "cores_per_node", "pod_size", "resource", "cancelled"}
NAMESPACE = "swf"
FIELDS = (
    "job number", "submit time", "wait time", "run time", "allocated processors", "average CPU time used",
    "used memory", "requested processors", "requested time", "requested memory", "status", "user id",
    "group id", "executable number", "queue number", "partition number", "preceding job number", "think time",
)  # fmt: skip
WAIT_ANNOTATION = "swf.gangsim.dev/wait"
COMPLETED, FAILED, CANCELLED = 1, 0, 5


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


def parse(path: str, options: ImportOptions, stats: Stats) -> tuple[Header, Jobs]:
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
            stats.add("jobs skipped (unknown submit time)")
            continue
        procs = allocated if allocated != -1 else requested
        end = -1.0
        if status == CANCELLED and run <= 0:
            if not keep_cancelled or wait < 0 or procs <= 0:
                stats.add("cancelled-before-start jobs skipped")
                continue
            end = submit + wait
            check_seconds(end, path, number, obj, _field(2), parts[2])
            run = -1.0
            stats.add("cancelled-before-start jobs (deleted at cancellation)")
        elif run < 0:
            stats.add("jobs skipped (unknown run time)")
            continue
        if procs == -1:
            stats.add("jobs skipped (unknown processor count)")
            continue
        if procs == 0:
            raise field_error(path, number, obj, _field(4), parts[4], "must be positive: a job that ran used at least one processor")
        if not float(procs).is_integer():
            raise field_error(path, number, obj, _field(4 if allocated != -1 else 7), parts[4 if allocated != -1 else 7], "must be an integer")
        if status == FAILED:
            stats.add("failed jobs (replayed for their run time)")
        elif status == CANCELLED and run > 0:
            stats.add("jobs cancelled while running (replayed for their run time)")
        jobs.submit.append(submit)
        jobs.run.append(run)
        jobs.wait.append(wait)
        jobs.procs.append(int(procs))
        jobs.number.append(int(job_no))
        jobs.queue.append(int(queue))
        jobs.end.append(end)
        jobs.line.append(number)
    return header, jobs


def cluster_shape(header: Header, options: ImportOptions, path: str) -> tuple[int, int]:
    """(nodes, cores per node)."""
    max_procs = header.int("MaxProcs", path)
    max_nodes = header.int("MaxNodes", path)
    cpn = options.cores_per_node
    if cpn is None:
        if max_procs and max_nodes and max_procs % max_nodes == 0:
            cpn = max_procs // max_nodes
        else:
            cpn = 1
    if cpn <= 0:
        raise UsageError(f"--cores-per-node: Invalid value: {cpn}: must be positive")
    nodes = options.nodes
    if nodes is None:
        if max_procs:
            nodes = -(-max_procs // cpn)
        elif max_nodes:
            nodes = max_nodes
        else:
            raise InputError("the header gives neither MaxProcs nor MaxNodes: give --nodes (and --cores-per-node)", file=path)
    if nodes <= 0:
        raise UsageError(f"--nodes: Invalid value: {nodes}: must be positive")
    if nodes > MAX_NODES_PER_POOL:
        if options.nodes is not None:
            raise UsageError(f"--nodes: Invalid value: {nodes}: must be no more than {MAX_NODES_PER_POOL}")
        raise InputError(f"the header gives {nodes:,} nodes of {cpn} processors: at most {MAX_NODES_PER_POOL:,} (give --nodes and --cores-per-node)", file=path)
    if cpn > MAX_INT64 // 1000:
        raise InputError(f"{cpn} processors per node: at most {MAX_INT64 // 1000}", file=path)
    return nodes, cpn


def read(sources: list[str], options: ImportOptions, stats: Stats, until_ms: int | None = None) -> Iterator[dict]:
    """The records of one SWF import. ``until_ms`` (``gangsim run --horizon``, see
    ``gangsim.load.importers.records``): no record at or after it is written, since a replay with
    that horizon never applies one (the horizon is exclusive). The whole file is still read and
    checked, so its errors, the counts and the notes (offered load, jobs too big) are the full
    import's; the cut waits for a job with a run time, so the loader's "no duration" note is too."""
    check_options("swf", options, OPTIONS)
    if len(sources) != 1:
        raise UsageError(f"swf: give one SWF file, not {len(sources)}")
    path = sources[0]
    if os.path.isdir(path):
        raise InputError("is a directory: give one .swf or .swf.gz file", file=path)
    resource = options.resource or "gpu"
    if resource not in ("gpu", "cpu"):
        raise UsageError(f"--resource: Invalid value: {resource!r}: choose gpu or cpu")
    if options.cancelled not in (None, "skip", "delete"):
        raise UsageError(f"--cancelled: Invalid value: {options.cancelled!r}: choose skip or delete")
    header, jobs = parse(path, options, stats)
    nodes, cpn = cluster_shape(header, options, path)
    pod_size = options.pod_size or cpn
    if pod_size <= 0:
        raise UsageError(f"--pod-size: Invalid value: {pod_size}: must be positive")
    if pod_size > cpn:
        raise UsageError(f"--pod-size: Invalid value: {pod_size}: must not exceed the {cpn} cores of a node")
    name_key = GPU if resource == "gpu" else "cpu"
    if len(jobs) and -(-max(jobs.procs) // pod_size) > MAX_PODS_PER_JOB:  # (the first such job is named)
        for i in range(len(jobs)):  # before anything is written: no job beyond the loader's pods per Job
            procs = jobs.procs[i]
            check_pods(-(-procs // pod_size), path, jobs.line[i], f"job {jobs.number[i]}", "processors (field 5 or 8)", procs)

    def requests(units: int) -> dict[str, str]:
        return {name_key: str(units)}

    capacity = nodes * cpn
    classes = priority_classes("swf-queue", options.priorities)
    unknown = sorted(set(classes) - {str(q) for q in set(jobs.queue)})
    if unknown:
        raise UsageError(f"--priority: no jobs in queue {', '.join(unknown)} (field 15)")
    yield trace_header(options.name or trace_name(path))
    yield from class_docs("swf-queue", options.priorities)
    if resource == "gpu":
        check_cluster_gpus(nodes * cpn, path, None, None, f"{nodes:,} nodes of {cpn:,} processors (one GPU each)")
    alloc = {"cpu": str(cpn), GPU: str(cpn)} if resource == "gpu" else {"cpu": str(cpn)}
    yield create(0, {"apiVersion": "gangsim.dev/v1alpha1", "kind": "NodePool", "metadata": {"name": "swf"}, "spec": {"count": nodes, "template": {"metadata": {"labels": {"swf.gangsim.dev/machine": "swf"}}, "status": {"allocatable": alloc}}}})
    stats.add("nodes", nodes)
    stats.add("processors", capacity)
    n = len(jobs)
    submit = jobs.submit
    order: object = range(n)
    if any(submit[i] < submit[i - 1] for i in range(1, n)):
        import numpy as np

        order = np.argsort(np.frombuffer(submit, dtype=np.float64), kind="stable").tolist()
    used: dict[int, int] = {}
    deletes: list[tuple[float, int, list[tuple[str, str]]]] = []
    too_big = sum(1 for i in range(n) if jobs.procs[i] > capacity)
    cut_s = None if until_ms is None else until_ms / 1000
    timed = False  # a job with a run time (a duration) has been written
    left: object = ()  # the jobs the cut leaves out (counted, not written)
    for k, i in enumerate(order):
        at = submit[i]
        if cut_s is not None and at >= cut_s and timed:
            left = order[k:]
            break
        while deletes and deletes[0][0] <= at:
            yield from _deletes(deletes.pop(0))
        number = jobs.number[i]
        seen = used.get(number, 0) + 1
        used[number] = seen
        name = f"j{number}" if seen == 1 else f"j{number}-{seen}"
        procs = jobs.procs[i]
        run = jobs.run[i]
        timed = timed or run >= 0
        annotations: dict[str, str] = {}
        if run >= 0:
            annotations["gangsim.dev/duration"] = duration_text(run)
        if jobs.wait[i] >= 0:
            annotations[WAIT_ANNOTATION] = duration_text(jobs.wait[i])
        objs = gang_objects(name, NAMESPACE, procs, pod_size, requests, annotations=annotations, priority_class=classes.get(str(jobs.queue[i]), ""))
        for obj in objs:
            yield create(at, obj)
        stats.add("jobs")
        stats.add("pods", sum(o["spec"]["parallelism"] for o in objs if o["kind"] == "Job"))
        if jobs.end[i] >= 0:
            bisect.insort(deletes, (jobs.end[i], i, [(o["kind"], o["metadata"]["name"]) for o in objs]))
    for item in deletes:
        if cut_s is not None and item[0] >= cut_s and timed:
            break
        yield from _deletes(item)
    for i in left:  # the counts of the whole import
        stats.add("jobs")
        stats.add("pods", -(-jobs.procs[i] // pod_size))
    demand = sum(jobs.procs[i] * jobs.run[i] for i in range(n) if jobs.run[i] > 0)
    stats.offered_load(demand, capacity, min(submit, default=0.0), max(submit, default=0.0), "GPU" if resource == "gpu" else "core")
    if too_big:
        stats.note(f"{too_big} jobs ask for more processors than the cluster has ({capacity}): they never start")


def _deletes(item: tuple[float, int, list[tuple[str, str]]]) -> Iterator[dict]:
    at, _, objs = item
    for kind, name in reversed(objs):
        yield delete(at, kind, name, NAMESPACE)
