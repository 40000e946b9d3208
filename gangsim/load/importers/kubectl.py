"""A live cluster, as ``kubectl get`` prints it → gangsim objects at t = 0.

    kubectl get nodes,pods,podgroups,workloads,priorityclasses -A -o yaml > cluster.yaml
    gangsim import kubectl cluster.yaml -o cluster.jsonl
    gangsim run cluster.jsonl --policy gang        # would my pending pods fit, and under which policy?

Input: YAML or JSON (``-`` reads standard input), a ``List`` or single objects, several files
allowed. Everything is created at t = 0, in this order: PriorityClasses, Nodes, Workloads,
PodGroups, the pods bound to a node (file order), then the pending pods, oldest
``creationTimestamp`` first (gangsim queues same-instant pods in document order, so this keeps
the cluster's queue order).

* **Nodes**: name, labels, ``spec.taints`` / ``spec.unschedulable`` and
  ``status.allocatable`` (``capacity`` when absent) — the rest of the status is dropped.
* **Pods**: ``Succeeded`` / ``Failed`` pods hold nothing and are skipped. A pod with
  ``spec.nodeName`` is *bound*: it is created on that node (gangsim admits a pod that carries
  ``spec.nodeName`` directly, as the kubelet does) and keeps running (no duration). A pod without
  it is *pending* and goes through the scheduler; a pending pod already being deleted
  (``deletionTimestamp``) is skipped. Kept: labels, ``gangsim.dev/*`` annotations, containers'
  and init containers' names and resources (and init ``restartPolicy``), and the scheduling fields
  gangsim models (``nodeSelector``, ``affinity``, ``tolerations``, priority, ``schedulerName``,
  ``schedulingGroup``, ``schedulingGates``, ``overhead``, ``terminationGracePeriodSeconds``).
  Dropped as meaningless for a replay: ``status``, ``managedFields``, owner references, other
  annotations, volumes, images, probes, env, ports and the like.
* **Fields that would change scheduling but gangsim does not model** — ``topologySpreadConstraints``,
  ``resourceClaims``, host ports / ``hostNetwork``, PersistentVolumeClaim / ephemeral / CSI
  volumes (their node affinity): on a *bound* pod they no longer matter and are dropped silently;
  on a *pending* pod they are dropped **with a warning on stderr** naming the pods (the answer is
  then optimistic: gangsim may place a pod the real scheduler would not). ``--strict`` makes them
  errors (exit 2) instead. Pod-level ``spec.resources`` is always an error (it changes the pod's
  size, which gangsim takes from its containers). ``runtimeClassName`` is dropped: its overhead
  is already in ``spec.overhead``.
* **Priorities**: a pod's ``priorityClassName`` naming a class missing from the input is dropped
  (its ``spec.priority`` value is kept), with a warning. The built-in ``system-*`` classes are
  always known to gangsim and are not copied.
* **PodGroups / Workloads**: metadata name, namespace, labels and ``spec``; ``status`` dropped.
* Other kinds (Jobs, Deployments, Events, …) are skipped with a note: their pods are imported
  as the bare pods they are now (gangsim does not recreate them).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterator, Mapping

from gangsim.errors import InputError, cut, invalid, unsupported
from gangsim.load.documents import Document, read_documents
from gangsim.api.objects import Source
from gangsim.load.decode import Decoder, Warnings
from gangsim.load.fields import Obj
from gangsim.load.priority import Priorities
from gangsim.load.importers._common import MAX_INT64, GPU, ImportOptions, Stats, check_options, create, trace_header, trace_name

OPTIONS = {"name", "strict"}
KINDS = ("PriorityClass", "Node", "Workload", "PodGroup", "Pod")
SYSTEM_CLASSES = ("system-cluster-critical", "system-node-critical")
_POD_KEEP = (
    "nodeSelector", "affinity", "tolerations", "priorityClassName", "priority", "preemptionPolicy", "schedulerName",
    "nodeName", "schedulingGroup", "schedulingGates", "terminationGracePeriodSeconds", "overhead",
)  # fmt: skip
_UNMODELLED = {
    "topologySpreadConstraints": "topology spread constraints",
    "resourceClaims": "resource claims (DRA)",
    "hostNetwork": "host networking",
}
_UNMODELLED_VOLUMES = {"persistentVolumeClaim": "PersistentVolumeClaim volumes", "ephemeral": "ephemeral volumes", "csi": "CSI volumes"}


def _documents(sources: list[str]) -> Iterator[Document]:
    from gangsim.load import documents as docs

    for index, src in enumerate(sources):
        if src == "-":
            raw = sys.stdin.buffer.read()
            text = raw.lstrip()
            if text[:1] in (b"{", b"["):
                yield from docs.flatten_lists(list(docs._json_documents(raw, "<stdin>", index)), raw)
            else:
                yield from docs.flatten_lists(list(docs.yaml_documents(docs.decode_text(raw, "<stdin>"), "<stdin>", index)))
            continue
        if os.path.isdir(src):
            raise InputError("is a directory: give the file kubectl wrote", file=src)
        if not os.path.exists(src):
            raise InputError("no such file or directory", file=src)
        yield from read_documents(src, index)


def _meta(d: Mapping, keep_annotations: bool = False) -> dict:
    meta = d.get("metadata") or {}
    out: dict = {"name": meta.get("name")}
    if meta.get("namespace"):
        out["namespace"] = meta["namespace"]
    if meta.get("labels"):
        out["labels"] = dict(meta["labels"])
    if keep_annotations:
        ann = {k: v for k, v in (meta.get("annotations") or {}).items() if str(k).startswith("gangsim.dev/")}
        if ann:
            out["annotations"] = ann
    return out


def _line(container: object, key: str, default: int | None) -> int | None:
    """The line where ``key`` is written in a YAML mapping (JSON: the document's line)."""
    lines = getattr(container, "lines", None)
    return (lines.get(key) if isinstance(lines, dict) else None) or default


def _ref(doc: Document) -> str:
    d = doc.data
    meta = d.get("metadata") if isinstance(d.get("metadata"), Mapping) else {}
    name = meta.get("name") or "?"
    ns = meta.get("namespace") or ("default" if d.get("kind") in ("Pod", "PodGroup", "Workload") else "")
    return f"{d.get('kind')} {ns}/{name}" if ns else f"{d.get('kind')} {name}"


def _node(doc: Document) -> dict:
    d = doc.data
    spec = d.get("spec") or {}
    status = d.get("status") or {}
    size = status.get("allocatable") or status.get("capacity")
    if not size:
        raise InputError("status.allocatable: Required value: a node needs a size (status.allocatable or status.capacity)", file=doc.file, line=_line(d, "status", doc.line), obj=_ref(doc))
    out: dict = {"apiVersion": "v1", "kind": "Node", "metadata": _meta(d)}
    new_spec = {k: spec[k] for k in ("taints", "unschedulable") if spec.get(k)}
    if new_spec:
        out["spec"] = new_spec
    out["status"] = {"allocatable": dict(size)}
    return out


def _container(c: Mapping, init: bool) -> dict:
    out: dict = {"name": c.get("name") or "c"}
    res = c.get("resources") or {}
    kept = {k: dict(res[k]) for k in ("requests", "limits") if res.get(k)}
    if kept:
        out["resources"] = kept
    if init and c.get("restartPolicy"):
        out["restartPolicy"] = c["restartPolicy"]
    return out


class _Pods:
    def __init__(self, classes: set[str], options: ImportOptions, stats: Stats) -> None:
        self.classes = classes
        self.strict = bool(options.strict)
        self.stats = stats
        self.dropped: dict[str, list[str]] = {}

    def convert(self, doc: Document) -> tuple[str, dict] | None:
        """("bound" | "pending", pod) or None when the pod is skipped."""
        d = doc.data
        meta = d.get("metadata") or {}
        spec = d.get("spec") or {}
        status = d.get("status") or {}
        ref = _ref(doc)
        phase = status.get("phase") or ""
        if phase in ("Succeeded", "Failed"):
            self.stats.add(f"{phase.lower()} pods skipped")
            return None
        bound = bool(spec.get("nodeName"))
        if not bound and meta.get("deletionTimestamp"):
            self.stats.add("terminating pending pods skipped")
            return None
        if spec.get("resources"):
            raise InputError(unsupported("spec.resources", "gangsim does not model pod-level resources: it sizes a pod from its containers"), file=doc.file, line=_line(spec, "resources", doc.line), obj=ref)
        if not spec.get("containers"):
            raise InputError("spec.containers: Required value", file=doc.file, line=doc.line, obj=ref)
        new_spec: dict = {k: spec[k] for k in _POD_KEEP if k in spec and spec[k] not in (None, "", [], {})}
        new_spec["containers"] = [_container(c, False) for c in spec["containers"]]
        if spec.get("initContainers"):
            new_spec["initContainers"] = [_container(c, True) for c in spec["initContainers"]]
        if not bound:
            self._unmodelled(doc, spec, ref)
        cls = new_spec.get("priorityClassName")
        if cls and cls not in self.classes and cls not in SYSTEM_CLASSES:
            del new_spec["priorityClassName"]
            self.stats.note(f"PriorityClass {cls} is not in the input: its pods keep their spec.priority value ({ref}, …)")
        if "priority" in new_spec and new_spec.get("priorityClassName") in SYSTEM_CLASSES:
            del new_spec["priority"]  # the system class gives the same value
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": _meta(d, keep_annotations=True), "spec": new_spec}
        if not pod["metadata"].get("namespace"):
            pod["metadata"]["namespace"] = "default"
        self.stats.add("bound pods" if bound else "pending pods")
        return ("bound" if bound else "pending"), pod

    def _unmodelled(self, doc: Document, spec: Mapping, ref: str) -> None:
        found: list[tuple[str, str, int | None]] = []
        for key, what in _UNMODELLED.items():
            if spec.get(key):
                found.append((key, what, _line(spec, key, doc.line)))
        for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
            if any(isinstance(p, Mapping) and p.get("hostPort") for p in c.get("ports") or []):
                found.append(("containers[].ports[].hostPort", "host ports", _line(c, "ports", doc.line)))
                break
        for vol in spec.get("volumes") or []:
            for key, what in _UNMODELLED_VOLUMES.items():
                if isinstance(vol, Mapping) and key in vol:
                    found.append((f"volumes[].{key}", what, _line(vol, key, doc.line)))
        for key, what, line in found:
            if self.strict:
                raise InputError(unsupported(f"spec.{key}", f"gangsim does not model {what}; without --strict it is dropped with a warning"), file=doc.file, line=line, obj=ref)
            self.dropped.setdefault(what, []).append(ref)

    def warnings(self) -> list[str]:
        out = []
        for what, refs in self.dropped.items():
            shown = ", ".join(refs[:3]) + (f" and {len(refs) - 3} more" if len(refs) > 3 else "")
            out.append(f"warning: dropped {what} of {len(refs)} pending pod{'s' if len(refs) > 1 else ''} ({shown}): gangsim does not model them, so its answer for these pods is optimistic")
        return out


def _numbers(value: object, field: str, doc: Document, line: int | None) -> None:
    """Every number of an output object fits what ``run`` reads: int64 integers, finite floats."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, int):
        if not -MAX_INT64 - 1 <= value <= MAX_INT64:
            raise InputError(invalid(field, cut(str(value)), "must be a 64-bit integer"), file=doc.file, line=line, obj=_ref(doc))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(invalid(field, str(value), "must be a finite number"), file=doc.file, line=line, obj=_ref(doc))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            sub = f"{field}[{key}]" if ("/" in str(key) or "." in str(key)) and field else f"{field}.{key}" if field else str(key)
            _numbers(item, sub, doc, _line(value, key, line))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _numbers(item, f"{field}[{i}]", doc, line)


class _Verifier:
    """What ``run`` would say of each converted object, said by ``import`` instead, at the object's
    place in the dump (issue 17: whatever ``import`` writes, ``run`` accepts). The loader's own
    ``Decoder`` checks each object; PriorityClasses come first and are remembered, so pods and
    PodGroups resolve their classes as ``run`` will. Cross-object rules (a pod naming a PodGroup
    the dump lacks, …) stay ``run``'s: they are about the trace, not the conversion."""

    def __init__(self) -> None:
        self.priorities = Priorities()
        self.decoder = Decoder(self.priorities, Warnings())

    def __call__(self, obj: dict, doc: Document) -> dict:
        _numbers(obj, "", doc, doc.line)  # before decoding: orjson writes only 64-bit integers
        source = Source(doc.file, doc.line)
        decoded = self.decoder.decode(obj, source, status_warning=False)
        if decoded.kind == "PriorityClass":
            try:
                self.priorities.add(decoded.obj, Obj(obj, "", doc.line))
            except InputError as exc:
                raise exc.located(file=doc.file, line=doc.line, obj=_ref(doc)) from None
        return obj


def read(sources: list[str], options: ImportOptions, stats: Stats) -> Iterator[dict]:
    check_options("kubectl", options, OPTIONS)
    try:
        yield from _read(sources, options, stats)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a field of the wrong type
        doc = _CURRENT[0]
        if doc is None:
            raise
        raise InputError(f"unexpected structure (a field of the wrong type: {cut(str(exc))})", file=doc.file, line=doc.line, obj=_ref(doc)) from None
    finally:
        _CURRENT[0] = None


_CURRENT: list[Document | None] = [None]  # the document being converted, for errors of shape


def _read(sources: list[str], options: ImportOptions, stats: Stats) -> Iterator[dict]:
    by_kind: dict[str, list[Document]] = {k: [] for k in KINDS}
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    repeated = 0
    for doc in _documents(sources):
        kind = doc.data.get("kind")
        if isinstance(kind, str) and kind in by_kind:
            ref = _ref(doc)
            if ref in seen:  # overlapping dumps (or one given twice): the first copy wins
                repeated += 1
                continue
            seen.add(ref)
            by_kind[kind].append(doc)
        else:
            skipped[str(kind)] = skipped.get(str(kind), 0) + 1
    for kind, n in skipped.items():
        stats.note(f"skipped {n} {kind} object{'s' if n > 1 else ''} (gangsim imports {', '.join(KINDS)}; pods are imported as they are)")
    if repeated:
        stats.note(f"skipped {repeated} repeated object{'s' if repeated > 1 else ''} (same kind, namespace and name as an earlier one: the first copy is imported)")
    out: list[dict] = []
    classes: set[str] = set()
    verify = _Verifier()
    for doc in by_kind["PriorityClass"]:
        _CURRENT[0] = doc
        d = doc.data
        name = (d.get("metadata") or {}).get("name")
        if name in SYSTEM_CLASSES:
            continue
        classes.add(name)
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
        for key in ("value", "globalDefault", "preemptionPolicy", "description"):
            if key in d:
                pc[key] = d[key]
        out.append(verify(pc, doc))
        stats.add("priority classes")
    for doc in by_kind["Node"]:
        _CURRENT[0] = doc
        node = verify(_node(doc), doc)
        out.append(node)
        stats.add("nodes")
        gpus = str(node["status"]["allocatable"].get(GPU, "0"))
        if gpus.isdigit():
            stats.add("GPUs", int(gpus))
    for kind in ("Workload", "PodGroup"):
        for doc in by_kind[kind]:
            _CURRENT[0] = doc
            d = doc.data
            obj = {"apiVersion": d.get("apiVersion"), "kind": kind, "metadata": _meta(d, keep_annotations=True), "spec": d.get("spec")}
            out.append(verify(obj, doc))
            stats.add(f"{kind}s")
    pods = _Pods(classes, options, stats)
    bound: list[dict] = []
    pending: list[tuple[str, int, dict]] = []
    for i, doc in enumerate(by_kind["Pod"]):
        _CURRENT[0] = doc
        converted = pods.convert(doc)
        if converted is None:
            continue
        state, pod = converted
        verify(pod, doc)
        if state == "bound":
            bound.append(pod)
        else:
            created = str((doc.data.get("metadata") or {}).get("creationTimestamp") or "")
            pending.append((created, i, pod))
    _CURRENT[0] = None
    pending.sort(key=lambda p: (p[0], p[1]))
    for warning in pods.warnings():
        stats.note(warning)
    first = next((s for s in sources if s != "-"), "cluster")
    yield trace_header(options.name or trace_name(first))
    for obj in out:
        yield create(0, obj)
    for pod in bound:
        yield create(0, pod)
    for _, _, pod in pending:
        yield create(0, pod)
