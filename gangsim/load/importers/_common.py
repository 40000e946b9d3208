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
import math
import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields

from gangsim.api.duration import format_duration_ms
from gangsim.api.selectors import is_label_value
from gangsim.errors import InputError, UsageError, cut, invalid
from gangsim.load.fields import subdomain_errors
from gangsim.load.limits import MAX_CLUSTER_GPUS, MAX_DURATION_MS, MAX_INT64, MAX_NODES_PER_POOL, MAX_PODS_PER_JOB

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
    inflate: float | None = None  # FGD static mode: re-sample to this × the cluster's GPUs, all at t=0
    # swf / gavel
    nodes: int | None = None
    cores_per_node: int | None = None  # swf
    pod_size: int | None = None  # swf: processors per pod; gavel: GPUs per pod
    resource: str | None = None  # swf: "gpu" (default) | "cpu"
    cancelled: str | None = None  # swf: "skip" (default) | "delete"
    gpus_per_node: int | None = None  # gavel
    throughputs: str | None = None  # gavel: a Gavel throughputs JSON file
    steps_per_second: float | None = None  # gavel
    seed: int | None = None  # gavel (synthetic durations); openb --inflate (re-sampling, shuffle)
    # kubectl
    strict: bool | None = None

    def given(self) -> list[str]:
        return [f.name for f in fields(self) if getattr(self, f.name) is not None]


LOW_OFFERED_LOAD = 0.10  # below this an SWF / Gavel import warns: the replayed cluster is mostly idle


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

    def offered_load(self, demand_s: float, capacity: int, first_s: float, last_s: float, unit: str) -> None:
        """Note the offered load: the work the jobs ask for (``demand_s``: units × run seconds)
        over what the cluster offers while they arrive (``capacity`` units × the arrival window
        ``first_s``..``last_s``); nothing when every job arrives at once (a batch has no rate).
        Below :data:`LOW_OFFERED_LOAD` a warning: a replay of an idle cluster compares nothing,
        every policy starts every job at once."""
        window = last_s - first_s
        if capacity <= 0 or demand_s <= 0 or window <= 0:
            return
        load = demand_s / (capacity * window)
        text = f"offered load {load:.1%}: {demand_s / 3600:,.0f} {unit}-hours asked over {window / 3600:,.1f} h of arrivals on {capacity:,} {unit}s"
        self.note(text)
        if load < LOW_OFFERED_LOAD:
            self.note(f"warning: offered load below {LOW_OFFERED_LOAD:.0%}: the cluster is mostly idle and every policy will start "
                      f"almost every job at once, so a comparison shows little (shrink it with --nodes)")

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


def _open_binary(path: str):
    try:
        return open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), file=path) from None


def read_lines(path: str, *, keepends: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, text) of a plain or gzip file (gzip is recognised by its magic bytes, whatever
    the name); the newline is dropped unless ``keepends``.

    Every way the bytes can be wrong is an ``InputError`` naming the file and line: a truncated or
    corrupt gzip stream (the first line not read whole), a line that is not UTF-8 (the column of
    the first bad byte), a read error. A UTF-8 byte order mark on line 1 is dropped.
    """
    raw = _open_binary(path)
    gz = None
    number = 0
    try:
        stream = raw
        if raw.peek(2)[:2] == b"\x1f\x8b":
            gz = gzip.GzipFile(fileobj=raw)
            stream = gz
        for number, data in enumerate(stream, start=1):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at column {exc.start + 1}", file=path, line=number) from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield number, (text if keepends else text.rstrip("\r\n"))
    except EOFError:
        raise InputError("truncated gzip data: the file ends inside the compressed stream", file=path, line=number + 1) from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(f"corrupt gzip data: {exc}", file=path, line=number + 1) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=path, line=number + 1) from None
    finally:
        if gz is not None:
            gz.close()
        raw.close()


def first_line(path: str) -> str:
    """The first line of ``path`` (gzip or plain), "" when empty; errors as ``read_lines``."""
    lines = read_lines(path)
    try:
        return next(lines, (0, ""))[1]
    finally:
        lines.close()


def field_error(path: str, line: int, obj: str | None, field: str, value: object, detail: str) -> InputError:
    return InputError(invalid(field, cut(str(value)), detail), file=path, line=line, obj=obj)


MAX_NUMBER_CHARS = 40  # longer text is not a number any limit admits (int64 has 19 digits)
MAX_SECONDS = MAX_DURATION_MS // 1000  # times and durations in seconds: 100 years


def parse_int(text: str, path: str, line: int, obj: str | None, field: str, *, lo: int | None = 0, hi: int = MAX_INT64) -> int:
    """An integer field (``12``, ``12.0``, ``1e3``) in ``[lo, hi]``; errors name file, line, object and field."""
    text = text.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise field_error(path, line, obj, field, text, "must be an integer")
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
    if value > hi:
        raise field_error(path, line, obj, field, text, "must be no more than 100 years" if hi == MAX_SECONDS else f"must be no more than {hi}")
    return value


def parse_number(text: str, path: str, line: int, obj: str | None, field: str, *, lo: float | None = 0, hi: float = MAX_INT64) -> int | float:
    """A finite number in ``[lo, hi]``."""
    text = text.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise field_error(path, line, obj, field, text, "must be a number")
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
    if value > hi:
        raise field_error(path, line, obj, field, text, f"must be no more than {hi:,}" if hi != MAX_SECONDS else "must be no more than 100 years")
    return value


def parse_seconds(text: str, path: str, line: int, obj: str | None, field: str) -> int | float:
    """A time or duration in seconds: a finite number in [0, 100 years]."""
    return parse_number(text, path, line, obj, field, hi=MAX_SECONDS)


def check_seconds(value: float, path: str, line: int, obj: str | None, field: str, shown: object) -> None:
    """A computed time or duration (an end minus a start, steps / rate) must not exceed 100 years."""
    if not value <= MAX_SECONDS:
        raise field_error(path, line, obj, field, shown, "gives a time or duration over 100 years")


def check_cluster_gpus(total: int, path: str, line: int | None, obj: str | None, what: str) -> None:
    """The cluster an import describes holds at most ``MAX_CLUSTER_GPUS`` GPUs, as ``run`` requires
    (``what`` says where the count comes from)."""
    if total > MAX_CLUSTER_GPUS:
        raise InputError(f"{what}: the cluster would have {total:,} GPUs: gangsim replays at most {MAX_CLUSTER_GPUS:,}", file=path, line=line, obj=obj)


def check_name(name: str, path: str, line: int, obj: str | None, field: str) -> None:
    """An object name as the loader requires it (a DNS-1123 subdomain of at most 253 characters)."""
    errors = subdomain_errors(name)
    if errors:
        raise field_error(path, line, obj, field, name, errors[0].split(" (e.g.")[0])


def check_label_value(value: str, path: str, line: int, obj: str | None, field: str) -> None:
    """A value written as a label value or node-selector value, as the loader requires it."""
    if not is_label_value(value):
        raise field_error(path, line, obj, field, value, "must be a label value: at most 63 characters, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character")


def check_pods(pods: int, path: str, line: int, obj: str | None, field: str, shown: object) -> None:
    """A job split into ``pods`` pods: at most MAX_PODS_PER_JOB (the loader's limit on a Job and a gang)."""
    if pods > MAX_PODS_PER_JOB:
        raise field_error(path, line, obj, field, shown, f"gives {pods:,} pods: a job may have at most {MAX_PODS_PER_JOB:,}")


def trace_name(path: str) -> str:
    base = os.path.basename(os.path.normpath(path))
    for suffix in (".gz", ".swf", ".csv", ".trace", ".json", ".yaml", ".yml"):
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
    return base or "imported"
