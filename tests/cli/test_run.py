"""`gangsim run` end to end: the README commands, outputs, exit codes, determinism."""

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
from typer.testing import CliRunner

from gangsim.cli import app

ROOT = Path(__file__).resolve().parents[2]
DEADLOCK = str(ROOT / "traces" / "deadlock.yaml")
runner = CliRunner()


def run_json(*args: str) -> dict:
    res = runner.invoke(app, ["run", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_deadlock_under_pod_strands_gpus_and_restarts():
    s = run_json(DEADLOCK, "--policy", "pod")
    assert s["policy"] == "pod"
    assert s["gpu"]["stranded_s"] > 0
    assert s["pods"]["restarts"] >= 1
    assert s["gangs"]["started"] == 2


def test_deadlock_under_gang_runs_one_job_then_the_other():
    s = run_json(DEADLOCK, "--policy", "gang")
    assert s["gpu"]["stranded_s"] == 0
    assert s["gangs"]["completed"] == 2
    assert s["gangs"]["wait_p50_s"] == 63.0  # the 64th pod is created at 63 s
    assert s["gangs"]["wait_max_s"] == 63.0 + 3600.0


def test_deadlock_under_permit_holds_gpus_at_permit():
    s = run_json(DEADLOCK, "--policy", "permit")
    assert s["gangs"]["started"] == 0  # the two gangs keep timing out at the Permit barrier
    assert s["gpu"]["stranded_s"] > 0.9 * s["gpu"]["capacity_s"]


COLUMNS = {
    "gangs": ["gang", "policy", "pods", "min_count", "gpus", "priority", "submitted_s", "started_s", "finished_s", "wait_s", "restarts", "preemptions", "state"],
    "pods": ["pod", "attempt", "gang", "node", "created_s", "bound_s", "ended_s", "end_reason"],
    "victims": ["t_s", "victim_pod", "victim_gang", "victim_priority", "node", "preemptor", "preemptor_priority", "gpus", "lost_gpu_s", "in_vain"],
    "timeline": ["t_s", "gpus_total", "gpus_allocated", "gpus_busy", "gpus_stranded", "pending_pods"],
    "events": ["t_s", "kind", "object", "node", "reason", "message"],
}


def test_out_writes_all_six_outputs_with_the_documented_columns(tmp_path):
    out = tmp_path / "report"
    res = runner.invoke(app, ["run", DEADLOCK, "--policy", "pod", "--out", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted([f"{t}.{ext}" for t in COLUMNS for ext in ("csv", "parquet")] + ["summary.json"])
    for table, cols in COLUMNS.items():
        frame = pl.read_parquet(out / f"{table}.parquet")
        assert frame.columns[: len(cols)] == cols or set(cols) <= set(frame.columns)
        assert pl.read_csv(out / f"{table}.csv").columns == frame.columns
    assert json.loads((out / "summary.json").read_text()) == json.loads(res.stdout)
    pods = pl.read_parquet(out / "pods.parquet")
    assert pods.filter(pl.col("end_reason") == "RendezvousTimeout").height > 0


def test_markdown_and_table_formats(tmp_path):
    md = runner.invoke(app, ["run", DEADLOCK, "--policy", "gang", "--format", "markdown"])
    assert md.exit_code == 0
    assert "| metric | unit | value |" in md.stdout and "| **gpu** |  |  |" in md.stdout
    table = runner.invoke(app, ["run", DEADLOCK, "--policy", "gang"])
    assert table.exit_code == 0
    assert "stranded_s" in table.stdout and "ml/train-a" in table.stdout


def _files_bytes(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if not p.name.startswith(".")}


def test_same_trace_policy_and_seed_give_byte_identical_reports(tmp_path):
    trace = str(ROOT / "traces" / "mixed-day.yaml")
    for name in ("a", "b"):
        res = runner.invoke(app, ["run", trace, "--policy", "permit", "--seed", "3", "--out", str(tmp_path / name), "--format", "json"])
        assert res.exit_code == 0, res.output
    subprocess.run(
        [sys.executable, "-m", "gangsim.cli", "run", trace, "--policy", "permit", "--seed", "3", "--out", str(tmp_path / "c"), "--format", "json"],
        check=True,
        capture_output=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin"},
    )
    a, b, c = (_files_bytes(tmp_path / n) for n in "abc")
    assert a == b == c


def test_horizon_stops_the_replay():
    s = run_json(DEADLOCK, "--policy", "gang", "--horizon", "30m")
    assert s["horizon_s"] == 1800.0
    assert s["gangs"]["completed"] == 0


def test_bad_horizon_is_a_usage_error():
    res = runner.invoke(app, ["run", DEADLOCK, "--horizon", "soon"])
    assert res.exit_code == 2


def test_run_takes_the_policy_spec_grammar_of_diff():
    from cli_kit import BINPACK, invoke, invoke_json

    spec = f"pod:{BINPACK}"
    run = invoke_json("run", DEADLOCK, "-p", spec, "--horizon", "2h")
    diff = invoke_json("diff", DEADLOCK, "-p", "gang", "-p", spec, "--horizon", "2h")
    assert {"label": spec, **run} == diff["summaries"][1]
    # a variant that only switches speed shortcuts off reports the same as the plain policy
    assert invoke_json("run", DEADLOCK, "-p", "GANG+no-batching", "--horizon", "2h") == invoke_json("run", DEADLOCK, "-p", "gang", "--horizon", "2h")
    bad = invoke("run", DEADLOCK, "-p", "gang+nope")
    assert bad.exit_code == 2
    assert bad.stderr == "gangsim: error: --policy 'gang+nope': unknown variant 'nope' (known: partial-success, old-timestamp, tas, cpg, no-batching, no-static-cache, no-signature-cache, no-windowed-search, no-doomed-pass, no-placement-passes, no-repeated-failure, no-failure-streaks, no-row-refresh, no-keep-placements, no-counted-pass, no-gated-siblings, no-pod-runs, no-repeated-attempts, no-static-scores, no-gated-prefix, no-counted-windows, no-run-passes, no-sibling-activation, no-counted-searches, no-pre-enqueue-passed, no-joined-runs, no-streak-peel, no-bulk-retries, no-permit-counts, no-renewed-failures, no-repeated-post-filter, no-doomed-prefix)\n"
