"""Trace files → raw documents that remember where they were written.

A ``Document`` is one YAML document, one JSON object (or one item of a JSON list / ``List``), or
one JSON Lines line. Its ``data`` is a plain ``dict`` — for YAML an ``LDict``, a dict subclass
whose ``lines`` map each key to the (1-based) line where the key was written, and whose ``line``
is the line where the mapping starts; lists are ``LList`` with ``lines[i]`` per item. JSON keeps
only the line where each document starts (orjson gives no positions); JSON Lines the line number.

Order (INTERFACE rule 3): files in command-line order, a directory's files by name; inside a file,
documents in order (``index``), ``List`` items flattened in order.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml

from gangsim.errors import InputError

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

TRACE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
JSONL_SUFFIXES = (".jsonl", ".ndjson")
# Above this size a JSON file is not scanned for document start lines (errors then carry no line).
_JSON_LINE_SCAN_LIMIT = 8 * 1024 * 1024


class LDict(dict):
    """A mapping from YAML that remembers the line of the mapping and of each key."""

    __slots__ = ("line", "lines")

    def __init__(self, *args: object, line: int | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.line = line
        self.lines: dict[str, int] = {}


class LList(list):
    """A sequence from YAML that remembers its line and the line of each item."""

    __slots__ = ("line", "lines")

    def __init__(self, *args: object, line: int | None = None) -> None:
        super().__init__(*args)
        self.line = line
        self.lines: list[int] = []


@dataclass(slots=True)
class Document:
    file: str  # the path as the user gave it (or dir/name for a directory member)
    file_index: int
    index: int  # document index inside the file (JSON Lines: the line number)
    line: int | None  # where the document starts
    data: dict
    fmt: str  # "yaml" | "json" | "jsonl"


def expand_paths(paths: Sequence[str | Path]) -> list[str]:
    """Files to read, in order: a directory means its trace files sorted by name."""
    out: list[str] = []
    for given in paths:
        label = os.fspath(given)
        if os.path.isdir(label):
            names = sorted(n for n in os.listdir(label) if n.endswith(TRACE_SUFFIXES) and os.path.isfile(os.path.join(label, n)))
            if not names:
                raise InputError("no *.yaml, *.yml, *.json or *.jsonl files in this directory", file=label)
            out.extend(os.path.join(label, n) for n in names)
        elif os.path.exists(label):
            out.append(label)
        elif _imported(label) is not None:
            out.append(label)  # `openb:PATH`: read through an importer (read_documents)
        else:
            raise InputError("no such file or directory", file=label)
    return out


def _imported(label: str) -> tuple[str, str] | None:
    """``KIND:PATH`` naming an importer (gangsim.load.importers) and an existing path."""
    if ":" not in label:
        return None
    from gangsim.load.importers import split_source

    found = split_source(label)
    if found is None:
        return None
    if not os.path.exists(found[1]) and found[1] != "-":
        raise InputError("no such file or directory", file=found[1], obj=f"{found[0]} import")
    return found


def _imported_documents(label: str, kind: str, path: str, file_index: int, notes: list[str], horizon_ms: int | None = None) -> Iterator[Document]:
    """Run the importer with its default options; its records are JSON Lines documents, yielded
    as the importer produces them. Its notes (counts, offered load) go to ``notes`` at the end.
    ``horizon_ms``: the replay's horizon, the importer may leave out what arrives at or after it
    (``gangsim.load.importers.records``)."""
    from gangsim.load.importers import Stats, records

    stats = Stats()
    for i, data in enumerate(records(kind, [path], stats=stats, until_ms=horizon_ms), start=1):
        yield Document(label, file_index, i, i, data, "jsonl")
    notes.extend(f"{label}: {note}" for note in stats.notes)


def print_notes(notes: list[str]) -> None:
    """The importers' notes on stderr, one ``gangsim: …`` line each."""
    import sys

    for note in notes:
        sys.stderr.write(f"gangsim: {note}\n")


def stdin_import(label: str) -> bool:
    """Whether ``label`` imports from standard input (``kubectl:-``), which can be read only once."""
    found = None if os.path.exists(label) else _imported(label)
    return found is not None and found[1] == "-"


def _file_bytes(label: str) -> bytes:
    try:
        return Path(label).read_bytes()
    except OSError as exc:
        raise InputError(exc.strerror or str(exc), file=label) from None


def iter_documents(label: str, file_index: int, notes: list[str], horizon_ms: int | None = None) -> Iterator[Document]:
    """The documents of one file as they are parsed (the streaming loader, gangsim.load.stream):
    JSON Lines line by line, YAML document by document, an importer record by record; ``List``
    items flattened. The same documents as :func:`read_documents`; only a broken file's first
    error can differ (this reports the first problem in reading order, read_documents a syntax
    error anywhere in the file before a bad ``List``)."""
    if not os.path.exists(label):
        imported = _imported(label)
        if imported is not None:
            yield from _imported_documents(label, imported[0], imported[1], file_index, notes, horizon_ms)
            return
    raw = _file_bytes(label)
    lower = label.lower()
    if lower.endswith(JSONL_SUFFIXES):
        yield from jsonl_documents(raw, label, file_index)
    elif lower.endswith(".json"):
        yield from iter_flattened(_json_documents(raw, label, file_index), raw)
    else:
        yield from iter_flattened(yaml_documents(decode_text(raw, label), label, file_index))


def read_documents(label: str, file_index: int, horizon_ms: int | None = None) -> list[Document]:
    """All non-empty documents of one file, ``List`` items flattened: the whole file is read
    (and a syntax error anywhere in it reported) before any document is used."""
    if not os.path.exists(label):
        imported = _imported(label)
        if imported is not None:
            notes: list[str] = []
            docs = list(_imported_documents(label, imported[0], imported[1], file_index, notes, horizon_ms))
            print_notes(notes)
            return docs
    raw = _file_bytes(label)
    lower = label.lower()
    if lower.endswith(JSONL_SUFFIXES):
        docs = list(jsonl_documents(raw, label, file_index))
        return docs  # a List on a JSON Lines line is reported as an unknown kind
    if lower.endswith(".json"):
        return flatten_lists(list(_json_documents(raw, label, file_index)), raw)
    return flatten_lists(list(yaml_documents(decode_text(raw, label), label, file_index)))


def decode_text(raw: bytes, label: str) -> str:
    """A file's bytes as text (UTF-8, a BOM dropped); not UTF-8: ``InputError`` at the line of the first bad byte."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError("not UTF-8 text", file=label, line=line) from None


# --- YAML --------------------------------------------------------------------------------------


def yaml_documents(text: str, label: str, file_index: int) -> Iterator[Document]:
    """The mapping documents of a YAML text with their lines (a top-level sequence: one per item)."""
    loader = Loader(text)
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            data = _build(node, loader, label, {})
            if data is None:
                continue  # an empty document
            # a top-level sequence is a list of documents, as a JSON list is
            items = list(zip(data, data.lines)) if isinstance(data, LList) else [(data, node.start_mark.line + 1)]
            for item, line in items:
                if not isinstance(item, dict):
                    raise InputError(f"a document must be a mapping with apiVersion and kind, not {_type_name(item)}", file=label, line=line)
                yield Document(label, file_index, index, line, item, "yaml")
                index += 1
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "syntax error"
        if exc.context and exc.problem:
            what = f"{exc.problem} ({exc.context})"
        raise InputError(f"invalid YAML: {what}", file=label, line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=label) from None
    finally:
        loader.dispose()


def _build(node: yaml.Node, loader: yaml.BaseLoader, label: str, memo: dict[int, object]) -> object:
    """Build plain data from a composed node, keeping line numbers (aliases share objects)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = _key(key_node, label)
            if key in seen:
                raise InputError(f'invalid YAML: duplicate key "{key}"', file=label, line=key_node.start_mark.line + 1)
            seen.add(key)
        loader.flatten_mapping(node)  # `<<: *anchor` merge keys, as SafeLoader does
        mapping = LDict(line=line)
        memo[id(node)] = mapping
        for key_node, value_node in node.value:
            key = _key(key_node, label)
            mapping[key] = _build(value_node, loader, label, memo)
            mapping.lines[key] = key_node.start_mark.line + 1
        return mapping
    if isinstance(node, yaml.SequenceNode):
        seq = LList(line=line)
        memo[id(node)] = seq
        for item in node.value:
            seq.append(_build(item, loader, label, memo))
            seq.lines.append(item.start_mark.line + 1)
        return seq
    try:
        return loader.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise InputError(f"invalid YAML: {exc.problem}", file=label, line=line) from None


def _key(node: yaml.Node, label: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise InputError("invalid YAML: mapping keys must be strings", file=label, line=node.start_mark.line + 1)
    return node.value


# --- JSON and JSON Lines -----------------------------------------------------------------------


def _json_documents(raw: bytes, label: str, file_index: int) -> Iterator[Document]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=label, line=exc.lineno) from None
    if isinstance(data, dict):
        starts = _json_starts(raw, ())
        yield Document(label, file_index, 0, starts[0] if starts else None, data, "json")
    elif isinstance(data, list):
        starts = _json_starts(raw, (91,))
        aligned = len(starts) == len(data)
        for i, item in enumerate(data):
            line = starts[i] if aligned else None
            if not isinstance(item, dict):
                raise InputError(f"a document must be an object with apiVersion and kind, not {_type_name(item)}", file=label, line=line)
            yield Document(label, file_index, i, line, item, "json")
    else:
        raise InputError(f"a JSON trace must be an object or a list of objects, not {_type_name(data)}", file=label, line=1)


_JSON_TOKEN = re.compile(rb'"(?:[^"\\\n]|\\.)*"|[\[\]{}\n]')


def _json_starts(raw: bytes, inside: tuple[int, ...]) -> list[int]:
    """Start lines of the objects opened when the bracket stack is ``inside``.

    ``()`` finds the top-level object, ``(91,)`` the objects of a top-level list and
    ``(123, 91)`` those of a list inside the top-level object (a ``List``'s items).
    """
    if len(raw) > _JSON_LINE_SCAN_LIMIT:
        return []
    want = list(inside)
    starts: list[int] = []
    stack: list[int] = []
    line = 1
    for match in _JSON_TOKEN.finditer(raw):
        c = match.group()[0]
        if c == 10:  # newline
            line += 1
        elif c == 123 or c == 91:  # { [
            if c == 123 and stack == want:
                starts.append(line)
                if not want:
                    return starts
            stack.append(c)
        elif c == 125 or c == 93:  # } ]
            if stack:
                stack.pop()
    return starts


def jsonl_documents(raw: bytes, label: str, file_index: int) -> Iterator[Document]:
    """One document per non-blank line, numbered (``index`` and ``line``) by its line."""
    for number, text in enumerate(io.BytesIO(raw), start=1):  # lazily, split at b"\n" only
        if not text.strip():
            continue
        if text.endswith(b"\n"):
            text = text[:-1]  # the line as raw.split(b"\n") gives it
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise InputError(f"invalid JSON: {exc.msg}", file=label, line=number) from None
        if not isinstance(data, dict):
            raise InputError(f"a JSON Lines line must hold one object, not {_type_name(data)}", file=label, line=number)
        yield Document(label, file_index, number, number, data, "jsonl")


# --- List --------------------------------------------------------------------------------------


def flatten_lists(docs: list[Document], raw: bytes | None = None) -> list[Document]:
    """``kind: List`` documents become their items, in order, with fresh document indexes.

    One level only: a ``List`` inside a ``List`` is reported as an unknown kind later.
    """
    if not any(d.data.get("kind") == "List" for d in docs):
        return docs
    return list(iter_flattened(docs, raw))


def iter_flattened(docs: Iterable[Document], raw: bytes | None = None) -> Iterator[Document]:
    """:func:`flatten_lists` one document at a time (documents are numbered as they come, so
    a file without a ``List`` keeps its numbering)."""
    n = 0
    for doc in docs:
        if doc.data.get("kind") != "List":
            yield Document(doc.file, doc.file_index, n, doc.line, doc.data, doc.fmt)
            n += 1
            continue
        if doc.data.get("apiVersion") != "v1":
            raise InputError(
                f'apiVersion: Unsupported value: {_quote(doc.data.get("apiVersion"))}: supported values: "v1"',
                file=doc.file,
                line=_line(doc.data, "apiVersion", doc.line),
                obj="List",
            )
        items = doc.data.get("items") or []
        if not isinstance(items, list):
            raise InputError("items: Invalid value: must be a list", file=doc.file, line=_line(doc.data, "items", doc.line), obj="List")
        starts: list[int] = []
        if raw is not None and doc.fmt == "json":
            starts = _json_starts(raw, (123, 91))
            if len(starts) != len(items):
                starts = []
        for i, item in enumerate(items):
            if isinstance(item, LDict):
                line = item.line
            else:
                line = starts[i] if starts else doc.line
            if not isinstance(item, dict):
                raise InputError(f"items[{i}]: Invalid value: must be an object with apiVersion and kind", file=doc.file, line=line, obj="List")
            yield Document(doc.file, doc.file_index, n, line, item, doc.fmt)
            n += 1


def _line(data: dict, key: str, default: int | None) -> int | None:
    lines = getattr(data, "lines", None)
    return (lines.get(key) if lines else None) or default


def _quote(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else ("null" if value is None else str(value))


def _type_name(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


__all__ = [
    "JSONL_SUFFIXES",
    "TRACE_SUFFIXES",
    "Document",
    "LDict",
    "LList",
    "decode_text",
    "expand_paths",
    "flatten_lists",
    "iter_documents",
    "iter_flattened",
    "jsonl_documents",
    "print_notes",
    "read_documents",
    "stdin_import",
    "yaml_documents",
]
