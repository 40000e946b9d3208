"""Gavel's Philly-derived per-VC job streams (``traces/msr/seed=N/<vc>.trace``) → gangsim.

Input: ``*.trace`` files, or directories of them (read in name order; a ``cluster_specs.json``
beside them sizes the cluster). Each line is one job, 7 tab-separated columns (Gavel's older
format, no header): 1 job type (a Gavel model, e.g. ``ResNet-50 (batch size 128)``), 2 command,
3 steps argument, 4 needs-data-dir flag, 5 total steps, 6 arrival time (s, relative to the VC's
first job), 7 scale factor = number of GPUs.

What is real (see the dataset README): arrival times and GPU counts come from the Philly log.
What is not: the job type and the step count are Gavel's random draws, so **every duration here is
synthetic**. Choose how to turn the file into durations:

* ``--throughputs FILE`` — a Gavel throughputs JSON (``oracle_throughputs*.json``:
  ``{"v100": {"('<job type>', <scale>)": {"null": <steps/s>, …}, …}, …}``): duration = total steps
  / the V100 isolated throughput of that job type at that scale — the durations Gavel's own
  simulator gives these files;
* ``--steps-per-second R`` — duration = total steps / R;
* neither (default) — Gavel's synthetic-trace duration model (``scripts/utils/generate_trace.py``:
  1, 2, 3 or 4 hours, uniformly), drawn with ``--seed`` (default 0) in file order.

Durations are rounded up to whole seconds.

Cluster: ``--gpus-per-node`` (default 8) GPUs a node; ``--nodes``, else
⌈total GPUs of ``cluster_specs.json`` / GPUs per node⌉ (``{"philly": ["500:0:0"]}`` = 500 GPUs →
63 nodes); one ``NodePool`` ``philly``. Jobs: namespace ``vc-<file name>``, Job ``j<n>`` for the
file's n-th line (from 0). A job of g GPUs is split into pods of at most ``--pod-size`` GPUs
(default: a whole node), full pods plus one remainder pod (12 GPUs = 8 + 4); a multi-pod job is a
gang: ``PodGroup`` ``j<n>`` (``minCount`` = its pods) + ``Job`` ``j<n>`` (+ ``j<n>-r``), as for SWF.
The job type is kept as the annotation ``gavel.gangsim.dev/job-type``.

Priorities: optional, by VC: ``--priority 0e4a51=1000`` creates PriorityClass ``gavel-vc-0e4a51``
for that VC's jobs; other VCs keep priority 0.
"""

from __future__ import annotations

import ast
import math
import os
import re
from collections.abc import Iterator

import orjson

from gangsim.errors import InputError, UsageError
from gangsim.load.importers._common import (
    check_cluster_gpus,
    GPU,
    MAX_NODES_PER_POOL,
    ImportOptions,
    Stats,
    check_options,
    check_pods,
    check_seconds,
    class_docs,
    create,
    duration_text,
    field_error,
    gang_objects,
    parse_int,
    parse_seconds,
    priority_classes,
    read_lines,
    trace_header,
)

OPTIONS = {"name", "limit", "priorities", "nodes", "gpus_per_node", "pod_size", "throughputs", "steps_per_second", "seed"}
COLUMNS = ("job type", "command", "steps argument", "needs data dir", "total steps", "arrival time", "scale factor")
SPECS = "cluster_specs.json"
GAVEL_HOURS = (1.0, 2.0, 3.0, 4.0)  # np.linspace(1, 4, 4): generate_trace.py's defaults
WORKER = "v100"


def _column(i: int) -> str:
    return f"column {i + 1} ({COLUMNS[i]})"


def resolve_sources(sources: list[str]) -> tuple[list[str], list[str]]:
    """(trace files in order, cluster_specs.json files)."""
    traces: list[str] = []
    specs: list[str] = []
    for src in sources:
        if os.path.isdir(src):
            names = sorted(os.listdir(src))
            found = [os.path.join(src, n) for n in names if n.endswith(".trace")]
            if not found:
                raise InputError("no *.trace files in this directory", file=src)
            traces.extend(found)
            if SPECS in names:
                specs.append(os.path.join(src, SPECS))
        elif not os.path.exists(src):
            raise InputError("no such file or directory", file=src)
        elif os.path.basename(src) == SPECS or src.endswith(".json"):
            specs.append(src)
        else:
            traces.append(src)
    if not traces:
        raise InputError("gavel: no .trace file given", file=sources[0] if sources else None)
    return traces, specs


def cluster_gpus(specs: list[str]) -> int | None:
    total = 0
    for path in specs:
        try:
            with open(path, "rb") as f:
                data = orjson.loads(f.read())
        except (OSError, orjson.JSONDecodeError) as exc:
            raise InputError(f"cannot read cluster specs: {exc}", file=path) from None
        if not isinstance(data, dict):
            raise InputError('cluster specs must be an object like {"philly": ["500:0:0"]}', file=path)
        for cluster, entries in data.items():
            for entry in entries if isinstance(entries, list) else [entries]:
                try:
                    total += sum(int(x) for x in str(entry).split(":"))
                except ValueError:
                    raise InputError(f'{cluster}: Invalid value: "{entry}": must be GPU counts like "500:0:0"', file=path) from None
    return total or None


def load_throughputs(path: str) -> dict[tuple[str, int], float]:
    try:
        with open(path, "rb") as f:
            data = orjson.loads(f.read())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"cannot read throughputs: {exc}", file=path) from None
    table = data.get(WORKER) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise InputError(f'no "{WORKER}" worker type in this throughputs file', file=path)
    out: dict[tuple[str, int], float] = {}
    for key, value in table.items():
        try:
            job_type, scale = ast.literal_eval(key)
        except (ValueError, SyntaxError, TypeError):
            continue
        tput = value.get("null") if isinstance(value, dict) else value
        if isinstance(tput, (int, float)) and tput > 0:
            out[(str(job_type), int(scale))] = float(tput)
    if not out:
        raise InputError(f'no usable "{WORKER}" throughputs ({{"(\'<job type>\', <scale>)": {{"null": <steps/s>}}}})', file=path)
    return out


def _namespace(path: str) -> str:
    stem = os.path.basename(path).removesuffix(".trace")
    slug = re.sub(r"[^a-z0-9]+", "-", stem.lower()).strip("-") or "vc"
    return f"vc-{slug}"[:63]


def read(sources: list[str], options: ImportOptions, stats: Stats) -> Iterator[dict]:
    check_options("gavel", options, OPTIONS)
    if options.throughputs is not None and options.steps_per_second is not None:
        raise UsageError("give --throughputs or --steps-per-second, not both")
    if options.steps_per_second is not None and not options.steps_per_second > 0:
        raise UsageError(f"--steps-per-second: Invalid value: {options.steps_per_second}: must be positive")
    if options.seed is not None and (options.throughputs is not None or options.steps_per_second is not None):
        raise UsageError("--seed only applies to the default synthetic durations (no --throughputs, --steps-per-second)")
    traces, specs = resolve_sources(sources)
    gpn = options.gpus_per_node or 8
    if gpn <= 0:
        raise UsageError(f"--gpus-per-node: Invalid value: {gpn}: must be positive")
    pod_size = options.pod_size or gpn
    if not 0 < pod_size <= gpn:
        raise UsageError(f"--pod-size: Invalid value: {pod_size}: must be between 1 and --gpus-per-node ({gpn})")
    nodes = options.nodes
    if nodes is None:
        total = cluster_gpus(specs)
        if total is None:
            raise InputError(f"gavel: no {SPECS} next to the traces: give --nodes", file=traces[0])
        nodes = -(-total // gpn)
    if nodes <= 0:
        raise UsageError(f"--nodes: Invalid value: {nodes}: must be positive")
    if nodes > MAX_NODES_PER_POOL:
        if options.nodes is not None:
            raise UsageError(f"--nodes: Invalid value: {nodes}: must be no more than {MAX_NODES_PER_POOL}")
        raise InputError(f"{SPECS} gives {nodes:,} nodes of {gpn} GPUs: at most {MAX_NODES_PER_POOL:,} (give --nodes)", file=specs[0])
    tputs = load_throughputs(options.throughputs) if options.throughputs else None
    rng = None
    if tputs is None and options.steps_per_second is None:
        import numpy as np

        rng = np.random.default_rng(options.seed or 0)

    rows: list[tuple[float, int, int, str, str, int, float, str]] = []
    for file_index, path in enumerate(traces):
        namespace = _namespace(path)
        vc = namespace.removeprefix("vc-")
        index = 0
        for line, text in read_lines(path):
            if not text.strip():
                continue
            if options.limit is not None and len(rows) >= options.limit:
                break
            parts = text.split("\t")
            obj = f"{namespace}/j{index}"
            if len(parts) != len(COLUMNS):
                raise InputError(f"expected {len(COLUMNS)} tab-separated columns, found {len(parts)}: truncated or malformed line", file=path, line=line, obj=obj)
            job_type = parts[0].strip()
            if not job_type:
                raise field_error(path, line, obj, _column(0), "", "must not be empty")
            steps = parse_int(parts[4], path, line, obj, _column(4), lo=1)
            arrival = parse_seconds(parts[5], path, line, obj, _column(5))
            gpus = parse_int(parts[6], path, line, obj, _column(6), lo=1)
            check_pods(-(-gpus // pod_size), path, line, obj, _column(6), parts[6].strip())
            if tputs is not None:
                tput = tputs.get((job_type, gpus))
                if tput is None:
                    raise field_error(path, line, obj, _column(0), job_type, f"no {WORKER} throughput for ({job_type!r}, {gpus}) in {options.throughputs}")
                duration = steps / tput
            elif options.steps_per_second is not None:
                duration = steps / options.steps_per_second
            else:
                duration = GAVEL_HOURS[int(rng.integers(len(GAVEL_HOURS)))] * 3600
            check_seconds(duration, path, line, obj, _column(4), parts[4].strip())
            rows.append((float(arrival), file_index, index, namespace, vc, gpus, duration, job_type))
            index += 1
        if options.limit is not None and len(rows) >= options.limit:
            break
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    classes = priority_classes("gavel-vc", options.priorities)
    unknown = sorted(set(classes) - {r[4] for r in rows})
    if unknown:
        raise UsageError(f"--priority: no VC named {', '.join(unknown)} in the traces")
    name = options.name or ("philly-gavel" if len(traces) > 1 else f"philly-gavel-{_namespace(traces[0]).removeprefix('vc-')}")
    yield trace_header(name)
    yield from class_docs("gavel-vc", options.priorities)
    check_cluster_gpus(nodes * gpn, traces[0], None, None, f"{nodes:,} nodes of {gpn:,} GPUs")
    yield create(0, {"apiVersion": "gangsim.dev/v1alpha1", "kind": "NodePool", "metadata": {"name": "philly"}, "spec": {"count": nodes, "template": {"status": {"allocatable": {GPU: str(gpn)}}}}})
    stats.add("nodes", nodes)
    stats.add("GPUs", nodes * gpn)

    def requests(units: int) -> dict[str, str]:
        return {GPU: str(units)}

    too_big = 0
    for arrival, _, index, namespace, vc, gpus, duration, job_type in rows:
        if gpus > nodes * gpn:
            too_big += 1
        annotations = {"gangsim.dev/duration": duration_text(math.ceil(round(duration, 3))), "gavel.gangsim.dev/job-type": job_type}
        for obj in gang_objects(f"j{index}", namespace, gpus, pod_size, requests, annotations=annotations, priority_class=classes.get(vc, "")):
            yield create(arrival, obj)
        stats.add("jobs")
        stats.add("GPUs requested", gpus)
    stats.offered_load(sum(r[5] * r[6] for r in rows), nodes * gpn, rows[0][0] if rows else 0.0, rows[-1][0] if rows else 0.0, "GPU")
    if too_big:
        stats.note(f"{too_big} jobs ask for more GPUs than the cluster has ({nodes * gpn}): they never start")
