"""Real-trace importers: other formats → gangsim JSON Lines records, streamed.

==========  ==================================================================================
``openb``   Alibaba GPU cluster trace v2023 (node list + pod list CSVs)          ``openb.py``
``swf``     Standard Workload Format logs of the Parallel Workloads Archive      ``swf.py``
``gavel``   Gavel's Philly-derived per-VC job streams (``*.trace``)               ``gavel.py``
``kubectl`` ``kubectl get nodes,pods,… -A -o yaml|json`` output (a ``List``)     ``kubectl.py``
==========  ==================================================================================

``records(kind, sources, options)`` yields the records of one import (see ``_common``);
``write_jsonl`` / ``write_yaml`` serialise them. ``gangsim import`` writes them to a file;
``gangsim run KIND:PATH`` (``gangsim.load.documents``) decodes them directly, without a file.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Iterable, Iterator
from typing import IO

import orjson

from gangsim.errors import InputError, UsageError
from gangsim.load.importers._common import ImportOptions, Stats

__all__ = ["IMPORTERS", "ImportOptions", "Stats", "records", "split_source", "write_jsonl", "write_yaml"]

IMPORTERS = {
    "openb": "Alibaba GPU trace v2023 (openb): a directory or the node-list and pod-list CSVs",
    "swf": "Standard Workload Format log (.swf or .swf.gz): rigid parallel jobs as gangs",
    "gavel": "Gavel/Philly per-VC job streams (*.trace, tab-separated): arrivals and GPU counts",
    "kubectl": "kubectl get nodes,pods,podgroups,workloads,priorityclasses -A -o yaml|json output",
}


def records(kind: str, sources: list[str], options: ImportOptions | None = None, stats: Stats | None = None, *, until_ms: int | None = None) -> Iterator[dict]:
    """The records of one import, in output order; errors are ``InputError``/``UsageError``.

    ``until_ms`` (``gangsim run KIND:PATH --horizon``): the importers in :data:`CUT_AT_HORIZON`
    may leave out records at or after it — a replay with that horizon never applies them — and
    still read and check the whole source, so errors, counts and notes stay the full import's.
    ``None`` (the reference path, and always for ``gangsim import``): every record."""
    if kind not in IMPORTERS:
        raise UsageError(f"unknown importer {kind!r}: choose one of {', '.join(IMPORTERS)}")
    if not sources:
        raise UsageError(f"{kind}: give at least one source file or directory")
    module = importlib.import_module(f"gangsim.load.importers.{kind}")
    options, stats = options or ImportOptions(), stats if stats is not None else Stats()
    if until_ms is not None and kind in CUT_AT_HORIZON:
        items = module.read(list(sources), options, stats, until_ms=until_ms)
    else:
        items = module.read(list(sources), options, stats)
    return _guarded(items, kind, sources)


# Importers whose ``read`` takes ``until_ms`` (sorted by arrival, so they can stop at the horizon).
CUT_AT_HORIZON = frozenset({"swf"})


def _guarded(items: Iterator[dict], kind: str, sources: list[str]) -> Iterator[dict]:
    """The last line of defence: a stream or decoding error an importer did not locate itself is
    still an ``InputError`` naming the source (exit 2), never an ``EOFError`` (which click would
    turn into "aborted", exit 130) or a traceback. ``KeyboardInterrupt`` passes through."""
    where = sources[0] if len(sources) == 1 else ", ".join(sources)
    try:
        yield from items
    except EOFError:
        raise InputError(f"{kind} import: unexpected end of input (a truncated file)", file=where) from None
    except (zlib.error, UnicodeError) as exc:
        raise InputError(f"{kind} import: cannot decode the input: {exc}", file=where) from None
    except OSError as exc:
        raise InputError(f"{kind} import: {exc.strerror or exc}", file=getattr(exc, "filename", None) or where) from None
    except RecursionError:
        raise InputError(f"{kind} import: the input is nested too deeply", file=where) from None


def split_source(label: str) -> tuple[str, str] | None:
    """``openb:PATH`` → ("openb", "PATH") when the prefix names an importer, else None."""
    kind, sep, path = label.partition(":")
    if sep and kind in IMPORTERS and path:
        return kind, path
    return None


def write_jsonl(items: Iterable[dict], out: IO[bytes]) -> int:
    """One record a line; returns the number of lines written."""
    n = 0
    dumps = orjson.dumps
    write = out.write
    for item in items:
        write(dumps(item))
        write(b"\n")
        n += 1
    return n


def write_yaml(items: Iterable[dict], out: IO[bytes]) -> int:
    """Multi-document YAML: created objects carry their time as ``gangsim.dev/arrival``; deletes
    (and any other event) are collected into one ``Trace`` document at the end."""
    import yaml

    from gangsim.api.duration import format_duration_ms
    from gangsim.api.duration import parse_duration_ms as _ms

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    def dump(doc: dict) -> None:
        out.write(yaml.dump(doc, Dumper=dumper, sort_keys=False, explicit_start=True).encode())

    later: list[dict] = []
    name = "imported"
    n = 0
    for item in items:
        if item.get("kind") == "Trace":
            name = (item.get("metadata") or {}).get("name") or name
            dump(item)
        elif "create" in item:
            obj = item["create"]
            at = item.get("at", 0)
            if at:
                meta = obj.setdefault("metadata", {})
                meta["annotations"] = {**(meta.get("annotations") or {}), "gangsim.dev/arrival": format_duration_ms(_ms(at))}
            dump(obj)
        else:
            later.append({**item, "at": format_duration_ms(_ms(item.get("at", 0)))})
            continue
        n += 1
    if later:
        dump({"apiVersion": "gangsim.dev/v1alpha1", "kind": "Trace", "metadata": {"name": f"{name}-events"}, "events": later})
        n += 1
    return n
