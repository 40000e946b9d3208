"""Check that a change which only ADDS report columns keeps every golden case's reports: each
case's fingerprint with the new columns dropped must equal the one recorded at a git revision
(before ``python -m tests.golden.record`` re-records them).

    python -m tests.golden.same_placements REV pods:devices [table:column ...]

Prints one line per case (``same`` / ``DIFFERENT: files``) and exits 1 if any case differs.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.golden.cases import ROOT, SHARED, cases, fingerprint


def main(argv: list[str]) -> int:
    rev, specs = argv[0], argv[1:]
    drop: dict[str, tuple[str, ...]] = {}
    for spec in specs:
        table, _, column = spec.partition(":")
        drop[table] = drop.get(table, ()) + (column,)
    old = json.loads(subprocess.run(["git", "show", f"{rev}:tests/golden/reports.json"], cwd=ROOT, check=True, capture_output=True, text=True).stdout)
    bad = 0
    for case in cases():
        if case.id not in old or (case.shared and not SHARED.is_dir()):
            print(f"{case.id}: not recorded at {rev} / data absent, skipped")
            continue
        new = fingerprint(case, drop=drop)
        diff = sorted(k for k in set(old[case.id]) | set(new) if old[case.id].get(k) != new.get(k))
        print(f"{case.id}: {'same' if not diff else 'DIFFERENT: ' + ', '.join(diff)}", flush=True)
        bad += bool(diff)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
