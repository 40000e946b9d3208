"""Created objects: decoding a CREATE (its arrival time, the remove-at DELETE it implies),
PriorityClasses first, and the events put in replay order. Shared by the reference path
(``gangsim.load.trace``, which decodes after reading everything) and the streaming loader
(``gangsim.load.stream``, which decodes while reading) and by ``gangsim validate``."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from gangsim.api.duration import format_duration_ms
from gangsim.api.objects import object_ref
from gangsim.api.trace import Op
from gangsim.errors import InputError, invalid
from gangsim.load.decode import Decoder
from gangsim.load.events import Collected, RawEvent
from gangsim.load.fields import Obj, line_of, shown
from gangsim.load.meta import ARRIVAL, REMOVE_AT, generated_name
from gangsim.load.priority import Priorities

# A remove-at DELETE shares its CREATE's order and sorts after it (and after a pool's node CREATEs,
# which extend that order with the node index) even when both happen at the same instant.
_AFTER_EXPANSION = 2**31


def is_priority_class_create(ev: RawEvent) -> bool:
    """Whether the event creates a PriorityClass (classes are decoded before everything else)."""
    return ev.op is Op.CREATE and ev.raw.get("kind") == "PriorityClass"


def add_priority_class(ev: RawEvent, decoder: Decoder, priorities: Priorities) -> None:
    """Decode a PriorityClass CREATE and add it to ``priorities`` (a duplicate name is an error)."""
    decoded = decoder.decode(ev.raw, ev.source)
    try:
        priorities.add(decoded.obj, Obj(ev.raw, "", ev.source.line))
    except InputError as exc:
        raise exc.located(file=ev.source.file, line=ev.source.line, obj=object_ref("PriorityClass", "", decoded.name)) from None



def settle_arrival(ev: RawEvent, times: dict[str, int]) -> None:
    """The event's time from its object's arrival annotation (an explicit ``at`` must agree);
    a remove-at must not come before the arrival."""
    if ev.at_given:
        if ARRIVAL in times and times[ARRIVAL] != ev.at_ms:
            raise _annotation_error(ev, ARRIVAL, f"disagrees with the event's `at` ({format_duration_ms(ev.at_ms)})")
    else:
        ev.at_ms = times.get(ARRIVAL, 0)
    if REMOVE_AT in times and times[REMOVE_AT] < ev.at_ms:
        raise _annotation_error(ev, REMOVE_AT, f"must not be before the arrival ({format_duration_ms(ev.at_ms)})")

def decode_creates(collected: Collected, decoder: Decoder) -> list[RawEvent]:
    """Decode created objects in document order; settle arrival times; add remove-at deletes."""
    patched = {(ev.kind, ev.namespace, ev.name) for ev in collected.events if ev.op is Op.PATCH}
    out: list[RawEvent] = []
    for ev in collected.events:
        out.append(ev)
        if ev.op is Op.CREATE:
            removal = decode_create(ev, decoder, seq=len(collected.events) + len(out))
            if removal is not None:
                out.append(removal)
            drop_raw(ev, patched)
    return finish_creates(out)


def drop_raw(ev: RawEvent, patched: Collection[tuple[str, str, str]]) -> None:
    """Drop a decoded CREATE's document unless a later step needs it: a PATCH of it (merge patch,
    immutable fields), a NodePool's makes its nodes', a ``generateName`` object is renamed in it.
    (RICC: ~0.1 GiB less at the load's peak, and nothing of them kept through the replay.)"""
    if ev.kind != "NodePool" and (ev.kind, ev.namespace, ev.name) not in patched and not ev.decoded.meta.generate_name:
        ev.raw = None


def finish_creates(events: list[RawEvent]) -> list[RawEvent]:
    """The decoded events in replay order ((time, order, seq)), ``generateName`` objects named."""
    events.sort(key=lambda e: (e.at_ms, e.order, e.seq))
    name_generated(events)
    return events


def name_generated(events: list[RawEvent]) -> None:
    """Give objects written with ``generateName`` their names, numbered per (kind, namespace,
    prefix) in creation order ((time, order): deterministic). A patch may then name them."""
    counters: dict[tuple[str, str, str], int] = {}
    for ev in events:
        if ev.op is not Op.CREATE or not ev.decoded.meta.generate_name:
            continue
        prefix = ev.decoded.meta.generate_name
        n = counters.get((ev.kind, ev.namespace, prefix), 0)
        counters[(ev.kind, ev.namespace, prefix)] = n + 1
        name = generated_name(prefix, n)
        ev.name = ev.decoded.name = ev.decoded.meta.name = name
        ev.decoded.obj = replace(ev.decoded.obj, name=name)
        ev.raw = {**ev.raw, "metadata": {**ev.raw["metadata"], "name": name}}


def decode_create(ev: RawEvent, decoder: Decoder, *, seq: int) -> RawEvent | None:
    """Decode a CREATE in place (object, key, arrival time); the remove-at DELETE it implies
    (numbered ``seq``), if any."""
    decoded = decoder.decode(ev.raw, ev.source)
    ev.decoded = decoded
    ev.kind, ev.namespace, ev.name = decoded.kind, decoded.namespace, decoded.name
    times = decoded.meta.times
    settle_arrival(ev, times)
    if REMOVE_AT not in times:
        return None
    return RawEvent(
        times[REMOVE_AT], Op.DELETE, ev.order + (_AFTER_EXPANSION,), ev.source, None,
        kind=ev.kind, namespace=ev.namespace, name=ev.name, seq=seq, generated_by=ev.seq,
    )  # fmt: skip


def _annotation_error(ev: RawEvent, key: str, detail: str) -> InputError:
    meta = ev.raw.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    line = line_of(annotations, key, ev.source.line)
    return InputError(invalid(f"metadata.annotations[{key}]", shown(annotations.get(key)), detail), file=ev.source.file, line=line, obj=ev.ref)


__all__ = [
    "add_priority_class",
    "decode_create",
    "decode_creates",
    "drop_raw",
    "finish_creates",
    "is_priority_class_create",
    "name_generated",
    "settle_arrival",
]
