"""Errors: everything ``load_trace`` rejects, with the loader's exact message, as many as can be found.

The loader stops at the first problem; ``StepwiseLoader`` runs the same steps (the loader's public
per-step functions) document by document: files one by one; a YAML file with a syntax error is
re-read document by document, a JSON Lines file line by line, so several independent bad documents
give several errors. An object that failed to decode is remembered as *broken* (``Broken``): later
patches and deletes of it, objects naming its broken PriorityClass, and warnings about it are not
reported again (one problem, one line).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Source
from gangsim.api.trace import Op, Trace
from gangsim.errors import FieldError, InputError
from gangsim.load.decode import Decoder, Warnings
from gangsim.load.documents import JSONL_SUFFIXES, Document, decode_text, expand_paths, flatten_lists, jsonl_documents, read_documents, yaml_documents
from gangsim.load.events import Collected, RawEvent, collect, trace_header, trace_item
from gangsim.load.fields import dig
from gangsim.load.meta import API_VERSIONS, raw_key
from gangsim.load.priority import Priorities
from gangsim.load.creates import add_priority_class, decode_create, finish_creates, is_priority_class_create
from gangsim.load.trace import Replay, config_document, config_documents, single_config
from gangsim.validate.findings import Findings

_DOC_START = re.compile(r"^---(?:[ \t]|$)")
_YAML_SUFFIXES = (".yaml", ".yml")


def _raw_key(raw: object) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a raw object document, as the loader would key it."""
    kind = dig(raw, "kind")
    return raw_key(kind, raw) if isinstance(kind, str) else None


@dataclass(slots=True)
class Broken:
    """Objects that failed to load: nothing more is reported about them."""

    keys: set[tuple[str, str, str]] = field(default_factory=set)
    classes: set[str] = field(default_factory=set)
    pools: set[str] = field(default_factory=set)
    groups_with_broken_members: set[str] = field(default_factory=set)

    def add_raw(self, raw: object) -> None:
        key = _raw_key(raw)
        if key is None:
            return
        self.keys.add(key)
        kind, namespace, name = key
        if kind == "PriorityClass":
            self.classes.add(name)
        elif kind == "NodePool":
            self.pools.add(name)
        spec = dig(raw, "spec.template.spec") if kind == "Job" else dig(raw, "spec")
        group = dig(spec, "schedulingGroup.podGroupName")
        if kind in ("Pod", "Job") and isinstance(group, str) and group:
            self.groups_with_broken_members.add(f"{namespace}/{group}")

    def covers(self, kind: str, namespace: str, name: str) -> bool:
        if (kind, namespace, name) in self.keys:
            return True
        if kind == "Node":
            pool, _, index = name.rpartition("-")
            return pool in self.pools and index.isdigit()
        return False

    def cascade(self, exc: InputError) -> bool:
        """An error that only repeats a broken PriorityClass (``no PriorityClass with name x``)."""
        d = exc.detail
        return isinstance(d, FieldError) and d.field.endswith("priorityClassName") and d.value in self.classes


class StepwiseLoader:
    """``load_trace``'s steps, one document (event, object) at a time, every error into ``findings``."""

    def __init__(self, findings: Findings) -> None:
        self.findings = findings
        self.broken = Broken()
        self._failed_classes: set[int] = set()  # seq of PriorityClass creates already reported

    def error(self, exc: InputError) -> None:
        self.findings.error(exc)

    def load(self, paths: Sequence[str | Path], config_path: str | Path | None) -> Trace:
        """What loaded (broken objects left out), with ``Trace.warnings`` also reported as findings."""
        files: list[str] = []
        for given in paths:
            try:
                found = expand_paths([given])
            except InputError as exc:
                self.findings.rank_file(os.fspath(given))
                self.error(exc)
                continue
            for f in found:
                self.findings.rank_file(f)
            files.extend(found)
        if not paths:
            self.error(InputError("no trace files given"))
        collected = Collected()
        for index, file in enumerate(files):
            for doc in self._documents(file, index):
                self._collect(doc, collected)
        if config_path is not None:
            self.findings.rank_file(str(config_path))
            self._config_file(str(config_path), len(files), collected)
        config = self._config(collected)
        warnings = Warnings()
        decoder = Decoder(self._priorities(collected, warnings), warnings)
        events = self._decode_creates(collected, decoder)
        replay = Replay(decoder, warnings)
        for ev in events:
            if ev.op is not Op.CREATE and self.broken.covers(ev.kind, ev.namespace, ev.name):
                continue
            try:
                replay.apply(ev)
            except InputError as exc:
                self.error(exc)
        name = collected.trace_names[0] if collected.trace_names else (Path(files[0]).stem if files else "trace")
        trace = Trace(
            name=name,
            events=replay.out,
            config=config,
            horizon_ms=max(collected.horizons) if collected.horizons else None,
            files=tuple(files),
            warnings=warnings.result(),
            notices=warnings.notices(),
            job_workloads=all(collected.job_workloads),
        )
        self._loader_notes(trace)
        return trace

    def _documents(self, label: str, file_index: int) -> list[Document]:
        try:
            return read_documents(label, file_index)
        except InputError as exc:
            lower = label.lower()
            if lower.endswith(_YAML_SUFFIXES) and exc.line is not None and str(exc.detail).startswith("invalid YAML"):
                return self._yaml_by_document(label, file_index, exc)
            if lower.endswith(JSONL_SUFFIXES) and exc.line is not None:
                return self._jsonl_by_line(label, file_index)
            self.error(exc)
            return []

    def _yaml_by_document(self, label: str, file_index: int, first: InputError) -> list[Document]:
        """Re-read a YAML file whose syntax is broken one ``---`` chunk at a time.

        Each chunk is parsed on its own, padded with newlines so that lines stay those of the file.
        """
        text = decode_text(Path(label).read_bytes(), label)
        lines = text.split("\n")
        starts = [0] + [i for i in range(1, len(lines)) if _DOC_START.match(lines[i])]
        docs: list[Document] = []
        failed = False
        for start, end in zip(starts, [*starts[1:], len(lines)]):
            chunk = "\n" * start + "\n".join(lines[start:end])
            try:
                found = flatten_lists(list(yaml_documents(chunk, label, file_index)))
            except InputError as exc:
                self.error(exc)
                failed = True
                continue
            for doc in found:
                doc.index = len(docs)
                docs.append(doc)
        if not failed:  # the split did not reproduce the problem: report the loader's own error
            self.error(first)
        return docs

    def _jsonl_by_line(self, label: str, file_index: int) -> list[Document]:
        docs: list[Document] = []
        for number, text in enumerate(Path(label).read_bytes().split(b"\n"), start=1):
            if not text.strip():
                continue
            try:
                for doc in jsonl_documents(text, label, file_index):
                    doc.index = doc.line = number
                    docs.append(doc)
            except InputError as exc:
                self.error(InputError(exc.detail, file=label, line=number, obj=exc.obj))
        return docs

    def _collect(self, doc: Document, collected: Collected) -> None:
        data = doc.data
        try:
            if doc.fmt != "jsonl" and data.get("kind") == "Trace" and data.get("apiVersion") in API_VERSIONS["Trace"]:
                self._collect_trace(doc, collected)
            else:
                collect(doc, collected)
        except InputError as exc:
            self.error(exc)
            self.broken.add_raw(data)
            if doc.fmt == "jsonl":
                self.broken.add_raw(data.get("create"))

    def _collect_trace(self, doc: Document, out: Collected) -> None:
        """``collect`` of a Trace document, but a bad event item does not hide the items after it."""
        name, items = trace_header(doc, out)
        for i, (item, path, line) in enumerate(items):
            try:
                trace_item(doc, name, i, item, path, line, out)
            except InputError as exc:
                self.error(exc.located(file=doc.file, line=doc.line, obj=name))
                if isinstance(item, Mapping):
                    self.broken.add_raw(item.get("create"))

    def _config_file(self, path: str, file_index: int, collected: Collected) -> None:
        try:
            docs = config_documents(path, file_index)
        except InputError as exc:
            self.error(exc)
            return
        for doc in docs:
            try:
                collected.configs.append(config_document(doc, path))
            except InputError as exc:
                self.error(exc)

    def _config(self, collected: Collected) -> SchedulerConfig:
        configs = collected.configs
        for i in range(1, len(configs)):
            try:
                single_config(Collected(configs=[configs[0], configs[i]]))
            except InputError as exc:
                self.error(exc)
        return configs[0][0] if configs else SchedulerConfig()

    def _priorities(self, collected: Collected, warnings: Warnings) -> Priorities:
        priorities = Priorities()
        decoder = Decoder(priorities, warnings)
        for ev in collected.events:
            if not is_priority_class_create(ev):
                continue
            try:
                add_priority_class(ev, decoder, priorities)
            except InputError as exc:
                self.error(exc)
                self.broken.add_raw(ev.raw)
                self._failed_classes.add(ev.seq)
        return priorities

    def _decode_creates(self, collected: Collected, decoder: Decoder) -> list[RawEvent]:
        """The loader's create decoding (``decode_create``), one created object at a time."""
        out: list[RawEvent] = []
        for ev in collected.events:
            if ev.op is not Op.CREATE:
                out.append(ev)
                continue
            if ev.seq in self._failed_classes:
                continue
            try:
                removal = decode_create(ev, decoder, seq=len(collected.events) + len(out) + 1)
            except InputError as exc:
                if not self.broken.cascade(exc):
                    self.error(exc)
                self.broken.add_raw(ev.raw)
                continue
            out.append(ev)
            if removal is not None:
                out.append(removal)
        return finish_creates(out)

    def _loader_notes(self, trace: Trace) -> None:
        """What the loader ignored (``Trace.warnings``), as warnings located at their object."""
        sources: dict[str, Source] = {}
        for ev in trace.events:
            if ev.op is Op.CREATE and ev.obj is not None:
                sources.setdefault(ev.ref, getattr(ev.obj, "source", None))
        first = Source(trace.files[0]) if trace.files else None
        for note in trace.warnings:
            head, sep, rest = note.partition(": ")
            if sep and head in sources and sources[head] is not None:
                self.findings.warn("loader-note", sources[head], head, rest)
            else:
                self.findings.warn("loader-note", first, "", note)


__all__ = ["Broken", "StepwiseLoader"]
