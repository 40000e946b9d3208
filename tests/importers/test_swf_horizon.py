"""``gangsim run swf:LOG --horizon H`` imports only what arrives before H (issue 16: RICC's first 3
days no longer load 160 days): the same report bytes as the whole import replayed with the same
horizon, the same stderr notes and counts, and the same one-line errors for a broken line anywhere
in the log."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim import pipeline
from gangsim.load.importers import ImportOptions, Stats, records
from gangsim.report import render_json, write_report
from tests.importers.conftest import dataset, invoke
from tests.importers.test_swf import HPC2N, SWF_HEADER, _line


def _records(path: str, until_ms: int | None, **options) -> tuple[list[dict], Stats]:
    stats = Stats()
    return list(records("swf", [path], ImportOptions(**options), stats, until_ms=until_ms)), stats


def _congested_log(tmp_path, seed: int, jobs: int = 60) -> str:
    """Jobs of 1–32 processors on 32 (4 nodes of 8), arriving faster than they finish."""
    rng = random.Random(seed)
    lines, at = [], 0
    for n in range(1, jobs + 1):
        at += rng.choice((0, 0, 5, 30, 120))
        lines.append(_line(n, at, rng.randint(0, 50), rng.choice((0, 60, 600, 3600)), rng.randint(1, 32)))
    path = tmp_path / f"congested-{seed}.swf"
    path.write_text(SWF_HEADER + "".join(lines))
    return str(path)


def _report_bytes(label: str, policy: str, horizon_ms: int, cut: bool, out_dir) -> tuple[bytes, dict[str, bytes]]:
    trace = pipeline.load([label], horizon_ms=horizon_ms if cut else None)
    report = pipeline.run_policy(trace, policy, seed=7, horizon_ms=horizon_ms)
    write_report(report, out_dir)
    return render_json(report), {p.name: p.read_bytes() for p in sorted(out_dir.iterdir()) if p.is_file()}


def _same_reports(tmp_path, label: str, policy: str, horizon_ms: int) -> None:
    cut = _report_bytes(label, policy, horizon_ms, True, tmp_path / "cut")
    full = _report_bytes(label, policy, horizon_ms, False, tmp_path / "full")
    assert cut[0] == full[0]
    assert cut[1] == full[1]


def test_records_before_the_horizon_are_the_whole_imports_and_counts_and_notes_are_the_same(tmp_path):
    path = _congested_log(tmp_path, 1)
    full, full_stats = _records(path, None)
    for until_ms in (0, 1, 30_000, 125_000, 10**9):
        cut, stats = _records(path, until_ms)
        assert cut == full[: len(cut)]  # a prefix of the whole import...
        assert all(r["at"] * 1000 >= until_ms for r in full[len(cut) :])  # ...holding everything before the horizon
        assert any("create" in r and r["create"]["kind"] == "Job" for r in cut)  # the cut waits for a job with a run time
        assert stats.counts == full_stats.counts and stats.notes == full_stats.notes
    assert len(_records(path, 30_000)[0]) < len(full)


def test_the_cut_waits_for_a_job_with_a_duration_and_keeps_deletes_before_the_horizon(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(
        SWF_HEADER
        + _line(1, 0, 20, 0, 8, status=5)  # cancelled before it started: created at 0, deleted at 20, no duration
        + _line(2, 10, 0, 50, 4)
        + _line(3, 100, 0, 50, 4)
    )
    full, _ = _records(str(path), None, cancelled="delete")
    cut, _ = _records(str(path), 5_000, cancelled="delete")  # job 2 (the first with a run time) is still written
    assert cut == full[: len(cut)] and cut[-1]["create"]["metadata"]["name"] == "j2"  # beyond 5 s: j1's delete (20 s), j3
    cut, _ = _records(str(path), 30_000, cancelled="delete")
    assert cut == [r for r in full if r.get("at", 0) < 30] and {"at": 20, "delete": {"kind": "Job", "namespace": "swf", "name": "j1"}} in cut


@pytest.mark.parametrize("policy", ["gang", "pod", "permit"])
@pytest.mark.parametrize("horizon_s", [1, 65, 300, 3_601])
def test_report_bytes_equal_the_whole_import_replayed_with_the_horizon(tmp_path, policy, horizon_s):
    _same_reports(tmp_path, f"swf:{_congested_log(tmp_path, horizon_s)}", policy, horizon_s * 1000)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), horizon_s=st.integers(0, 2_000))
def test_report_bytes_equal_the_whole_import_property(tmp_path_factory, seed, horizon_s):
    tmp_path = tmp_path_factory.mktemp("cut")
    _same_reports(tmp_path, f"swf:{_congested_log(tmp_path, seed, jobs=25)}", "gang", horizon_s * 1000)


@pytest.mark.parametrize("policy", ["pod", "gang"])
def test_hpc2n_first_ten_days_report_bytes_equal_the_whole_import(tmp_path, policy):
    _same_reports(tmp_path, f"swf:{dataset(*HPC2N)}", policy, 10 * 86_400_000)


def test_cli_run_with_horizon_prints_the_whole_imports_notes(tmp_path):
    path = _congested_log(tmp_path, 3)
    cut = invoke("run", f"swf:{path}", "--horizon", "2m", "--format", "json")
    whole = invoke("run", f"swf:{path}", "--format", "json")
    assert cut.exit_code == 0 and whole.exit_code == 0
    assert "offered load" in cut.stderr and cut.stderr == whole.stderr


def test_a_broken_line_beyond_the_horizon_is_still_one_line_and_exit_2(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(1, 0, 0, 10, 4) + _line(2, 9_000, 0, -7, 4))
    res = invoke("run", f"swf:{path}", "--horizon", "1m")
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1
    assert 'tiny.swf:6: job 2: field 4 (run time): Invalid value: "-7": must not be negative' in res.stderr


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("-0.5", 'field 9 (requested time): Invalid value: "-0.5": must not be negative (or -1 for unknown)'),
        ("-1e-3", 'field 9 (requested time): Invalid value: "-1e-3": must not be negative (or -1 for unknown)'),
        ("nan", 'field 9 (requested time): Invalid value: "nan": must be a finite number'),
        ("inf", 'field 9 (requested time): Invalid value: "inf": must be a finite number'),
        ("-inf", 'field 9 (requested time): Invalid value: "-inf": must'),
        ("-1.0", None),  # unknown, spelled as a float
        ("1e-3", None),  # a "-" that is no negative value
    ],
)
def test_field_checks_of_the_parse_fast_path(tmp_path, field, message):
    """The parse checks a line's signs from its text ("-" only in "-1" fields) and decides every
    doubt with the exact per-field check: the same errors as before."""
    path = tmp_path / "tiny.swf"
    path.write_text(SWF_HEADER + _line(1, 0, 0, 10, 4).replace(" 3600 ", f" {field} "))
    res = invoke("import", "swf", str(path), "-o", str(tmp_path / "out.jsonl"))
    if message is None:
        assert res.exit_code == 0, res.output
    else:
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and f"tiny.swf:5: job 1: {message}" in res.stderr, res.stderr
