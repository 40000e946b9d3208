"""Documents that repeat an earlier one but for their names, decoded once (issue 16).

Generated and imported traces write thousands of JSON documents that differ only in
``metadata.name`` and, for a gang's objects, the PodGroup their pod spec names: scheduler_perf
shapes write 50,000 such Pods, a gang trace a PodGroup and a Job per gang (``gang-7`` with pods
naming ``gang-7``), the SWF importer a PodGroup per job with one of a few sizes. ``Shared`` keys
each such document by its bytes with those names blanked, and on a repeat reuses the earlier
document's object with the new names, after checking the names as the decoder would. The result
is what decoding the document gives; anything else falls back to decoding it:

- only Pod, Job and PodGroup documents with a written ``metadata.name`` and no ``status`` (a
  Pod's status is a warning per document), and only documents whose decoding warned about
  nothing (a warning names its object);
- a name the decoder would reject is decoded, so the error is the decoder's;
- the PodGroup name is blanked only where it is a non-empty string at
  ``spec.schedulingGroup.podGroupName`` (a Pod) or ``spec.template.spec.schedulingGroup.podGroupName``
  (a Job), and the key says whether it was, so a document naming no PodGroup never takes the
  object of one that does.

Every other field (labels, annotations and so the durations, owner references, priorities) is
part of the key; PriorityClasses are resolved across the whole trace before any of these is
decoded, so an object depends on its document alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import orjson

from gangsim.api.objects import Pod, Source
from gangsim.errors import InputError
from gangsim.load.fields import Obj, check_name
from gangsim.load.meta import JOB_NAME_MAX, Meta

# kind -> the path from the document to the ``schedulingGroup`` whose ``podGroupName`` is blanked (None: none)
_GROUP_PATH: dict[str, tuple[str, ...] | None] = {"Pod": ("spec", "schedulingGroup"), "Job": ("spec", "template", "spec", "schedulingGroup"), "PodGroup": None}
SHARED_KINDS = frozenset(_GROUP_PATH)
_NAME_MAX = {"Job": JOB_NAME_MAX}


class Shared:
    """The objects of documents seen so far, by their name-blanked bytes (see the module docstring).

    ``warned()``: how many things the decoder noted so far (a document is kept only if that did
    not grow while it was decoded)."""

    def __init__(self, warned: Callable[[], int]) -> None:
        self._warned = warned
        self._seen: dict[bytes, tuple[object, str]] = {}  # key -> (its Decoded, its PodGroup name or "")

    def decode(self, raw: dict, kind: str, source: Source, full: Callable[[], object]) -> object:
        """``raw``'s Decoded: an earlier one's object with this document's names, or ``full()``,
        the decoder's decoding of it."""
        meta = raw.get("metadata")
        name = meta.get("name") if type(meta) is dict else None
        if not isinstance(name, str) or not name or raw.get("status"):
            return full()
        blank = {**raw, "metadata": {**meta, "name": ""}}
        group, blank = _blank_group(blank, _GROUP_PATH[kind])
        try:
            key = (b"1" if group else b"0") + orjson.dumps(blank)
        except TypeError:  # a value orjson cannot encode: the decoder names it
            return full()
        hit = self._seen.get(key)
        if hit is None:
            before = self._warned()
            decoded = full()
            if self._warned() == before:
                self._seen[key] = (decoded, group)
            return decoded
        seen, seen_group = hit
        try:
            if name != seen.name:  # type: ignore[attr-defined]
                check_name(Obj(meta, "metadata", source.line), "name", "subdomain", max_len=_NAME_MAX.get(kind))
            if group != seen_group:
                check_name(Obj({"podGroupName": group}, "", source.line), "podGroupName", "subdomain", req=False)
        except InputError:
            return full()  # the full decoding reports it
        return _renamed(seen, kind, name, group if group != seen_group else None, source)


def _blank_group(doc: dict, path: tuple[str, ...] | None) -> tuple[str, dict]:
    """The PodGroup name at ``path`` + ``podGroupName`` of ``doc`` and ``doc`` with it blanked
    (copies along the path), when it is a non-empty string; else ("", doc)."""
    if path is None:
        return "", doc
    nodes = []
    node = doc
    for step in path:
        nodes.append(node)
        node = node.get(step)
        if type(node) is not dict:
            return "", doc
    group = node.get("podGroupName")
    if not isinstance(group, str) or not group:
        return "", doc
    out: dict = {**node, "podGroupName": ""}
    for step, parent in zip(reversed(path), reversed(nodes)):
        out = {**parent, step: out}
    return group, out


def _renamed(seen, kind: str, name: str, group: str | None, source: Source):
    """``seen`` (a Decoded of ``kind``) as the document named ``name`` at ``source`` decodes, its
    pod spec naming PodGroup ``group`` (None: the same as ``seen``'s)."""
    obj, m = seen.obj, seen.meta
    if kind == "Pod":
        spec = obj.spec if group is None else replace(obj.spec, scheduling_group=group)
        obj = Pod(obj.namespace, name, spec, obj.job, obj.index, source)
    elif kind == "Job":
        obj = replace(obj, name=name, source=source, template=obj.template if group is None else replace(obj.template, scheduling_group=group))
    else:
        obj = replace(obj, name=name, source=source)
    meta = Meta(name, m.namespace, dict(m.labels), dict(m.times), source.line, "")
    return type(seen)(kind, seen.namespace, name, obj, meta)
