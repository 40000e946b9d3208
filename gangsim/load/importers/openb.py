"""Alibaba cluster-trace-gpu-v2023 ("openb", the FGD / ATC'23 trace) → gangsim.

Sources: a directory holding the CSVs (it supplies ``openb_node_list_all_node.csv`` and
``openb_pod_list_default.csv``), and/or the CSV files themselves; a file is recognised by its
header (``sn,…`` a node list, ``name,…`` a pod list). An explicit file wins over the directory's
default: ``gangsim import openb DIR DIR/openb_pod_list_gpushare40.csv`` replays a variant on the
full cluster. Exactly one node list and one pod list.

Mapping (units as the dataset README gives them):

* **Nodes**: one ``Node`` per row, named as in the trace (``sn``). ``status.allocatable``:
  ``cpu`` = ``cpu_milli`` millicores, ``memory`` = ``memory_mib`` MiB, ``nvidia.com/gpu`` =
  ``gpu`` and ``alibaba.com/gpu-milli`` = 1000 × ``gpu``; the GPU model is the node label
  ``alibaba.com/gpu-model`` (GPU nodes only). CPU-only nodes have neither GPU resource.
* **Pods**: one bare ``Pod`` per row in namespace ``openb`` (the trace has no multi-pod jobs),
  label ``alibaba.com/qos`` = ``qos``. Arrival = ``creation_time`` (seconds).
  A pod that was scheduled (``scheduled_time`` set) runs for ``deletion_time − scheduled_time``
  (``gangsim.dev/duration``; the recorded run, whatever its final phase: Running pods have a
  deletion time too). A pod never scheduled (the ``Pending`` rows) has no duration (it runs until
  deleted if gangsim places it) and is deleted at its ``deletion_time`` (a ``delete`` event), as
  its owner did. Files without time columns (``multigpu*``) put every pod at t = 0 with no
  duration, like the FGD simulator's static placement.
* **GPUs** (``alibaba.com/gpu-milli``, documented extended resource, 1000 per physical GPU): a
  whole-GPU pod (``num_gpu`` = k ≥ 1, ``gpu_milli`` = 1000) asks for ``nvidia.com/gpu: k`` *and*
  ``alibaba.com/gpu-milli: 1000·k``; a shared-GPU pod (``num_gpu`` = 1, ``gpu_milli`` < 1000)
  asks for ``alibaba.com/gpu-milli: gpu_milli`` only. Every GPU node declares
  ``gangsim.dev/gpu-share: alibaba.com/gpu-milli``, so the scheduler sees each physical GPU
  (``gangsim.api.devices``): a shared pod must fit inside ONE GPU's free share and a whole-GPU pod
  takes entirely free GPUs, as the trace cluster's GPU-sharing scheduler and the FGD simulator
  do. Summed over the pods, ``gpu-milli``/1000 is the trace's GPU request (6,086.8 GPUs for
  ``default``). ``--shared-gpu whole`` instead gives every shared pod a whole GPU (no sharing:
  the pessimistic bound; no share is declared then). The reports' ``gpu_equiv`` figures count
  shared pods by their share.
* **Static mode** (``--inflate R [--seed N]``, FGD's experiment): see ``_static``.
* **GPU model constraint** (``gpu_spec``, ``|``-separated): one model → ``nodeSelector``
  ``alibaba.com/gpu-model``; several → a required node affinity ``In`` the models.
* **Priorities**: none by default (every pod 0, as in the FGD simulator). ``--priority LS=1000
  --priority BE=0`` … creates a PriorityClass ``openb-<qos>`` per listed QoS value and gives it
  to that QoS's pods (unlisted QoS values keep priority 0).
"""

from __future__ import annotations

import bisect
import contextlib
import csv
import os
import random
from collections.abc import Iterator

from gangsim.api.devices import GPU_SHARE_ANNOTATION
from gangsim.errors import InputError, UsageError, cut
from gangsim.load.importers._common import (
    check_cluster_gpus,
    GPU,
    MAX_INT64,
    MAX_SECONDS,
    ImportOptions,
    Stats,
    check_label_value,
    check_name,
    check_options,
    class_docs,
    cpu_quantity,
    create,
    delete,
    duration_text,
    field_error,
    mib_quantity,
    first_line,
    parse_int,
    read_lines,
    priority_classes,
    trace_header,
)

OPTIONS = {"name", "limit", "priorities", "shared_gpu", "inflate", "seed"}
DEFAULT_SEED = 42  # the first of the FGD experiments' seeds (42-51)
GPU_MILLI = "alibaba.com/gpu-milli"
MODEL_LABEL = "alibaba.com/gpu-model"
QOS_LABEL = "alibaba.com/qos"
NAMESPACE = "openb"
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time")
POD_COLUMNS_SHORT = POD_COLUMNS[:5]
DEFAULT_NODES = "openb_node_list_all_node.csv"
DEFAULT_PODS = "openb_pod_list_default.csv"


def _header(path: str) -> list[str]:
    first = first_line(path)
    try:
        return next(csv.reader([first]), []) if first.strip() else []
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=path, line=1) from None


def resolve_sources(sources: list[str]) -> tuple[str, str]:
    """(node list, pod list) from directories and files."""
    nodes: list[str] = []
    pods: list[str] = []
    dirs: list[str] = []
    for src in sources:
        if os.path.isdir(src):
            dirs.append(src)
            continue
        if not os.path.exists(src):
            raise InputError("no such file or directory", file=src)
        header = _header(src)
        if header[:1] == ["sn"]:
            nodes.append(src)
        elif header[:1] == ["name"]:
            pods.append(src)
        else:
            raise InputError(f"not an openb node list (header sn,…) or pod list (header name,…): header is {','.join(header)[:80]!r}", file=src, line=1)
    for d in dirs:
        if not nodes and os.path.exists(os.path.join(d, DEFAULT_NODES)):
            nodes.append(os.path.join(d, DEFAULT_NODES))
        if not pods and os.path.exists(os.path.join(d, DEFAULT_PODS)):
            pods.append(os.path.join(d, DEFAULT_PODS))
    for what, found, default in (("node list", nodes, DEFAULT_NODES), ("pod list", pods, DEFAULT_PODS)):
        if not found:
            where = f" (no {default} in {', '.join(dirs)})" if dirs else ""
            raise InputError(f"openb: no {what} given{where}", file=sources[0] if sources else None)
        if len(found) > 1:
            raise InputError(f"openb: give one {what}, not {len(found)} ({', '.join(found)})", file=found[1])
    return nodes[0], pods[0]


def _header_mismatch(header: list[str], expected: tuple[tuple[str, ...], ...], what: str) -> str:
    """Where ``header`` first departs from the closest expected header (the one it shares the
    longest prefix with): one column named, not both headers echoed (issue 17: short error lines)."""

    def shared(cols: tuple[str, ...]) -> int:
        return next((i for i, (a, b) in enumerate(zip(header, cols)) if a != b), min(len(header), len(cols)))

    cols = max(expected, key=shared)  # ties: the first (full) header
    i = shared(cols)
    if i < len(cols) and i < len(header):
        where = f"column {i + 1} is {cut(header[i], 40)!r}, expected {cols[i]!r}"
    elif i < len(cols):
        where = f"column {i + 1} ({cols[i]!r}) is missing"
    else:
        where = f"column {i + 1} ({cut(header[i], 40)!r}) is not an openb {what} column"
    return f"unexpected CSV header: {where} (an openb {what} list has {len(cols)} columns: {','.join(cols)})"


def _rows(path: str, expected: tuple[tuple[str, ...], ...], what: str) -> Iterator[tuple[int, list[str], tuple[str, ...]]]:
    """(line, row, columns) for each data row; the header must be one of ``expected``."""
    lines = read_lines(path, keepends=True)
    with contextlib.closing(lines):
        reader = csv.reader(text for _, text in lines)
        try:
            header = next(reader, None)
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", file=path, line=1) from None
        if header is None:
            raise InputError("empty file: expected a CSV header", file=path, line=1)
        header = [h.strip() for h in header]
        columns = next((cols for cols in expected if tuple(header) == cols), None)
        if columns is None:
            raise InputError(_header_mismatch(header, expected, what), file=path, line=1)
        try:
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(columns):
                    name = f"{what} {row[0]}" if row and row[0] else None
                    raise InputError(
                        f"expected {len(columns)} columns ({','.join(columns)}), found {len(row)}: truncated or malformed line",
                        file=path, line=reader.line_num, obj=name,
                    )  # fmt: skip
                yield reader.line_num, row, columns
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {exc}", file=path, line=reader.line_num) from None


def _name_cpu_memory(row: list[str], path: str, line: int, seen: set[str], what: str, name_column: str) -> tuple[str, str | None, int, int]:
    """The first three columns every openb table starts with: a unique name, cpu milli, memory MiB."""
    name = row[0].strip()
    obj = f"{what} {name}" if name else None
    if not name:
        raise field_error(path, line, obj, name_column, "", "must not be empty")
    if name in seen:
        raise field_error(path, line, obj, name_column, name, f"duplicate {what} name")
    seen.add(name)
    check_name(name, path, line, obj, name_column)
    return name, obj, parse_int(row[1], path, line, obj, "cpu_milli"), parse_int(row[2], path, line, obj, "memory_mib", hi=MAX_INT64 >> 20)


def _node_docs(path: str, stats: Stats, share: bool) -> Iterator[dict]:
    seen: set[str] = set()
    total = 0
    for line, row, _ in _rows(path, (NODE_COLUMNS,), "node"):
        name, obj, cpu, mem = _name_cpu_memory(row, path, line, seen, "node", "sn")
        gpus = parse_int(row[3], path, line, obj, "gpu", hi=MAX_INT64 // 1000)
        total += gpus
        check_cluster_gpus(total, path, line, obj, "gpu")
        model = row[4].strip()
        alloc: dict[str, str] = {"cpu": cpu_quantity(cpu), "memory": mib_quantity(mem)}
        meta: dict = {"name": name}
        if gpus:
            alloc[GPU] = str(gpus)
            alloc[GPU_MILLI] = str(gpus * 1000)
            if share:
                meta["annotations"] = {GPU_SHARE_ANNOTATION: GPU_MILLI}
            if model and model.lower() != "nan":
                check_label_value(model, path, line, obj, "model")
                meta["labels"] = {MODEL_LABEL: model}
        stats.add("nodes")
        stats.add("GPUs", gpus)
        yield create(0, {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"allocatable": alloc}})


def _gpu_affinity(spec_text: str, path: str, line: int, obj: str | None) -> dict | None:
    models = [m.strip() for m in spec_text.split("|") if m.strip() and m.strip().lower() != "nan"]
    for model in models:
        check_label_value(model, path, line, obj, "gpu_spec")
    if not models:
        return None
    if len(models) == 1:
        return {"nodeSelector": {MODEL_LABEL: models[0]}}
    term = {"matchExpressions": [{"key": MODEL_LABEL, "operator": "In", "values": models}]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}}


def _pod_rows(path: str, options: ImportOptions, stats: Stats) -> list[tuple]:
    """Validated pod rows: (arrival, index, name, resources, extra spec, qos, duration, delete_at)."""
    whole_only = (options.shared_gpu or "milli") == "whole"
    out: list[tuple] = []
    seen: set[str] = set()
    for line, row, columns in _rows(path, (POD_COLUMNS, POD_COLUMNS_SHORT), "pod"):
        if options.limit is not None and len(out) >= options.limit:
            break
        name, obj, cpu, mem = _name_cpu_memory(row, path, line, seen, "pod", "name")
        num_gpu = parse_int(row[3], path, line, obj, "num_gpu", hi=MAX_INT64 // 1000)
        gpu_milli = parse_int(row[4], path, line, obj, "gpu_milli")
        if gpu_milli > 1000:
            raise field_error(path, line, obj, "gpu_milli", row[4], "must be at most 1000 (one whole GPU)")
        if num_gpu and not gpu_milli:
            raise field_error(path, line, obj, "gpu_milli", row[4], f"must be positive when num_gpu is {num_gpu}")
        if num_gpu > 1 and gpu_milli != 1000:
            raise field_error(path, line, obj, "gpu_milli", row[4], f"must be 1000 when num_gpu is {num_gpu} (only single-GPU pods share a GPU)")
        if not num_gpu and gpu_milli:
            raise field_error(path, line, obj, "num_gpu", row[3], f"must be 1 when gpu_milli is {gpu_milli}")
        requests: dict[str, str] = {}
        if cpu:
            requests["cpu"] = cpu_quantity(cpu)
        if mem:
            requests["memory"] = mib_quantity(mem)
        limits: dict[str, str] = {}
        if num_gpu:
            shared = gpu_milli < 1000
            if shared and not whole_only:
                limits[GPU_MILLI] = str(gpu_milli)
                stats.add("shared-GPU pods")
            else:
                limits[GPU] = str(num_gpu)
                limits[GPU_MILLI] = str(num_gpu * 1000)
        stats.add("GPU-milli requested", num_gpu * gpu_milli)
        extra: dict = {}
        qos = ""
        arrival: int = 0
        duration: int | None = None
        delete_at: int | None = None
        if len(columns) == len(POD_COLUMNS):
            gpu_spec = row[5].strip()
            if gpu_spec:
                extra = _gpu_affinity(gpu_spec, path, line, obj) or {}
            qos = row[6].strip()
            if qos:
                check_label_value(qos, path, line, obj, "qos")
            arrival = parse_int(row[8], path, line, obj, "creation_time", hi=MAX_SECONDS)
            deletion = parse_int(row[9], path, line, obj, "deletion_time", hi=MAX_SECONDS) if row[9].strip() else None
            scheduled = parse_int(row[10], path, line, obj, "scheduled_time", hi=MAX_SECONDS) if row[10].strip() else None
            if scheduled is not None:
                if scheduled < arrival:
                    raise field_error(path, line, obj, "scheduled_time", row[10], f"must not be before creation_time ({arrival})")
                if deletion is None:
                    stats.add("pods still running at the end")
                else:
                    if deletion < scheduled:
                        raise field_error(path, line, obj, "deletion_time", row[9], f"must not be before scheduled_time ({scheduled})")
                    duration = deletion - scheduled
            else:
                stats.add("never-scheduled pods (deleted at their deletion_time)")
                if deletion is not None:
                    if deletion < arrival:
                        raise field_error(path, line, obj, "deletion_time", row[9], f"must not be before creation_time ({arrival})")
                    delete_at = deletion
        resources: dict = {}
        if requests:
            resources["requests"] = requests
        if limits:
            resources["limits"] = limits
        out.append((arrival, len(out), name, resources, extra, qos, duration, delete_at))
    return out


def _gpu_capacity_milli(node_path: str) -> int:
    """The node list's GPUs in milli (its rows were or will be validated by ``_node_docs``)."""
    total = 0
    for _, row, _ in _rows(node_path, (NODE_COLUMNS,), "node"):
        with contextlib.suppress(ValueError):
            total += max(0, int(row[3])) * 1000
    return total


def _static(pods: list[tuple], inflate: float, seed: int, capacity_milli: int, stats: Stats) -> list[tuple]:
    """FGD's static experiment (``--inflate``): every pod at t = 0 with no duration and no delete;
    copies of uniformly drawn pods (``random.Random(seed)``, with replacement) are added until
    the GPU request reaches ``inflate`` × the cluster's GPUs (the FGD simulator's ``-tune``,
    ``TunePodsByNodeTotalResource``), then the list is shuffled with the same generator
    (``--shuffle-pod``). Copies are named ``<pod>-c<k>``. The run's summary then reports the
    allocation at 100 % and 130 % of arrived GPU request (``gpu_milli.allocation_at_*``)."""
    rng = random.Random(seed)
    names = {p[2] for p in pods}
    out = [(0, i, name, res, extra, qos, None, None) for i, (_, _, name, res, extra, qos, _, _) in enumerate(pods)]
    requested = sum(_gpu_milli(p[3]) for p in out)
    target = inflate * capacity_milli
    originals = len(out)
    copies: dict[str, int] = {}
    while requested < target and originals and any(_gpu_milli(p[3]) for p in out[:originals]):
        src = out[rng.randrange(originals)]
        k = copies.get(src[2], 0) + 1
        while f"{src[2]}-c{k}" in names:
            k += 1
        copies[src[2]] = k
        name = f"{src[2]}-c{k}"
        names.add(name)
        out.append((0, len(out), name, *src[3:]))
        requested += _gpu_milli(src[3])
    rng.shuffle(out)
    stats.counts.pop("never-scheduled pods (deleted at their deletion_time)", None)  # not in static mode
    stats.add("copies added by --inflate", len(out) - originals)
    stats.note(f"static (--inflate {inflate:g}, --seed {seed}): {len(out):,} pods at t=0 request {requested / 1000:,.1f} GPUs = {100 * requested / max(capacity_milli, 1):.1f} % of {capacity_milli // 1000:,} GPUs")
    return [(0, i, *p[2:]) for i, p in enumerate(out)]


def _gpu_milli(resources: dict) -> int:
    """A pod's GPU request in milli (whole GPUs count 1000 each)."""
    limits = resources.get("limits", {})
    return int(limits.get(GPU_MILLI, 0)) or 1000 * int(limits.get(GPU, 0))


def read(sources: list[str], options: ImportOptions, stats: Stats) -> Iterator[dict]:
    check_options("openb", options, OPTIONS)
    if options.seed is not None and options.inflate is None:
        raise UsageError("--seed: openb uses it only with --inflate (re-sampling and shuffling)")
    if options.inflate is not None and not options.inflate > 0:
        raise UsageError(f"--inflate: Invalid value: {options.inflate!r}: must be positive (e.g. 1.3 = 130 % of the cluster's GPUs)")
    if options.shared_gpu not in (None, "milli", "whole"):
        raise UsageError(f"--shared-gpu: Invalid value: {options.shared_gpu!r}: choose milli or whole")
    node_path, pod_path = resolve_sources(sources)
    # Validate all pods before writing anything (the pod list is small: 8k–10k rows).
    pods = _pod_rows(pod_path, options, stats)
    if options.inflate is not None:
        pods = _static(pods, options.inflate, DEFAULT_SEED if options.seed is None else options.seed, _gpu_capacity_milli(node_path), stats)
    pods.sort(key=lambda p: (p[0], p[1]))
    name = options.name or ("openb-" + os.path.basename(pod_path).removeprefix("openb_pod_list_").removesuffix(".csv"))
    classes = priority_classes("openb", options.priorities)
    unknown = sorted(set(classes) - {p[5] for p in pods})
    if unknown:
        raise UsageError(f"--priority: no pods with qos {', '.join(unknown)}")
    yield trace_header(name)
    yield from class_docs("openb", options.priorities)
    yield from _node_docs(node_path, stats, share=options.shared_gpu != "whole")
    deletes: list[tuple[int, int, str]] = []
    for arrival, index, pod_name, resources, extra, qos, duration, delete_at in pods:
        while deletes and deletes[0][0] <= arrival:
            at, _, victim = deletes.pop(0)
            yield delete(at, "Pod", victim, NAMESPACE)
        meta: dict = {"name": pod_name, "namespace": NAMESPACE}
        if qos:
            meta["labels"] = {QOS_LABEL: qos}
        if duration is not None:
            meta["annotations"] = {"gangsim.dev/duration": duration_text(duration)}
        container: dict = {"name": "main"}
        if resources:
            container["resources"] = resources
        spec: dict = {"restartPolicy": "Never", **extra, "containers": [container]}
        if qos in classes:
            spec["priorityClassName"] = classes[qos]
        stats.add("pods")
        yield create(arrival, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
        if delete_at is not None:
            bisect.insort(deletes, (delete_at, index, pod_name))
    for at, _, victim in deletes:
        yield delete(at, "Pod", victim, NAMESPACE)

