"""Trace files the whole-process cases read, built once and kept in a cache directory.

* generated shapes (benchmarks/shapes.py ``*_docs``): key = shape, parameters and
  :data:`GENERATOR_VERSION` (bump it when a ``*_docs`` function changes its output);
* importer outputs (``gangsim import KIND SRC ... -o``, for a case whose importer options
  ``KIND:PATH`` cannot carry, e.g. Gavel's ``--nodes 10``): key = sha256 of the input files (a
  directory: every file's name and bytes, in name order), of the importer sources of the tree that
  imports (``gangsim/load/importers/*.py``: the baseline's importer writes its own file) and the
  options. Importing is not part of the case's timing; the row notes the import's own time when
  it ran.

A file appears under its final name only when complete (written to ``*.part``, then renamed).
Default directory: ``$GANGSIM_BENCH_CACHE``, else ``$XDG_CACHE_HOME/gangsim-benchmarks``, else
``~/.cache/gangsim-benchmarks``; shared by every worktree (the keys tell the contents apart).
"""

from __future__ import annotations

import compileall
import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import orjson

from benchmarks import runner

GENERATOR_VERSION = 1


def default_cache_dir() -> Path:
    if os.environ.get("GANGSIM_BENCH_CACHE"):
        return Path(os.environ["GANGSIM_BENCH_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gangsim-benchmarks"


def _digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:20]


def files_digest(paths: Iterable[Path]) -> str:
    """sha256 over the names and bytes of ``paths`` (directories: their files, in name order)."""

    def walk():
        for p in paths:
            p = Path(p)
            for f in sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]:
                yield f.name.encode()
                yield f.read_bytes()

    return _digest(walk())


def _publish(path: Path, write: Callable[[Path], None]) -> Path:
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + f".{os.getpid()}.part")
    try:
        write(part)
        part.replace(path)
    finally:
        part.unlink(missing_ok=True)
    return path


def generated(cache: Path, name: str, docs: Callable[..., Iterable[dict]], **params: int) -> Path:
    """The trace file of ``docs(**params)`` (JSON Lines), generated on first use."""
    key = _digest([name.encode(), orjson.dumps(params, option=orjson.OPT_SORT_KEYS), str(GENERATOR_VERSION).encode()])

    def write(part: Path) -> None:
        with part.open("wb") as f:
            for doc in docs(**params):
                f.write(orjson.dumps(doc) + b"\n")

    return _publish(cache / "generated" / f"{name}-{key}.jsonl", write)


def imported(cache: Path, tree: Path, kind: str, sources: list[Path], options: list[str], *, timeout_s: float | None = None) -> tuple[Path, float | None]:
    """(the trace ``gangsim import KIND SOURCES OPTIONS`` writes with ``tree``'s gangsim, seconds
    the import took — ``None`` when it came from the cache)."""
    importer = sorted((tree / "gangsim" / "load" / "importers").glob("*.py"))
    key = _digest([kind.encode(), files_digest(sources).encode(), files_digest(importer).encode(), orjson.dumps(options)])
    path = cache / "imported" / f"{kind}-{key}.jsonl"
    if path.exists():
        return path, None
    took: list[float] = []

    def write(part: Path) -> None:
        argv = [sys.executable, "-m", "gangsim.cli", "import", kind, *map(str, sources), *options, "--quiet", "-o", str(part)]
        done = runner.run(argv, env=tree_env(tree), cwd=tree, timeout_s=timeout_s)
        if done.status != "ok":
            raise RuntimeError(f"gangsim import {kind} with {tree} {done.status}: {done.stderr.decode(errors='replace').strip()[-2000:]}")
        took.append(done.wall_s)

    return _publish(path, write), took[0]


def byte_compile(tree: Path) -> None:
    """Byte-compile ``tree``'s ``gangsim`` into its ``__pycache__`` (as ``pip install`` does for a
    wheel), so a child starts as an installed gangsim does and not by compiling every module: with
    ``PYTHONDONTWRITEBYTECODE=1`` set (as on the benchmark machine) an editable tree is otherwise
    compiled anew by every process, 0.1–0.2 s of each whole-process case. ``py_compile`` writes
    whatever that variable says; up-to-date files are skipped. Same interpreter as the children."""
    compileall.compile_dir(tree / "gangsim", quiet=1, workers=1)


def tree_env(tree: Path) -> dict[str, str]:
    """The environment a child runs in to import ``tree``'s gangsim (and only it)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env.pop("PYTHONSTARTUP", None)
    return env
