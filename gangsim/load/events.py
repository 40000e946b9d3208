"""Documents → raw events: plain object documents, ``Trace`` documents' ``events`` items and JSON
Lines event lines become ``RawEvent``s; ``KubeSchedulerConfiguration`` documents become configs.

Order key (INTERFACE rule 3): ``(file, document, item)`` — ``item`` is the index inside a Trace
document's ``events`` (0 for a plain document); a JSON Lines line is document ``line``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Source, object_ref
from gangsim.api.trace import Op
from gangsim.errors import InputError, invalid, required
from gangsim.load.config import CONFIG_KIND, decode_config
from gangsim.load.documents import Document
from gangsim.load.durations import DurationRule, decode_duration, decode_rule
from gangsim.load.fields import Obj, not_supported, shown
from gangsim.load.meta import API_VERSIONS, OBJECT_KINDS, TRACE_NAMESPACED, aliased, check_type, raw_ref, unsupported_kind

_OPS = ("create", "patch", "delete")
_OP = {"create": Op.CREATE, "patch": Op.PATCH, "delete": Op.DELETE}


@dataclass(slots=True)
class RawEvent:
    at_ms: int
    op: Op
    order: tuple[int, ...]
    source: Source
    raw: Mapping | None  # CREATE: the object; PATCH: the patch item; DELETE: None
    at_given: bool = False  # CREATE: `at` written on the event (else: the arrival annotation)
    kind: str = ""
    namespace: str = ""
    name: str = ""
    seq: int = 0  # tie-break among events generated from one another
    generated_by: int | None = None  # DELETE from a remove-at annotation: seq of its CREATE
    decoded: object = None  # CREATE: the Decoded object

    @property
    def ref(self) -> str:
        return object_ref(self.kind, self.namespace, self.name)


@dataclass(slots=True)
class Collected:
    events: list[RawEvent] = field(default_factory=list)
    configs: list[tuple[SchedulerConfig, Source]] = field(default_factory=list)
    trace_names: list[str] = field(default_factory=list)
    horizons: list[int] = field(default_factory=list)
    default_durations: list[tuple[int, Source]] = field(default_factory=list)  # Trace defaultDuration
    duration_rules: list[DurationRule] = field(default_factory=list)  # Trace durations, in order
    job_workloads: list[bool] = field(default_factory=list)  # Trace jobWorkloads

    def add(self, event: RawEvent) -> None:
        event.seq = len(self.events)
        self.events.append(event)


def collect(doc: Document, out: Collected) -> None:
    """Sort one document into events, configs and trace settings."""
    source = Source(doc.file, doc.line, doc.index)
    data = doc.data
    if doc.fmt == "jsonl" and "kind" not in data and any(k in data for k in ("at", *_OPS)):
        _item(Obj(data, "", doc.line), None, (doc.file_index, doc.index, 0), source, out)
        return
    try:
        kind = check_type(data, doc.line)
    except InputError as exc:
        kind = data.get("kind")
        raise exc.located(file=doc.file, line=doc.line, obj=raw_ref(kind, data) if isinstance(kind, str) and kind else None) from None
    if kind == CONFIG_KIND:
        out.configs.append((decode_config(data, source), source))
    elif kind == "Trace":
        _trace(doc, source, out)
    else:
        out.add(RawEvent(0, Op.CREATE, (doc.file_index, doc.index, 0), source, data))


def _trace(doc: Document, source: Source, out: Collected) -> None:
    name, items = trace_header(doc, out)
    try:
        for i, (item, path, line) in enumerate(items):
            trace_item(doc, name, i, item, path, line, out)
    except InputError as exc:
        raise exc.located(file=doc.file, line=doc.line, obj=name) from None


def trace_header(doc: Document, out: Collected) -> tuple[str, list[tuple[object, str, int | None]]]:
    """A Trace document's name (for messages) and its event items; its settings go to ``out``."""
    o = Obj(doc.data, "", doc.line)
    name = "Trace"
    try:
        meta = o.obj("metadata")
        if meta is not None and meta.raw("name"):
            name = f"Trace {meta.str('name')}"
            out.trace_names.append(meta.str("name"))
        o.check_keys({"apiVersion", "kind", "metadata", "events", "horizon", "defaultDuration", "durations", "jobWorkloads"})
        if "jobWorkloads" in o:
            out.job_workloads.append(o.bool("jobWorkloads"))
        if "horizon" in o:
            out.horizons.append(decode_duration(o, "horizon"))
        if "defaultDuration" in o:
            out.default_durations.append((decode_duration(o, "defaultDuration"), Source(doc.file, o.ln("defaultDuration"), doc.index)))
        out.duration_rules.extend(decode_rule(rule) for rule in o.objs("durations"))
        return name, list(o.items("events"))
    except InputError as exc:
        raise exc.located(file=doc.file, line=doc.line, obj=name) from None


def trace_item(doc: Document, name: str, index: int, item: object, path: str, line: int | None, out: Collected) -> None:
    """One ``events[i]`` of a Trace document."""
    if not isinstance(item, Mapping):
        raise InputError(invalid(path, shown(item), "must be an object with `at` and one of create, patch, delete"), line=line)
    _item(Obj(item, path, line), name, (doc.file_index, doc.index, index), Source(doc.file, line, doc.index), out)


def _item(it: Obj, owner: str | None, order: tuple[int, ...], source: Source, out: Collected) -> None:
    """One ``{at, create|patch|delete}`` item (of a Trace document or a JSON Lines line)."""
    try:
        it.check_keys({"at", *_OPS})
        ops = [op for op in _OPS if op in it]
        if not ops:
            raise InputError(required(it.path or "create", "one of `create`, `patch`, `delete` is required"), line=it.line)
        if len(ops) > 1:
            chosen = "{" + ", ".join(f"`{op}`" for op in ops) + "}"
            raise it.error(ops[1], invalid(it.path or ops[1], chosen, "exactly one of `create`, `patch`, `delete` is required, but multiple fields are set"))
        at_ms = decode_duration(it, "at") if "at" in it else 0
        op = ops[0]
        body = it.obj(op)
        line = body.line or source.line
        src = Source(source.file, line, source.doc)
        event = RawEvent(at_ms, _OP[op], order, src, body.d, at_given="at" in it)
        if op != "create":
            event.kind, event.namespace, event.name = target(body)
            if op == "delete":
                body.check_keys({"apiVersion", "kind", "namespace", "name"})
                event.raw = None
    except InputError as exc:
        raise exc.located(file=source.file, line=source.line, obj=owner) from None
    out.add(event)


def target(body: Obj) -> tuple[str, str, str]:
    """(kind, namespace, name) a patch or delete names; namespace defaults to ``default``."""
    kind = aliased(body.str("kind", req=True), body.raw("apiVersion"))
    if kind not in OBJECT_KINDS:
        raise body.error("kind", unsupported_kind(body.fp("kind"), kind, OBJECT_KINDS))
    version = body.raw("apiVersion")
    if version is not None and version not in API_VERSIONS[kind]:
        raise body.error("apiVersion", not_supported(body.fp("apiVersion"), version, API_VERSIONS[kind]))
    name = body.str("name", req=True)
    namespace = (body.str("namespace") or "default") if kind in TRACE_NAMESPACED else ""
    return kind, namespace, name
