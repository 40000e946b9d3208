"""Reports are byte-identical to the ones recorded before the scheduler redesign (issue 11).

Every case replays a trace under a policy (``gang+no-batching``: every speed shortcut off) and
compares the sha256 of each report file with ``reports.json``; see ``cases.py``.
"""

from __future__ import annotations

import json

import pytest

from tests.golden.cases import HERE, SHARED, cases, fingerprint

RECORDED = json.loads((HERE / "reports.json").read_text())


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in cases()])
def test_report_bytes_match_the_recording(case):
    if case.shared and not SHARED.is_dir():
        pytest.skip(f"{SHARED} absent")
    want = RECORDED[case.id]
    got = fingerprint(case)
    differing = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    assert not differing, f"{case.id}: these report files differ from the recording: {differing}"


def test_every_case_is_recorded():
    assert {c.id for c in cases()} == set(RECORDED)
