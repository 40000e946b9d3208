"""Standard Workload Format (Parallel Workloads Archive, SWF v2.2) → gangsim.

Input: one ``.swf`` file, plain or gzip (recognised by its magic bytes). Header comment lines
(``; MaxProcs: 8192``) describe the machine; each other line is one job of 18 whitespace-separated
fields, ``-1`` meaning unknown. Lines are read as a stream; one compact row per job (numbers in
``array`` columns, ~60 bytes a job) is kept to sort by submit time (SWF logs are sorted already;
the sort is stable, so equal submit times keep file order). The job lines are decoded over
columns (``swf_columns``, 16,384 lines at a time) when they are plainly good, else line by line
(``swf_parse.parse_lines``, the reference, which names the first bad line);
``GANGSIM_REFERENCE_LOADER=1`` keeps to the reference.

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
import os
from collections.abc import Iterator, Sequence

import numpy as np

from gangsim.errors import InputError, UsageError
from gangsim.load.importers._common import (
    check_cluster_gpus,
    GPU,
    MAX_INT64,
    MAX_NODES_PER_POOL,
    MAX_PODS_PER_JOB,
    ImportOptions,
    Stats,
    check_options,
    check_pods,
    class_docs,
    create,
    delete,
    duration_text,
    gang_objects,
    priority_classes,
    trace_header,
    trace_name,
)
from gangsim.load.importers.swf_columns import parse_columns
from gangsim.load.importers.swf_parse import Header, Jobs, parse_lines
from gangsim.load.switches import reference_loader

OPTIONS = {"name", "limit", "priorities", "nodes", "cores_per_node", "pod_size", "resource", "cancelled"}
NAMESPACE = "swf"
WAIT_ANNOTATION = "swf.gangsim.dev/wait"


def parse(path: str, options: ImportOptions, stats: Stats) -> tuple[Header, Jobs]:
    """The header and the jobs to replay (``swf_parse``): decoded over columns when the file is
    plainly good (``swf_columns``), else line by line, which names the first bad line."""
    if not reference_loader():  # (GANGSIM_REFERENCE_LOADER=1: the line-by-line parse only)
        parsed = parse_columns(path, options, stats)
        if parsed is not None:
            return parsed
    return parse_lines(path, options, stats)


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
    submit_s = np.frombuffer(submit, dtype=np.float64)
    if bool((submit_s[1:] < submit_s[:-1]).any()):
        order = np.argsort(submit_s, kind="stable").tolist()
    used: dict[int, int] = {}
    deletes: list[tuple[float, int, list[tuple[str, str]]]] = []
    too_big = int(np.count_nonzero(np.frombuffer(jobs.procs, dtype=np.int64) > capacity))
    cut_s = None if until_ms is None else until_ms / 1000
    timed = False  # a job with a run time (a duration) has been written
    left: Sequence[int] = ()  # the jobs the cut leaves out (counted, not written)
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
    if len(left):  # the counts of the whole import
        stats.add("jobs", len(left))
        stats.add("pods", int((-(-np.frombuffer(jobs.procs, dtype=np.int64)[list(left)] // pod_size)).sum()))
    demand = sum(p * r for p, r in zip(jobs.procs, jobs.run) if r > 0)  # (in file order: the float sum as it always was)
    stats.offered_load(demand, capacity, min(submit, default=0.0), max(submit, default=0.0), "GPU" if resource == "gpu" else "core")
    if too_big:
        stats.note(f"{too_big} jobs ask for more processors than the cluster has ({capacity}): they never start")


def _deletes(item: tuple[float, int, list[tuple[str, str]]]) -> Iterator[dict]:
    at, _, objs = item
    for kind, name in reversed(objs):
        yield delete(at, kind, name, NAMESPACE)
