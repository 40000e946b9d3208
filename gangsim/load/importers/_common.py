"""What the importers share: options, records, gang splitting, quantities, located errors.

An importer is a generator of *records*, the lines of a gangsim JSON Lines trace:

* a ``Trace`` header document (``{"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", ...}``)
  naming the trace, first;
* ``{"at": <seconds>, "create": {...object...}}``, cluster objects first (``at`` 0), then
  workload objects in arrival order (stable by input order);
* ``{"at": <seconds>, "delete": {"kind": ..., "namespace": ..., "name": ...}}``.

Records are plain dicts with a fixed key order, so ``orjson.dumps`` gives the same bytes for the
same input. Importers never build YAML or hold a whole output in memory; the largest thing they
keep is one compact row per input job (to sort by arrival).
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

from gangsim.api.duration import format_duration_ms
from gangsim.errors import InputError, UsageError, invalid

TRACE_API = "gangsim.dev/v1alpha1"
GPU = "nvidia.com/gpu"
DURATION = "gangsim.dev/duration"


@dataclass
class ImportOptions:
    """Every importer option; ``None`` means "not given" (the importer's default applies).

    Each importer lists the options it reads in ``OPTIONS``; giving another one is a usage error.
    """

    name: str | None = None  # the trace name (default: from the source)
    limit: int | None = None  # import only the first N jobs/pods of the source (in file order)
    priorities: dict[str, int] | None = None  # importer key (qos, queue, VC) -> priority value
    # openb
    shared_gpu: str | None = None  # "milli" (default) | "whole"
    # swf / gavel
    nodes: int | None = None
    cores_per_node: int | None = None  # swf
    pod_size: int | None = None  # swf: processors per pod; gavel: GPUs per pod
    resource: str | None = None  # swf: "gpu" (default) | "cpu"
    cancelled: str | None = None  # swf: "skip" (default) | "delete"
    gpus_per_node: int | None = None  # gavel
    throughputs: str | None = None  # gavel: a Gavel throughputs JSON file
    steps_per_second: float | None = None  # gavel
    seed: int | None = None  # gavel (synthetic durations)
    # kubectl
    strict: bool | None = None

    def given(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]


@dataclass
class Stats:
    """Counts an importer reports (``gangsim import`` prints them on stderr)."""

    counts: dict[str, int | float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, n: float = 1) -> None:
        self.counts[key] = self.counts.get(key, 0) + n

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def summary(self) -> str:
        """``1,523 nodes, 6,212 GPUs, 8,152 pods, …``: cluster first, then workload, then the rest."""
        first = ("nodes", "processors", "GPUs", "priority classes", "jobs", "pods")
        keys = [k for k in first if k in self.counts] + [k for k in self.counts if k not in first]
        parts = []
        for key in keys:
            value = self.counts[key]
            if isinstance(value, float):
                value = round(value, 3)
            parts.append(f"{value:,} {key}")
        return ", ".join(parts)


def check_options(kind: str, options: ImportOptions, accepted: set[str]) -> None:
    extra = [n for n in options.given() if n not in accepted]
    if extra:
        flags = ", ".join("--" + n.replace("_", "-").replace("priorities", "priority") for n in extra)
        raise UsageError(f"{flags}: not an option of the {kind} importer")


# --- records -------------------------------------------------------------------------------------


def trace_header(name: str) -> dict:
    return {"apiVersion": TRACE_API, "kind": "Trace", "metadata": {"name": name}, "events": []}


def seconds(value: float) -> int | float:
    """A time in seconds as JSON writes it: an int when whole (``12`` not ``12.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def create(at: float, obj: dict) -> dict:
    return {"at": seconds(at), "create": obj}


def delete(at: float, kind: str, name: str, namespace: str | None = None) -> dict:
    target = {"kind": kind, "namespace": namespace, "name": name} if namespace else {"kind": kind, "name": name}
    return {"at": seconds(at), "delete": target}


def duration_text(secs: float) -> str:
    """A ``gangsim.dev/duration`` value: ``3h49m11s``, ``0s``, ``12.5s``."""
    return format_duration_ms(round(secs * 1000))


def priority_classes(prefix: str, priorities: dict[str, int] | None) -> dict[str, str]:
    """``--priority KEY=VALUE`` → {key: class name}; the classes are written by ``class_docs``."""
    if not priorities:
        return {}
    return {key: class_name(prefix, key) for key in priorities}


def class_name(prefix: str, key: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", key.lower()).strip("-") or "x"
    return f"{prefix}-{slug}"[:253]


def class_docs(prefix: str, priorities: dict[str, int] | None) -> Iterator[dict]:
    for key, value in (priorities or {}).items():
        yield create(0, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": class_name(prefix, key)}, "value": value, "description": f"{prefix} {key}"})


# --- gangs -----------------------------------------------------------------------------------------


def split_units(total: int, per_pod: int) -> tuple[int, int]:
    """(full pods of ``per_pod`` units, remainder units for one more pod)."""
    return divmod(total, per_pod)


def gang_objects(
    name: str,
    namespace: str,
    total: int,
    per_pod: int,
    requests: Callable[[int], dict[str, str]],
    *,
    annotations: dict[str, str],
    priority_class: str = "",
    labels: dict[str, str] | None = None,
) -> list[dict]:
    """One rigid job of ``total`` units (processors, GPUs) as gangsim objects.

    Pods hold at most ``per_pod`` units: ``total // per_pod`` full pods plus one pod with the
    remainder. One pod: a lone Job. Several: a PodGroup ``name`` (gang ``minCount`` = all pods)
    and Job ``name`` (the full pods), plus Job ``name-r`` (the remainder pod) when the sizes
    differ, both Jobs' pods in the PodGroup. ``requests(units)`` gives a pod's resource limits.
    """
    full, rest = split_units(total, per_pod)
    pods = full + (1 if rest else 0)
    shapes = [(name, full, per_pod)] if full else []
    if rest:
        shapes.append((f"{name}-r" if full else name, 1, rest))
    out: list[dict] = []
    group = name if pods > 1 else ""
    if group:
        spec: dict = {"schedulingPolicy": {"gang": {"minCount": pods}}}
        if priority_class:
            spec["priorityClassName"] = priority_class
        out.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": group, "namespace": namespace}, "spec": spec})
    for job_name, count, units in shapes:
        pod_spec: dict = {"restartPolicy": "Never", "containers": [{"name": "main", "resources": {"limits": requests(units)}}]}
        if priority_class:
            pod_spec["priorityClassName"] = priority_class
        if group:
            pod_spec["schedulingGroup"] = {"podGroupName": group}
        template: dict = {"spec": pod_spec}
        if labels:
            template = {"metadata": {"labels": labels}, "spec": pod_spec}
        meta: dict = {"name": job_name, "namespace": namespace}
        if annotations:
            meta["annotations"] = annotations
        out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"parallelism": count, "template": template}})
    return out


# --- quantities ------------------------------------------------------------------------------------


def cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def mib_quantity(mib: int) -> str:
    if mib and mib % 1024 == 0:
        return f"{mib // 1024}Gi"
    return f"{mib}Mi"


# --- input -----------------------------------------------------------------------------------------


def open_text(path: str) -> io.TextIOBase:
    """A text stream over ``path``; gzip is recognised by its magic bytes, whatever the name."""
    try:
        raw = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), file=path) from None
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="latin-1", newline="")
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")


def read_lines(path: str) -> Iterator[tuple[int, str]]:
    """(line number, text without the newline); a truncated gzip stream is an InputError."""
    stream = open_text(path)
    number = 0
    try:
        with stream:
            for number, text in enumerate(stream, start=1):
                yield number, text.rstrip("\r\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"truncated or corrupt gzip data after line {number}: {exc}", file=path, line=number + 1) from None


def field_error(path: str, line: int, obj: str | None, field: str, value: object, detail: str) -> InputError:
    return InputError(invalid(field, str(value), detail), file=path, line=line, obj=obj)


def parse_int(text: str, path: str, line: int, obj: str | None, field: str, *, lo: int | None = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            raise field_error(path, line, obj, field, text, "must be an integer") from None
        if not number.is_integer():
            raise field_error(path, line, obj, field, text, "must be an integer") from None
        value = int(number)
    if lo is not None and value < lo:
        raise field_error(path, line, obj, field, text, "must not be negative" if lo == 0 else f"must be at least {lo}")
    return value


def parse_number(text: str, path: str, line: int, obj: str | None, field: str, *, lo: float | None = 0) -> int | float:
    try:
        value: int | float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise field_error(path, line, obj, field, text, "must be a number") from None
        if not math.isfinite(value):
            raise field_error(path, line, obj, field, text, "must be a finite number") from None
    if lo is not None and value < lo:
        raise field_error(path, line, obj, field, text, "must not be negative")
    return value


def trace_name(path: str) -> str:
    base = os.path.basename(os.path.normpath(path))
    for suffix in (".gz", ".swf", ".csv", ".trace", ".json", ".yaml", ".yml"):
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
    return base or "imported"
