"""``python -m benchmarks fuzz N``: N fuzz cases across the loader and the importers, a summary.

    python -m benchmarks fuzz                 # 10,000 cases (seeds 0..9999, every target)
    python -m benchmarks fuzz 2000 --start 5000
    python -m benchmarks fuzz --replay 3676 --family loader   # one case, its full report

Prints cases, cases per target and exit code, failures by class (with up to three reproducing
seeds each), notes (exit-2 errors that are not one line or name no file; imports that ``run``
then rejects), the slowest case and the longest error line. Exit 1 when any case failed.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

from tests.fuzz.mutate import make_case
from tests.fuzz.runner import TIME_LIMIT_S, Sandbox


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks fuzz")
    ap.add_argument("n", nargs="?", type=int, default=10_000, help="number of cases (default 10,000)")
    ap.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--family", choices=["loader", "importers", "workloads"], help="only loader, importer or workload-kind cases")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT_S, help="seconds before a case is a hang (default 60)")
    ap.add_argument("--replay", type=int, metavar="SEED", help="run one case and print its report and files")
    args = ap.parse_args(argv)
    if args.replay is not None:
        case = make_case(args.replay, args.family)
        print(case.describe())
        print("args:", " ".join(case.args))
        for name, data in case.files.items():
            print(f"file {name}: {len(data):,} bytes")
        with Sandbox(args.time_limit) as box:
            outcome = box.run(args.replay, args.family)
        print(outcome.report() if outcome.failure else f"ok: exit {outcome.exit_code}, {outcome.seconds:.2f}s, last line {outcome.last_line[:300]!r}")
        return 1 if outcome.failure else 0
    started = time.perf_counter()
    by_target: collections.Counter = collections.Counter()
    classes: dict[str, list] = collections.defaultdict(list)
    notes: dict[str, list[int]] = collections.defaultdict(list)
    slowest = longest = None
    with Sandbox(args.time_limit) as box:
        for i, seed in enumerate(range(args.start, args.start + args.n), 1):
            o = box.run(seed, args.family)
            by_target[(o.target, o.exit_code)] += 1
            if o.failure:
                classes[o.signature()].append(o)
            for note in o.notes:
                notes[note].append(seed)
            if slowest is None or o.seconds > slowest.seconds:
                slowest = o
            if longest is None or o.longest_line > longest.longest_line:
                longest = o
            if i % 500 == 0:
                print(f"  {i:,} cases, {sum(map(len, classes.values()))} failures, {time.perf_counter() - started:.0f}s", file=sys.stderr, flush=True)
    failures = sum(map(len, classes.values()))
    print(f"gangsim fuzz: {args.n:,} cases (seeds {args.start}..{args.start + args.n - 1}, family {args.family or 'all'}), {time.perf_counter() - started:.0f}s, time limit {args.time_limit:.0f}s")
    print("cases by target and exit code: " + ", ".join(f"{t} exit {c}: {k}" for (t, c), k in sorted(by_target.items())))
    by_kind = collections.Counter(o.failure.split(":")[0] for v in classes.values() for o in v)
    print(f"failures: {failures}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(by_kind.items())) + ")" if failures else ""))
    for sig, outs in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(outs):4d}  {sig}")
        print(f"        seeds {', '.join(str(o.seed) for o in outs[:3])}; e.g. {outs[0].description.split(' mutations=', 1)[1][:200]}")
    for note, seeds in sorted(notes.items()):
        print(f"note: {note}: {len(seeds)} (seeds {', '.join(map(str, seeds[:3]))})")
    if slowest:
        print(f"slowest case: {slowest.seconds:.2f}s, seed {slowest.seed} ({slowest.target}, exit {slowest.exit_code})")
    if longest:
        print(f"longest error line: {longest.longest_line:,} characters, seed {longest.seed} ({longest.target}, exit {longest.exit_code})")
    return 1 if failures else 0
