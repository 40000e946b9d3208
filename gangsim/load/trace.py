"""``load_trace``: files → ``api.Trace``.

1. read documents (files in command-line order, a directory's files by name);
2. collect raw events, configs and Trace settings;
3. decode every PriorityClass first (classes resolve across the whole trace), then every created
   object, in document order, so the first broken document is the one reported;
4. replay the raw events in (time, order) against a store of live objects: duplicates, patches
   and deletes of missing objects and changes to immutable fields are errors; NodePools expand
   into their Nodes; PATCH events carry the re-decoded object.

Steps 1–3 above are the reference path. By default ``load_trace`` first tries the streaming
loader (``gangsim.load.stream``: each document decoded as it is read, its raw mapping dropped),
which gives the same events in far less memory or hands the trace back to the reference path.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gangsim.api.config import SchedulerConfig
from gangsim.api.duration import format_duration_ms
from gangsim.api.objects import Node, NodePool, Source, object_ref
from gangsim.api.quantity import GPU
from gangsim.api.trace import Op, Trace, TraceEvent
from gangsim.errors import FieldError, InputError, invalid
from gangsim.load.composite import check_hierarchies
from gangsim.load.config import CONFIG_KIND, decode_config
from gangsim.load.controllers.common import Expansion
from gangsim.load.creates import add_priority_class, decode_creates, is_priority_class_create
from gangsim.load.decode import Decoded, Decoder, Warnings
from gangsim.load.documents import Document, expand_paths, read_documents
from gangsim.load.durations import Durations, apply_durations
from gangsim.load.events import Collected, RawEvent, collect
from gangsim.load.expand import pool_node, pool_node_raw
from gangsim.load.fields import Obj
from gangsim.load.limits import MAX_CLUSTER_GPUS
from gangsim.load.meta import REMOVE_AT, check_type
from gangsim.load.patch import check_update, merge_patch, patch_document, patch_line
from gangsim.load.priority import Priorities
from gangsim.load.stream import stream_creates

Key = tuple[str, str, str]  # (kind, namespace, name)


def load_trace(
    paths: Sequence[str | Path],
    *,
    config_path: str | Path | None = None,
    default_duration_ms: int | None = None,
    streaming: bool = True,
    horizon_ms: int | None = None,
) -> Trace:
    """Load and validate a trace; any problem raises ``InputError`` (one line: file:line: object: field: …).
    ``default_duration_ms`` (``--default-duration``): the duration of pods that have none
    (gangsim.load.durations). ``streaming``: decode while reading (gangsim.load.stream), which
    gives the same trace in far less memory; ``False``: this module's reference path only.
    ``horizon_ms``: the trace is only replayed before this time (``--horizon``): an importer
    source (``swf:PATH``) may leave out the objects arriving at or after it, which such a replay
    never applies (the same report; ``None``, the reference: everything is loaded)."""
    # Loading allocates millions of long-lived, acyclic objects: the cyclic collector would scan
    # them over and over for nothing (it doubled the load time of a 500k-line trace).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_trace(paths, config_path, default_duration_ms, streaming, horizon_ms)
    finally:
        if was_enabled:
            gc.enable()


def _load_trace(paths: Sequence[str | Path], config_path: str | Path | None, default_duration_ms: int | None, streaming: bool, horizon_ms: int | None) -> Trace:
    files = expand_paths(paths)
    if not files:
        raise InputError("no trace files given")
    def read_config(collected: Collected) -> SchedulerConfig:
        if config_path is not None:
            _read_config_file(str(config_path), len(files), collected)
        return single_config(collected)

    streamed = stream_creates(files, read_config, horizon_ms) if streaming else None
    if streamed is not None:
        collected, decoder, warnings, events = streamed
        config = single_config(collected)
    else:
        collected = Collected()
        for index, file in enumerate(files):
            for doc in read_documents(file, index, horizon_ms):
                collect(doc, collected)
        config = read_config(collected)
        warnings = Warnings()
        decoder = Decoder(_priorities(collected, warnings), warnings)
        events = decode_creates(collected, decoder)
    collected.events.clear()  # the same events as ``events``: each is released once replayed
    replayed = apply_durations(Replay(decoder, warnings).run(_released(events)), trace_durations(collected), default_duration_ms)
    check_hierarchies(replayed)
    name = collected.trace_names[0] if collected.trace_names else Path(files[0]).stem
    return Trace(
        name=name,
        events=replayed,
        config=config,
        horizon_ms=max(collected.horizons) if collected.horizons else None,
        files=tuple(files),
        warnings=warnings.result(),
        notices=warnings.notices(),
        job_workloads=all(collected.job_workloads),
    )


def _released(events: list[RawEvent]) -> Iterator[RawEvent]:
    """``events`` in order, each dropped from the list as it is handed out: a raw event and its
    decoded metadata are freed while the trace events replace them (not all held to the end)."""
    for i, ev in enumerate(events):
        events[i] = None  # type: ignore[call-overload]
        yield ev


def trace_durations(collected: Collected) -> Durations:
    """The Trace documents' ``defaultDuration`` (two different ones are an error) and ``durations`` rules."""
    defaults = collected.default_durations
    for ms, source in defaults[1:]:
        if ms != defaults[0][0]:
            raise InputError(
                f"defaultDuration: Invalid value: {format_duration_ms(ms)}: differs from the defaultDuration at {defaults[0][1].where()}",
                file=source.file, line=source.line, obj="Trace",
            )  # fmt: skip
    return Durations(defaults[0][0] if defaults else None, tuple(collected.duration_rules))


def load_config(path: str | Path) -> SchedulerConfig:
    """A file holding one KubeSchedulerConfiguration (what ``--config FILE`` names)."""
    collected = Collected()
    _read_config_file(str(path), 0, collected)
    return single_config(collected)


def _read_config_file(path: str, file_index: int, collected: Collected) -> None:
    for doc in config_documents(path, file_index):
        collected.configs.append(config_document(doc, path))


def config_documents(path: str, file_index: int) -> list[Document]:
    """The documents of a ``--config`` file; a file without any is an error."""
    docs = read_documents(path, file_index)
    if not docs:
        raise InputError(f"no {CONFIG_KIND} document in this file", file=path)
    return docs


def config_document(doc: Document, path: str) -> tuple[SchedulerConfig, Source]:
    """One document of a ``--config`` file, which must be a KubeSchedulerConfiguration, decoded."""
    try:
        check_type(doc.data, doc.line, allowed=frozenset({CONFIG_KIND}))
    except InputError as exc:
        raise exc.located(file=path, line=doc.line) from None
    source = Source(path, doc.line, doc.index)
    return decode_config(doc.data, source), source


def single_config(collected: Collected) -> SchedulerConfig:
    """The one KubeSchedulerConfiguration collected (the default when there is none); a second is an error."""
    if not collected.configs:
        return SchedulerConfig()
    if len(collected.configs) > 1:
        first, second = collected.configs[0][1], collected.configs[1][1]
        raise InputError(
            f"a second {CONFIG_KIND} (the first is at {first.where()}): give only one, in the trace or with --config",
            file=second.file,
            line=second.line,
            obj=CONFIG_KIND,
        )
    return collected.configs[0][0]


def _priorities(collected: Collected, warnings: Warnings) -> Priorities:
    """Every PriorityClass in the trace, whatever its arrival time."""
    priorities = Priorities()
    decoder = Decoder(priorities, warnings)
    for ev in collected.events:
        if is_priority_class_create(ev):
            add_priority_class(ev, decoder, priorities)
    return priorities


@dataclass(slots=True)
class _Entry:
    raw: dict | None  # None for objects no PATCH names
    obj: object
    incarnation: int  # seq of the CREATE event (a remove-at delete only removes its own object)
    owner: str = ""  # created by a workload controller: the workload (``JobSet ml/x``)


class Replay:
    """Applies raw events in order to a store of live objects and emits TraceEvents."""

    def __init__(self, decoder: Decoder, warnings: Warnings) -> None:
        self.decoder = decoder
        self.warnings = warnings
        self.alive: dict[Key, _Entry] = {}
        self.out: list[TraceEvent] = []
        self.node_gpus: dict[str, int] = {}  # live nodes' nvidia.com/gpu, for MAX_CLUSTER_GPUS
        self.cluster_gpus = 0

    def run(self, events: Iterable[RawEvent]) -> list[TraceEvent]:
        for ev in events:
            self.apply(ev)
        return self.out

    def apply(self, ev: RawEvent) -> None:
        if ev.op is Op.CREATE:
            self.create(ev)
        elif ev.op is Op.PATCH:
            self.patch(ev)
        else:
            self.delete(ev)

    def emit(self, ev: RawEvent, op: Op, kind: str, namespace: str, name: str, obj: object, order: tuple[int, ...]) -> None:
        if kind == "Node":
            self._count_gpus(ev, name, obj.allocatable.get(GPU, 0) if isinstance(obj, Node) else 0)
        self.out.append(TraceEvent(ev.at_ms, op, kind, namespace, name, obj, ev.source, order))

    def _count_gpus(self, ev: RawEvent, node: str, gpus: int) -> None:
        """Keep the GPUs of the live nodes within MAX_CLUSTER_GPUS (events come in time order)."""
        self.cluster_gpus += gpus - self.node_gpus.pop(node, 0)
        if gpus:
            self.node_gpus[node] = gpus
        if self.cluster_gpus > MAX_CLUSTER_GPUS:
            field = "spec.template.status.allocatable" if ev.kind == "NodePool" else "status.allocatable"
            detail = f"the cluster would have {self.cluster_gpus:,} GPUs at {format_duration_ms(ev.at_ms)}: gangsim replays at most {MAX_CLUSTER_GPUS:,}"
            raise InputError(invalid(f"{field}[{GPU}]", gpus, detail), file=ev.source.file, line=ev.source.line, obj=object_ref(ev.kind, ev.namespace, ev.name))

    def _add(self, ev: RawEvent, key: Key, raw: dict, obj: object) -> None:
        known = self.alive.get(key)
        if known is not None:
            where = getattr(known.obj, "source", None)
            detail = f"already exists (created at {where.where()})" if where else "already exists"
            error = FieldError("metadata.name", detail, "Duplicate value", key[2], True)
            raise InputError(error, file=ev.source.file, line=ev.source.line, obj=object_ref(*key))
        self.alive[key] = _Entry(raw, obj, ev.seq)

    def create(self, ev: RawEvent) -> None:
        decoded: Decoded = ev.decoded
        key = (ev.kind, ev.namespace, ev.name)
        self._add(ev, key, ev.raw, decoded.obj)
        if isinstance(decoded.obj, NodePool):
            self._pool_nodes(ev, decoded.obj, ev.raw, range(decoded.obj.count))
        elif isinstance(decoded.obj, Expansion):
            self._expand(ev, decoded.obj)
        else:
            self.emit(ev, Op.CREATE, ev.kind, ev.namespace, ev.name, decoded.obj, ev.order)

    def _pool_nodes(self, ev: RawEvent, pool: NodePool, pool_raw: dict, indexes: range) -> None:
        for i in indexes:
            node = pool_node(pool, i)
            self._add(ev, ("Node", "", node.name), pool_node_raw(pool_raw, node.name, pool.domain_labels(i)), node)
            self.emit(ev, Op.CREATE, "Node", "", node.name, node, ev.order + (i,))

    def _expand(self, ev: RawEvent, expansion: Expansion) -> None:
        """What a workload controller creates (gangsim.load.controllers), in its order."""
        for i, (kind, namespace, name, obj) in enumerate(expansion.children):
            self._add(ev, (kind, namespace, name), None, obj)
            self.alive[(kind, namespace, name)].owner = expansion.ref
            self.emit(ev, Op.CREATE, kind, namespace, name, obj, ev.order + (i,))

    def _delete_expansion(self, ev: RawEvent, expansion: Expansion) -> None:
        """Deleting a workload deletes what its controller created (owner references), newest first."""
        last = len(expansion.children) - 1
        for i, (kind, namespace, name, _obj) in reversed(list(enumerate(expansion.children))):
            entry = self.alive.get((kind, namespace, name))
            if entry is not None and entry.owner == expansion.ref:
                del self.alive[(kind, namespace, name)]
                self.emit(ev, Op.DELETE, kind, namespace, name, None, ev.order + (last - i,))

    def patch(self, ev: RawEvent) -> None:
        key = (ev.kind, ev.namespace, ev.name)
        entry = self.alive.get(key)
        if entry is None:
            raise InputError(f"not found: nothing to patch at {format_duration_ms(ev.at_ms)}", file=ev.source.file, line=ev.source.line, obj=ev.ref)
        if isinstance(entry.obj, Expansion) or entry.owner:
            what = f"created by {entry.owner}" if entry.owner else "a workload gangsim expands once"
            raise InputError(f"cannot be patched: {what}; gangsim does not model changes to workloads and what their controllers create (delete it and create a new one)", file=ev.source.file, line=ev.source.line, obj=ev.ref)
        try:
            body = patch_document(Obj(ev.raw, "", ev.source.line), ev.kind)
        except InputError as exc:
            raise exc.located(file=ev.source.file, line=ev.source.line, obj=ev.ref) from None
        new_raw = merge_patch(entry.raw, body)
        decoded = self.decoder.decode(new_raw, ev.source, status_warning=False)
        obj = decoded.obj
        if isinstance(obj, Node) and isinstance(entry.obj, Node) and entry.obj.pool:
            obj = replace(obj, pool=entry.obj.pool)
        error = check_update(ev.kind, entry.raw, new_raw, entry.obj, obj)
        if error is not None:
            raise InputError(error, file=ev.source.file, line=patch_line(body, error.field, ev.source.line), obj=ev.ref)
        self.alive[key] = _Entry(new_raw, obj, entry.incarnation)
        if isinstance(obj, NodePool):
            self._pool_patched(ev, entry.obj, obj, new_raw)
        else:
            self.emit(ev, Op.PATCH, ev.kind, ev.namespace, ev.name, obj, ev.order)

    def _pool_patched(self, ev: RawEvent, old: NodePool, new: NodePool, new_raw: dict) -> None:
        """Template changes patch the pool's live nodes; a count change adds or deletes nodes."""
        def shape(n: Node) -> tuple:
            return (n.labels, n.allocatable, n.taints, n.unschedulable)

        changed = shape(old.template) != shape(new.template) or old.topology != new.topology
        for i in range(min(old.count, new.count)):
            key = ("Node", "", new.node_name(i))
            entry = self.alive.get(key)
            if changed and entry is not None and getattr(entry.obj, "pool", None) == new.name:
                node = pool_node(new, i)
                self.alive[key] = _Entry(pool_node_raw(new_raw, node.name, new.domain_labels(i)), node, entry.incarnation)
                self.emit(ev, Op.PATCH, "Node", "", node.name, node, ev.order + (i,))
        self._pool_nodes(ev, new, new_raw, range(old.count, new.count))
        for i in range(new.count, old.count):
            self._delete_node_of(ev, new.name, new.node_name(i), i)

    def _delete_node_of(self, ev: RawEvent, pool: str, name: str, index: int) -> None:
        key = ("Node", "", name)
        entry = self.alive.get(key)
        if entry is not None and getattr(entry.obj, "pool", None) == pool:
            del self.alive[key]
            self.emit(ev, Op.DELETE, "Node", "", name, None, ev.order + (index,))

    def delete(self, ev: RawEvent) -> None:
        key = (ev.kind, ev.namespace, ev.name)
        entry = self.alive.get(key)
        if ev.generated_by is not None and (entry is None or entry.incarnation != ev.generated_by):
            self.warnings.add(f"{ev.ref}: {REMOVE_AT} at {format_duration_ms(ev.at_ms)} ignored: the object was already deleted")
            return
        if entry is None:
            raise InputError(f"not found: nothing to delete at {format_duration_ms(ev.at_ms)}", file=ev.source.file, line=ev.source.line, obj=ev.ref)
        del self.alive[key]
        if isinstance(entry.obj, NodePool):
            for i in range(entry.obj.count):
                self._delete_node_of(ev, entry.obj.name, entry.obj.node_name(i), i)
        elif isinstance(entry.obj, Expansion):
            self._delete_expansion(ev, entry.obj)
        else:
            self.emit(ev, Op.DELETE, ev.kind, ev.namespace, ev.name, None, ev.order)


__all__ = [
    "Replay",
    "config_document",
    "config_documents",
    "load_config",
    "load_trace",
    "single_config",
]
