"""The streaming loader: decode every document as it is read, keep nothing of it but what a later
step needs.

The reference path (``gangsim.load.trace``, ``load_trace(..., streaming=False)``) reads every
file, then decodes the PriorityClasses, then every created object, holding every parsed document
until the end: loading the RICC log (516,000 imported objects) peaked at ~1.6 GiB. Here each
document goes through ``collect`` and is decoded at once; its raw mapping is dropped as soon as it
is decoded unless something later needs it (a NodePool's makes its nodes', a ``generateName``
object is renamed after the sort, and a PATCH merges into its target's).

It gives the reference path's events exactly, or declines (returns ``None``) and the caller loads
with the reference path, whenever deciding in one pass could differ from it:

* a PriorityClass created after any other object (classes resolve across the whole trace, so the
  objects before it were decoded without it);
* a PATCH when the prescan said no file holds one (their targets' documents were dropped);
* any ``InputError`` while reading, collecting or decoding: which error the reference path
  reports first (a syntax error anywhere in a file before a decoding error in an earlier document,
  PriorityClasses before every other object) is decided by running it;
* a source read from standard input (``kubectl:-``), which cannot be read a second time.

Importers' notes on stderr are printed once, by whichever path finishes.
"""

from __future__ import annotations

from gangsim.api.trace import Op
from gangsim.errors import InputError
from gangsim.load.creates import add_priority_class, decode_create, drop_raw, finish_creates, is_priority_class_create
from gangsim.load.decode import Decoder, Warnings
from gangsim.load.documents import _file_bytes, iter_documents, print_notes, stdin_import
from gangsim.load.events import Collected, RawEvent, collect
from gangsim.load.priority import Priorities
from gangsim.load.switches import reference_loader

# A PATCH item needs the key ``patch``; in a file without it (and without a backslash, through
# which a JSON or YAML string could spell it) no document can patch anything.
_PATCH_MARKS = (b"patch", b"\\")


class Declined(Exception):
    """The one-pass decoding could differ from the reference path's: load with that one."""


def may_patch(files: list[str]) -> bool:
    """Whether any plain file could hold a PATCH (importers write none: checked while loading)."""
    for label in files:
        if stdin_import(label):
            return True
        try:
            data = _file_bytes(label)
        except InputError:
            continue  # an importer source (``swf:PATH``) or an unreadable file (reported later)
        if any(mark in data for mark in _PATCH_MARKS):
            return True
    return False


def stream_creates(files: list[str], read_config, horizon_ms: int | None = None) -> tuple[Collected, Decoder, Warnings, list[RawEvent]] | None:
    """``(collected, decoder, warnings, events)`` as the reference path's reading and
    ``_decode_creates`` give them, or ``None`` when the reference path must decide (see the
    module docstring). ``read_config(collected)`` adds the ``--config`` file's documents and
    checks that there is at most one configuration."""
    if any(stdin_import(f) for f in files):
        return None
    notes: list[str] = []
    try:
        result = _stream(files, read_config, notes, keep_raws=may_patch(files), horizon_ms=horizon_ms)
    except (InputError, Declined):
        return None
    print_notes(notes)
    return result


def _stream(files: list[str], read_config, notes: list[str], *, keep_raws: bool, horizon_ms: int | None) -> tuple[Collected, Decoder, Warnings, list[RawEvent]]:
    collected = Collected()
    warnings = Warnings()
    priorities = Priorities()
    class_decoder = Decoder(priorities, warnings)  # as the reference path's _priorities
    decoder = Decoder(priorities, warnings, share_identical=not reference_loader())  # the reference path decodes each document
    out: list[RawEvent] = []  # events and their remove-at deletes, in document order
    others = False  # an object other than a PriorityClass was decoded
    for index, file in enumerate(files):
        for doc in iter_documents(file, index, notes, horizon_ms):
            start = len(collected.events)
            collect(doc, collected)
            for ev in collected.events[start:]:
                out.append(ev)
                if ev.op is Op.PATCH and not keep_raws:
                    raise Declined
                if ev.op is not Op.CREATE:
                    continue
                if is_priority_class_create(ev):
                    if others:
                        raise Declined
                    add_priority_class(ev, class_decoder, priorities)
                else:
                    others = True
                removal = decode_create(ev, decoder, seq=0)  # numbered below, as the reference path does
                if removal is not None:
                    out.append(removal)
                if not keep_raws:
                    drop_raw(ev, frozenset())
    read_config(collected)  # the --config file's documents; a second configuration is an error
    total = len(collected.events)
    for i, ev in enumerate(out):
        if ev.generated_by is not None:
            ev.seq = total + i
    if keep_raws:
        patched = {(ev.kind, ev.namespace, ev.name) for ev in collected.events if ev.op is Op.PATCH}
        for ev in collected.events:
            if ev.op is Op.CREATE:
                drop_raw(ev, patched)
    return collected, decoder, warnings, finish_creates(out)


__all__ = ["Declined", "may_patch", "stream_creates"]
