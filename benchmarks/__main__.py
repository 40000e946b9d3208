"""Run the benchmark suite, print one line per case and write benchmarks/results.json.

    python -m benchmarks                         # the fast cases (see --list)
    python -m benchmarks RICC-gang NASA-pod      # cases by name; groups: fast, issue16, long, all
    python -m benchmarks issue16 --baseline      # every issue 16 row, against main~1 in the same run
    python -m benchmarks HPC2N-pod --baseline 8791b28 --timeout 600
    python -m benchmarks RICC-gang --horizon 1d  # a shortened run (targets then do not apply)
    python -m benchmarks --repeat 3              # the median of 3 runs of each case
    python -m benchmarks fuzz 2000               # not a benchmark: tests/fuzz/longrun.py

Every case runs in a fresh process (benchmarks/runner.py: wall time, peak RSS and CPU time of that
process alone, a timeout). Whole-process cases (benchmarks/cases.py, issue 16's table) run the
``gangsim`` command with phase timers (benchmarks/driver.py); in-process cases
(benchmarks/inprocess.py) time the replay and the report tables inside one interpreter.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import orjson

from benchmarks import baseline, cases, inprocess, inputs, measure
from benchmarks.measure import Context, measure_cli_trees, measure_inprocess

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TIMEOUT_S = 900.0
SCHEMA = 2


def groups() -> dict[str, list[str]]:
    legacy = [c.key for c in inprocess.CASES]
    fast_cli = [c.key for c in cases.CLI_CASES if c.fast]
    long_cli = [c.key for c in cases.CLI_CASES if not c.fast]
    fast = [k for k in legacy if k not in inprocess.ON_REQUEST] + fast_cli
    return {
        "fast": fast,
        "issue16": [c.key for c in cases.CLI_CASES],
        "long": long_cli + sorted(inprocess.ON_REQUEST),
        "all": legacy + fast_cli + long_cli,
        "B7": ["B7a", "B7b"],
    }


def select(names: list[str]) -> list[str]:
    """Case keys in suite order: ``names`` are keys or groups; none: the fast group. B6 brings B1
    (its ratio is B1 over it). Raises ``KeyError`` naming an unknown name."""
    named = groups()
    order = named["all"]
    wanted: set[str] = set()
    for name in names or ["fast"]:
        if name in named:
            wanted.update(named[name])
        elif name in order:
            wanted.add(name)
        else:
            raise KeyError(f"unknown case {name!r}: choose from {', '.join(order)} or a group ({', '.join(named)})")
    if "B6" in wanted:
        wanted.add("B1")
    return [k for k in order if k in wanted]


def machine() -> dict:
    model = next((ln.split(":", 1)[1].strip() for ln in _read("/proc/cpuinfo").splitlines() if ln.startswith("model name")), platform.processor())
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "cpu_model": model,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def _fmt(m: dict | None) -> str:
    if m is None:
        return "-"
    if m["status"] == "skipped":
        return f"skipped: {m['note']}"
    if m["status"] != "ok":
        return f"{m['status']}: {m['note']} (RSS {m['peak_rss_mib']:.0f} MiB)"
    if m.get("instructions") is not None:
        return f"{m['instructions']:,} instructions"
    phase = f" (replay {m['replay_s']:.2f} s)" if m.get("replay_s") is not None else ""
    per = f" = {m['pods_per_s']:,.0f} pods/s" if m.get("pods_per_s") else ""
    per += f" = {m['ms_per_gang']:.3f} ms/gang" if m.get("ms_per_gang") else ""
    imported = f" (import {m['import_s']:.1f} s before, not timed)" if m.get("import_s") is not None else ""
    return f"{m['whole_s']:.2f} s{phase}{per}, {m['peak_rss_mib']:.0f} MiB, {m['cores_used']} cores{imported}"


def speedup(base: dict | None, now: dict, figure: str = "whole_s") -> tuple[float | None, float | None]:
    """(baseline time / now, when both finished; a lower bound when only now finished). ``figure``:
    ``whole_s`` for whole-process cases, ``replay_s`` (their timed part) for in-process ones."""
    if base is None or now["status"] != "ok" or not now[figure]:
        return None, None
    if base["status"] == "ok" and base.get(figure) is not None:
        return round(base[figure] / now[figure], 2), None
    if base["status"] == "timeout":
        return None, round(base["whole_s"] / now[figure], 2)
    return None, None


def run_one(key: str, trees: list[baseline.Tree], ctx: Context) -> dict:
    """One case against every tree (the baseline first, this tree last; a whole-process case's
    repeats take turns between the trees), as a results.json row."""
    cli = cases.BY_KEY.get(key)
    measured = measure_cli_trees(cli, trees, ctx) if cli else {t.label: measure_inprocess(key, t, ctx) for t in trees}
    now, base = measured["now"], measured.get("baseline")
    fast, at_least = speedup(base, now, "instructions" if ctx.instructions else "whole_s" if cli else "replay_s")
    row = {"case": key, "kind": "whole-process" if cli else "in-process", "now": now, "baseline": base, "speedup": fast, "speedup_at_least": at_least}
    if cli:
        shortened = ctx.horizon is not None
        row.update(title=cli.title, policy=cli.policy, command=cli.command(ctx.horizon), today_issue16=cli.today, target=cli.target.text)
        if ctx.instructions:
            row["met"] = "n/a (--instructions: counted under cachegrind, not timed)"
        else:
            row["met"] = f"n/a (shortened: --horizon {ctx.horizon})" if shortened else ("yes" if cli.target.met(now) else "no")
    else:
        case = inprocess.BY_KEY[key]
        row.update(title=case.title, policy=case.policy, command=f"python -m benchmarks {key}", today_issue16=None, target=case.target, met=None)
    return row


def print_row(row: dict, rev: str | None) -> None:
    line = f"{row['case']:12} {row['policy']:6} now {_fmt(row['now'])}"
    if rev is not None:
        line += f" | {rev}: {_fmt(row['baseline'])}"
        counted = row["now"].get("instructions") is not None  # --instructions: the ratio of the counts
        if row["speedup"] is not None:
            line += f" | {row['speedup']:.2f}x {'fewer instructions' if counted else 'faster'}"
        elif row["speedup_at_least"] is not None:
            line += f" | > {row['speedup_at_least']:.2f}x faster"
    line += f" | target {row['target']}" + (f": met {row['met']}" if row["met"] is not None else "")
    print(line, flush=True)


def derived_rows(rows: list[dict]) -> list[dict]:
    """B6 (B1 over the numpy loop) and B7 (B7b over B7a) from the rows measured."""
    by_key = {r["case"]: r["now"] for r in rows if r["now"]["status"] == "ok"}
    out = []
    for key, num, den, title in (("B6/B1", "B1", "B6", "B1 / a bare numpy first-fit loop"), ("B7", "B7b", "B7a", "10,000 vs 1,000 nodes")):
        if num in by_key and den in by_key and by_key[den]["replay_s"]:
            ratio = round(by_key[num]["replay_s"] / by_key[den]["replay_s"], 2)
            out.append({"case": key, "kind": "ratio", "title": title, "ratio": ratio, "target": "<= 3", "met": "yes" if ratio <= 3 else "no"})
            print(f"{key:12} {title}: {ratio:.2f}x  target <= 3", flush=True)
    return out


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description="gangsim benchmarks (benchmarks/README.md)")
    ap.add_argument("cases", nargs="*", help="case keys or groups (fast, issue16, long, all); default: fast")
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the median is reported")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help=f"seconds per case and tree (default {DEFAULT_TIMEOUT_S:g}); 0: none")
    ap.add_argument("--baseline", nargs="?", const=baseline.DEFAULT_REV, metavar="REV", help=f"also run every case against a git worktree of REV (default {baseline.DEFAULT_REV})")
    ap.add_argument("--horizon", help="replace each whole-process case's --horizon (a shortened run, e.g. 1d)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="generated and imported traces (default: $GANGSIM_BENCH_CACHE or ~/.cache/gangsim-benchmarks)")
    ap.add_argument("--data", type=Path, default=None, help="the traces-data directory (default: ../shared/traces-data)")
    ap.add_argument("--json", type=Path, default=Path(__file__).parent / "results.json")
    ap.add_argument("--list", action="store_true", help="list the cases and their commands, run nothing")
    ap.add_argument("--instructions", action="store_true", help="count each whole-process case's instructions under valgrind's cachegrind (the same on every run) instead of timing it")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one in-process case here, print its row as JSON
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["fuzz"]:  # not a benchmark: the long fuzz run of issue 17 (tests/fuzz/)
        from tests.fuzz.longrun import main as fuzz_main

        return fuzz_main(argv[1:])
    args = parse(argv)
    if args.one:
        print(orjson.dumps(inprocess.run_case(inprocess.BY_KEY[args.one], max(1, args.repeat))).decode())
        return 0
    try:
        keys = select(args.cases)
    except KeyError as exc:
        print(f"python -m benchmarks: error: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.list:
        fast = set(groups()["fast"])
        for key in groups()["all"]:
            cli = cases.BY_KEY.get(key)
            print(f"{key:12} {'fast' if key in fast else 'long':4} {cli.command() if cli else inprocess.BY_KEY[key].title}")
        return 0
    if args.instructions:
        if measure.valgrind() is None:
            print("python -m benchmarks: error: --instructions needs valgrind (apt-get install valgrind)", file=sys.stderr)
            return 2
        inproc = [k for k in keys if k not in cases.BY_KEY]
        if inproc:
            print(f"python -m benchmarks: error: --instructions counts whole-process cases only, not {', '.join(inproc)}", file=sys.stderr)
            return 2
    ctx = Context(data=args.data or inprocess.DATA, cache=args.cache_dir or inputs.default_cache_dir(), timeout_s=args.timeout or None, repeat=args.repeat, horizon=args.horizon, instructions=args.instructions)
    here = baseline.current(ROOT)
    if args.baseline:
        try:
            baseline.resolve(ROOT, args.baseline)
        except RuntimeError as exc:
            print(f"python -m benchmarks: error: --baseline {args.baseline}: not a commit of {ROOT} ({exc})", file=sys.stderr)
            return 2
    with baseline.worktree(ROOT, args.baseline) if args.baseline else nullcontext() as base:
        trees = [base, here] if base is not None else [here]
        for tree in trees:
            inputs.byte_compile(tree.path)
        info = machine()
        print(f"gangsim benchmarks on {info['cpu_count']} cores ({info['cpus_usable']} usable, load {info['load_avg_1m']}), {info['cpu_model']}, "
              f"Python {info['python']}; median of {args.repeat}; timeout {args.timeout:g} s per case; one process per case", flush=True)  # fmt: skip
        print(f"now: {here.commit or '?'}{' + uncommitted changes' if here.dirty else ''}" + (f"; baseline {base.rev} = {base.commit}" if base else ""), flush=True)
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        result = {
            "schema": SCHEMA, "started": started, "machine": info, "repeat": args.repeat, "timeout_s": ctx.timeout_s, "horizon": args.horizon,
            "now": {"commit": here.commit, "dirty": here.dirty},
            "baseline": {"rev": base.rev, "commit": base.commit} if base else None,
            "complete": False, "results": [],
        }  # fmt: skip
        rows = result["results"]
        for key in keys:
            row = run_one(key, trees, ctx)
            print_row(row, base.rev if base else None)
            rows.append(row)
            _write(args.json, result)  # after each case: a long run stopped halfway keeps what it measured
        rows += derived_rows(rows)
    result["complete"] = True
    _write(args.json, result)
    return 1 if any(r["kind"] != "ratio" and r["now"]["status"] == "failed" for r in rows) else 0


def _write(path: Path, result: dict) -> None:
    part = path.with_name(path.name + ".part")
    part.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    part.replace(path)


if __name__ == "__main__":
    sys.exit(main())
