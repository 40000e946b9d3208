"""Record ``reports.json`` from the code as it is now (see ``cases.py``)."""

from __future__ import annotations

import json
import sys

from tests.golden.cases import HERE, SHARED, cases, fingerprint


def main() -> int:
    out = {}
    for case in cases():
        if case.shared and not SHARED.is_dir():
            print(f"skip {case.id}: {SHARED} absent", file=sys.stderr)
            continue
        out[case.id] = fingerprint(case)
        print(case.id, file=sys.stderr)
    (HERE / "reports.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
