"""`gangsim diff` end to end on the bundled deadlock trace: exit codes, JSON, Markdown, table."""

import json

import pytest

from cli_kit import BINPACK, DEADLOCK, invoke, invoke_json
from gangsim.report.diff import metric_keys

# Until 1h15m the pod policy has started one job (after its first 30-min rendezvous timeout), gang
# both (the second at 1h1m3s). Without a horizon both policies start both jobs in the end.
EARLY = ("--horizon", "75m")


def test_fail_if_holds_exits_1_and_names_the_condition():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod", *EARLY, "--fail-if", "pod.gangs.started < gang.gangs.started")
    assert res.exit_code == 1, res.stderr
    assert res.stderr == "gangsim: --fail-if held: pod.gangs.started < gang.gangs.started (1 < 2)\n"
    assert "--fail-if held: pod.gangs.started < gang.gangs.started (1 < 2)" in res.stdout


def test_negated_fail_if_exits_0():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod", *EARLY, "--fail-if", "pod.gangs.started >= gang.gangs.started")
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""
    assert "--fail-if ok: pod.gangs.started >= gang.gangs.started (1 >= 2)" in res.stdout


def test_exit_code_follows_the_values_without_a_horizon():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod", "--format", "json", "--fail-if", "pod.gangs.started < gang.gangs.started")
    doc = json.loads(res.stdout)
    started = {s["label"]: s["gangs"]["started"] for s in doc["summaries"]}
    held = started["pod"] < started["gang"]
    assert res.exit_code == (1 if held else 0)
    assert doc["fail_if"] == [{"expr": "pod.gangs.started < gang.gangs.started", "held": held, "left": started["pod"],
                               "right": started["gang"], "undefined": False}]


def test_several_fail_ifs_all_evaluated_each_one_that_held_named():
    res = invoke(
        "diff", DEADLOCK, "-p", "gang", "-p", "permit",
        "--fail-if", "permit.gangs.started < gang.gangs.started",
        "--fail-if", "gang.gpu.stranded_s > 0",
        "--fail-if", "permit.gpu.stranded_s > gang.gpu.stranded_s",
    )  # fmt: skip
    assert res.exit_code == 1
    assert res.stderr.splitlines() == [
        "gangsim: --fail-if held: permit.gangs.started < gang.gangs.started (0 < 2)",
        "gangsim: --fail-if held: permit.gpu.stranded_s > gang.gpu.stranded_s (2153700 > 0)",
    ]


def test_json_has_one_summary_per_policy_plus_deltas():
    doc = invoke_json("diff", DEADLOCK, "-p", "gang", "-p", "pod", "-p", "permit")
    assert list(doc) == ["trace", "baseline", "labels", "summaries", "deltas", "gangs", "fail_if", "window"]
    assert doc["labels"] == ["gang", "pod", "permit"] and doc["baseline"] == "gang"
    assert [s["label"] for s in doc["summaries"]] == ["gang", "pod", "permit"]
    assert [s["policy"] for s in doc["summaries"]] == ["gang", "pod", "permit"]
    for s in doc["summaries"]:
        assert {"trace", "policy", "horizon_s", "gpu", "gangs", "preemption", "pods"} <= set(s)
    assert [d["label"] for d in doc["deltas"]] == ["pod", "permit"]
    by_label = {s["label"]: s for s in doc["summaries"]}
    pod = doc["deltas"][0]
    assert pod["delta"]["gpu"]["stranded_s"] == by_label["pod"]["gpu"]["stranded_s"] - by_label["gang"]["gpu"]["stranded_s"] > 0
    assert "gpu.stranded_s" in pod["worse"] and "gangs.wait_censored_p50_s" in pod["worse"]
    # ambiguous metrics are never coloured (README "Which way is better")
    for neutral in ("gpu.free_while_pending_s", "gangs.wait_p50_s", "pods.bound", "gpu.utilization"):
        assert neutral not in pod["better"] + pod["worse"]
    # permit starts no gang: its wait percentiles are undefined, not "shorter"
    permit = doc["deltas"][1]
    assert permit["delta"]["gangs"]["wait_p99_s"] is None
    assert "gangs.wait_p99_s" not in permit["better"] and "gangs.started" in permit["worse"]
    gangs = {g["gang"]: g for g in doc["gangs"]}
    assert set(gangs) == {"ml/train-a", "ml/train-b"}
    assert gangs["ml/train-a"]["wait_s"] == {"gang": 63.0, "pod": 1800.0, "permit": None}
    assert gangs["ml/train-a"]["delta_s"] == {"pod": 1737.0, "permit": None}
    # the waiting reason per label: empty where the gang started, the gang's reason where not
    reasons = gangs["ml/train-a"]["waiting_reason"]
    assert reasons["gang"] == reasons["pod"] == "" and reasons["permit"] != ""


def test_json_is_byte_identical_across_runs_and_backends():
    args = ("diff", DEADLOCK, "-p", "gang", "-p", "pod", "--format", "json")
    first = invoke(*args)
    second = invoke(*args)
    pooled = invoke(*args, "--jobs", "2")
    assert first.exit_code == second.exit_code == pooled.exit_code == 0
    assert first.stdout_bytes == second.stdout_bytes == pooled.stdout_bytes


def test_markdown_renders_tables_and_verdicts():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod", "--format", "markdown", "--fail-if", "pod.pods.restarts > 0")
    assert res.exit_code == 1
    md = res.stdout
    assert md.startswith("## gangsim diff: partial-gang-deadlock\n")
    assert "| metric | unit | gang | pod | Δ pod |\n|---|---|---:|---:|---:|\n" in md
    assert "| **gpu** |  |  |  |  |" in md  # keys grouped under section rows
    assert "|   stranded_s | GPU-h | 0 | 85.32 | 🔴 +85.32 |" in md  # one unit per row
    assert "|   free_while_pending_s | GPU-h | 37.75 | 0 | -37.75 |" in md  # neutral: not marked
    assert "|   started |  | 2 | 2 | = |" in md
    assert "- ❌ **held**: `pod.pods.restarts > 0 (172 > 0)`" in md
    assert "| gang | wait gang | wait pod | Δ pod |" in md
    assert "Window: 0 to 6h for every policy." in md
    leaves = {k.rpartition(".")[2] for k in metric_keys()}
    rows = [line for line in md.splitlines() if line.startswith("| ") and line.split("|")[1].strip().split(" ")[0] in leaves]
    assert len(rows) == len(metric_keys())


def test_table_is_side_by_side_with_gang_changes():
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod")
    assert res.exit_code == 0
    out = res.stdout
    assert "Summary: partial-gang-deadlock (deltas against gang)" in out
    assert "Gangs whose wait changed most" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("stranded_s"))
    assert line.split() == ["stranded_s", "GPU-h", "0", "85.32", "+85.32"]


def test_policy_specs_with_variants_and_configs_are_labels():
    label = f"pod:{BINPACK}"
    doc = invoke_json(
        "diff", DEADLOCK, "-p", "gang", "-p", "gang+partial-success", "-p", label,
        "--fail-if", "gang+partial-success.gangs.wait_p99_s > gang.gangs.wait_p99_s",
        "--fail-if", f"{label}.gpu.stranded_s < 0",
    )  # fmt: skip
    assert doc["labels"] == ["gang", "gang+partial-success", label]
    assert [s["policy"] for s in doc["summaries"]] == ["gang", "gang", "pod"]
    assert [v["held"] for v in doc["fail_if"]] == [False, False]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(["-p", "gang", "-p", "pod", "--fail-if", "pod.gangs.startd > 1"], """--fail-if 'pod.gangs.startd > 1': unknown key "gangs.startd\"""", id="bad-key"),
        pytest.param(["-p", "gang", "-p", "pod", "--fail-if", "gnag.gangs.started > 1"], 'unknown policy label "gnag" (known: gang, pod)', id="bad-label"),
        pytest.param(["-p", "gang", "-p", "pod", "--fail-if", "pod.gangs.started => 1"], 'bad operator "=>"', id="bad-operator"),
        pytest.param(["-p", "gang", "-p", "pod", "--fail-if", "pod.gangs.started > 1 and"], 'unexpected token "and"', id="extra-token"),
        pytest.param(["-p", "gang", "-p", "gang"], "--policy 'gang' given twice", id="duplicate-label"),
        pytest.param(["-p", "gang"], "at least two policies", id="one-policy"),
        pytest.param(["-p", "gang", "-p", "pods"], "unknown policy 'pods'", id="bad-policy"),
        pytest.param(["-p", "gang", "-p", "gang+partial"], "unknown variant 'partial'", id="bad-variant"),
        pytest.param(["-p", "gang", "-p", "pod:missing.yaml"], "missing.yaml", id="missing-config"),
        pytest.param(["-p", "gang", "-p", "pod", "--plot"], "--plot writes PNG files and report.html into --out DIR", id="plot-without-out"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needle, tmp_path):
    res = invoke("diff", DEADLOCK, *args, "--out", str(tmp_path / "o")) if "--plot" not in args else invoke("diff", DEADLOCK, *args)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert res.stderr.startswith("gangsim: error: ") and res.stderr.count("\n") == 1
    assert needle in res.stderr
    assert res.stdout == ""
    assert not (tmp_path / "o").exists()


def test_out_writes_json_and_markdown(tmp_path):
    out = tmp_path / "diff"
    res = invoke("diff", DEADLOCK, "-p", "gang", "-p", "pod", "--out", str(out), "--format", "json")
    assert res.exit_code == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["diff.json", "diff.md"]
    assert (out / "diff.json").read_bytes() == res.stdout_bytes
    assert (out / "diff.md").read_text().startswith("## gangsim diff:")
