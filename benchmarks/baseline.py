"""``--baseline REV``: a temporary git worktree of REV, so the same run measures both trees.

The worktree is detached at REV's commit inside a temporary directory and removed (with
``git worktree prune``) when the run ends, also after an error or Ctrl-C. The children of the
baseline side get ``PYTHONPATH`` = that worktree and run with it as their directory, so they
import its ``gangsim`` (and, for the in-process cases, its ``benchmarks``), never this tree's.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

DEFAULT_REV = "main~1"


@dataclass(frozen=True)
class Tree:
    """A source tree the cases run against: ``label`` in tables, ``rev`` as given, its commit."""

    label: str
    path: Path
    rev: str
    commit: str | None
    dirty: bool = False


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {repo}: {done.stderr.strip()}")
    return done.stdout.strip()


def current(repo: Path) -> Tree:
    """The tree the harness itself belongs to (uncommitted changes included: ``dirty``)."""
    try:
        commit = _git(repo, "rev-parse", "HEAD")
        dirty = bool(_git(repo, "status", "--porcelain", "--untracked-files=no"))
    except (RuntimeError, FileNotFoundError):
        commit, dirty = None, False
    return Tree("now", repo, "working tree", commit, dirty)


def resolve(repo: Path, rev: str) -> str:
    """The commit ``rev`` names in ``repo`` (``RuntimeError`` with git's message if none)."""
    return _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")


@contextmanager
def worktree(repo: Path, rev: str) -> Iterator[Tree]:
    """A detached worktree of ``rev`` (any commit-ish of ``repo``) for the duration of the block."""
    commit = resolve(repo, rev)
    parent = Path(tempfile.mkdtemp(prefix="gangsim-baseline-"))
    path = parent / commit[:12]
    _git(repo, "worktree", "add", "--detach", str(path), commit)
    try:
        yield Tree("baseline", path, rev, commit)
    finally:
        try:
            _git(repo, "worktree", "remove", "--force", str(path))
        finally:
            shutil.rmtree(parent, ignore_errors=True)
            _git(repo, "worktree", "prune")
