"""Measure one case against one tree (this one or the ``--baseline`` worktree): a dict of figures,
the same keys for every case (``None`` where a figure does not apply)."""

from __future__ import annotations

import re
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orjson

from benchmarks import inputs, runner
from benchmarks.baseline import Tree
from benchmarks.cases import CliCase, Direct, Generated, Imported

DRIVER = Path(__file__).resolve().parent / "driver.py"
MEASUREMENT_KEYS = (
    "status", "whole_s", "startup_s", "load_s", "replay_s", "report_s", "peak_rss_mib", "cpu_s", "cores_used",
    "sim_day_reached", "pods_per_s", "ms_per_gang", "import_s", "instructions", "note",
)  # fmt: skip
# ``--instructions``: the case under valgrind's cachegrind, which counts the instructions the
# process executes (its "I refs"): within ~50 M of each other on every run of the same code and
# input (benchmarks/README.md), where this shared machine's times scatter ±20 %; the process
# then runs ~30× slower, so its times say nothing
CACHEGRIND = ("--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null")
_I_REFS = re.compile(rb"I\s+refs:\s+([\d,]+)")


@dataclass(frozen=True)
class Context:
    data: Path | None  # the traces-data directory
    cache: Path
    timeout_s: float | None
    repeat: int = 1
    horizon: str | None = None  # replaces each whole-process case's --horizon (shortened runs)
    instructions: bool = False  # count instructions under cachegrind (``CACHEGRIND``) instead of timing


def valgrind() -> str | None:
    """The ``valgrind`` executable ``--instructions`` needs (None: not installed)."""
    return shutil.which("valgrind")


def _blank(**known) -> dict:
    row = dict.fromkeys(MEASUREMENT_KEYS)
    row.update(known)
    return row


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)


def _median_run(rows: list[dict]) -> dict:
    """The run with the median whole-process time (the first failure, if any run failed)."""
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        return bad[0]
    middle = statistics.median_low(r["whole_s"] for r in rows)
    return next(r for r in rows if r["whole_s"] == middle)


def trace_argument(case: CliCase, tree: Tree, ctx: Context) -> tuple[str | None, float | None, str | None]:
    """(the TRACE argument of ``gangsim run``, seconds an import took now, why the case is skipped)."""
    spec = case.trace
    if isinstance(spec, Generated):
        return str(inputs.generated(ctx.cache, spec.name, spec.docs(), **dict(spec.params))), None, None
    if ctx.data is None or not (ctx.data / spec.path).exists():
        return None, None, f"{spec.path} is not in the traces-data directory"
    if isinstance(spec, Direct):
        return f"{spec.kind}:{ctx.data / spec.path}", None, None
    assert isinstance(spec, Imported)
    path, took = inputs.imported(ctx.cache, tree.path, spec.kind, [ctx.data / spec.path], list(spec.options), timeout_s=ctx.timeout_s)
    return str(path), took, None


def measure_cli(case: CliCase, tree: Tree, ctx: Context) -> dict:
    """``case`` against ``tree`` alone: the median of ``ctx.repeat`` runs."""
    return measure_cli_trees(case, [tree], ctx)[tree.label]


def measure_cli_trees(case: CliCase, trees: list[Tree], ctx: Context) -> dict[str, dict]:
    """``case`` against every tree, by label: each tree's median of ``ctx.repeat`` runs.

    The trees take turns, one run each, in the given order on even rounds and reversed on odd
    ones (A B, B A, A B, ...): this shared machine's speed drifts by more than a change is worth
    over minutes (the same code 24.4 s and 17.3 s two minutes apart), and taking turns puts both
    trees under the same drift (a linear drift cancels over each pair of rounds) where running one
    tree's repeats after the other's put all of it between them. A tree whose run fails or times
    out stops there (its row is that run); the others go on."""
    rows: dict[str, list[dict]] = {}
    traces: dict[str, str] = {}
    imports: dict[str, float | None] = {}
    done: dict[str, dict] = {}  # label -> its final row, once known before the rounds end
    for tree in trees:
        try:
            trace, imports[tree.label], skip = trace_argument(case, tree, ctx)
        except RuntimeError as exc:  # the import of its trace failed
            done[tree.label] = _blank(status="failed", note=str(exc)[:500])
            continue
        if skip is not None:
            done[tree.label] = _blank(status="skipped", note=skip)
            continue
        traces[tree.label] = trace  # type: ignore[assignment]
        rows[tree.label] = []
    for turn in range(max(1, ctx.repeat)):
        for tree in trees if turn % 2 == 0 else trees[::-1]:
            if tree.label in done:
                continue
            row = _run_once(case, tree, traces[tree.label], ctx)
            rows[tree.label].append(row)
            if row["status"] != "ok":
                done[tree.label] = row
    measured = {}
    for tree in trees:
        if tree.label in rows:
            measured[tree.label] = row = _median_run(rows[tree.label])
            row["import_s"] = _r(imports[tree.label])
        else:
            measured[tree.label] = done[tree.label]
    return measured


def _run_once(case: CliCase, tree: Tree, trace: str, ctx: Context) -> dict:
    """One run of ``case`` on ``tree``'s gangsim: its figures."""
    with tempfile.TemporaryDirectory(prefix="gangsim-bench-out-") as tmp:
        argv = [sys.executable, str(DRIVER), *case.argv(trace, ctx.horizon, Path(tmp) / "out" if case.out else None)]
        if ctx.instructions:
            argv = [valgrind() or "valgrind", *CACHEGRIND, *argv]
        env = inputs.tree_env(tree.path)
        if ctx.instructions:
            env["PYTHONHASHSEED"] = "0"  # one iteration order of str-keyed sets and dicts
        finished = runner.run(argv, env=env, cwd=tree.path, timeout_s=ctx.timeout_s)
    return _figures(case, finished, ctx)


def _figures(case: CliCase, done: runner.Finished, ctx: Context) -> dict:
    ph = done.phases
    row = _blank(
        status=done.status, whole_s=_r(done.wall_s), startup_s=_r(ph.get("startup_s")), load_s=_r(ph.get("load_s")),
        replay_s=_r(ph.get("replay_s")), report_s=_r(ph.get("report_s")), peak_rss_mib=_r(done.peak_rss_mib, 1),
        cpu_s=_r(done.cpu_s), cores_used=done.cores_used, sim_day_reached=done.sim_day,
    )  # fmt: skip
    if ctx.instructions:
        counted = _I_REFS.findall(done.stderr)
        row["instructions"] = int(counted[-1].replace(b",", b"")) if counted else None
    if done.status == "timeout":
        reached = f" (reached simulated day {done.sim_day})" if done.sim_day is not None else ""
        row["note"] = f"did not finish within {ctx.timeout_s:g} s{reached}"
    elif done.status == "failed":
        row["note"] = f"exit {done.returncode}: " + _last_line(done.stderr)
    elif case.per is not None:
        what, n = case.per
        if what == "pods":
            row["pods_per_s"] = round(n / done.wall_s, 1)
        else:
            row["ms_per_gang"] = round(1000 * done.wall_s / n, 4)
    return row


def _last_line(stderr: bytes) -> str:
    lines = [ln for ln in stderr.decode(errors="replace").splitlines() if ln.strip() and not ln.startswith("gangsim-bench:")]
    return lines[-1][:300] if lines else "(no message)"


def measure_inprocess(key: str, tree: Tree, ctx: Context) -> dict:
    """An in-process case (benchmarks/inprocess.py) as ``tree``'s own ``python -m benchmarks --one
    KEY`` prints it: ``replay_s`` is its timed part (replay + report tables, plus loading for the
    imported ones), ``whole_s`` the whole child; ``detail`` its own row."""
    argv = [sys.executable, "-m", "benchmarks", "--one", key, "--repeat", str(max(1, ctx.repeat))]
    done = runner.run(argv, env=inputs.tree_env(tree.path), cwd=tree.path, timeout_s=ctx.timeout_s)
    row = _blank(status=done.status, whole_s=_r(done.wall_s), peak_rss_mib=_r(done.peak_rss_mib, 1), cpu_s=_r(done.cpu_s), cores_used=done.cores_used)
    if done.status == "timeout":
        row["note"] = f"did not finish within {ctx.timeout_s:g} s"
        return row
    if done.status == "failed" or not done.stdout.strip():
        row["status"] = "failed"
        row["note"] = f"exit {done.returncode}: " + _last_line(done.stderr)
        return row
    detail = orjson.loads(done.stdout.splitlines()[-1])
    row["replay_s"] = detail.get("wall_s", detail.get("baseline_s"))  # an older B6 row has only baseline_s
    row["pods_per_s"] = detail.get("pods_per_s")
    row["detail"] = detail
    return row
