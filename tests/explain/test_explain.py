"""``gangsim explain`` (issue 13): outcomes on bundled traces, the JSON schema the README documents,
the recorder seeing only real attempts, and the one-line usage errors."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cli_kit import ROOT, invoke, invoke_json
from gangsim.explain import SCHEMA_VERSION
from gangsim.explain.record import AttemptRecorder
from gangsim.load import load_trace
from gangsim.sim.replay import replay

STUCK = str(ROOT / "traces" / "stuck-gang.yaml")
VICTIMS = str(ROOT / "traces" / "victims-in-vain.yaml")

# the README's schema: top-level keys and the keys of each nested object
SCHEMA = {
    "": {"schema", "trace", "policy", "target", "spec", "checks", "history", "attempt", "verdict", "waiting_reason"},
    "target": {"kind", "name", "gang"},
    "spec": {"kind", "min_count", "podgroup_policy", "disruption_mode", "priority", "priority_class", "scheduler_name", "workload", "requests", "pods"},
    "check": {"check", "ok", "detail"},
    "history": {"arrival_s", "started_s", "finished_s", "state", "attempts", "events", "victims_triggered", "victims_suffered"},
    "attempt_summary": {"cycle", "t_s", "evaluated", "placed", "unplaced", "first_fit_error", "group_status"},
    "event": {"t_s", "object", "reason", "node", "message"},
    "victim": {"t_s", "victim", "victim_gang", "priority", "node", "preemptor", "in_vain", "lost_gpu_s"},
    "attempt_failed": {"t_s", "cycle", "num_nodes", "placed", "failed_pod", "fit_error", "filter", "closest_nodes", "scores"},
}


def test_stuck_gang_names_the_shortfall_in_resources_and_nodes():
    doc = invoke_json("explain", STUCK, "--gang", "llm/pretrain")
    assert doc["verdict"] == (
        "Never started: needs 4 pod(s) of 8 nvidia.com/gpu, 8 cpu, 64Gi memory; even with the cluster empty at most 3 fit "
        "(3 nodes hold up to 1 each, bounded by nvidia.com/gpu); 4 needed: it can never start."
    )
    assert doc["waiting_reason"] == "can never fit: 3 of 4 pods fit the empty cluster"
    att = doc["attempt"]
    assert att["num_nodes"] == 3 and [p["node"] for p in att["placed"]] == ["gpu-0", "gpu-1", "gpu-2"]
    assert att["failed_pod"] == "llm/pretrain-3"
    assert att["fit_error"] == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    assert att["filter"]["histogram"] == {"Insufficient nvidia.com/gpu": 3}
    assert att["filter"]["rejected_by_plugin"]["NodeResourcesFit"] == 3
    assert att["filter"]["rejected_by_plugin"]["TaintToleration"] == 0
    # the closest nodes and what each lacked (the three tentatively placed pods hold the GPUs)
    assert [(m["node"], m["lacking"]) for m in att["closest_nodes"]] == [
        (f"gpu-{i}", {"nvidia.com/gpu": {"requested": 8, "free": 0}}) for i in range(3)
    ]
    assert all(c["ok"] for c in doc["checks"])
    # every attempt: 4 pods evaluated, 3 placed, 1 not
    assert {(a["evaluated"], a["placed"], a["unplaced"]) for a in doc["history"]["attempts"]} == {(4, 3, 1)}
    # the group's status after each attempt: PlacementFeasible's verdict, preemption's appended
    assert {a["group_status"] for a in doc["history"]["attempts"]} == {
        "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"
    }


def test_victims_in_vain_under_permit_lists_them():
    doc = invoke_json("explain", VICTIMS, "--gang", "ml/llm-pretrain", "--policy", "permit")
    victims = doc["history"]["victims_triggered"]
    assert sorted(v["victim"] for v in victims) == sorted(f"research/batch-{i}" for i in range(15))
    assert all(v["in_vain"] for v in victims)
    assert "It preempted 15 pod(s)" in doc["verdict"] and "15 of them died in vain" in doc["verdict"]
    assert doc["history"]["state"] == "Completed" and doc["history"]["started_s"] == 7200.0


def test_json_schema_is_the_documented_one():
    doc = invoke_json("explain", STUCK, "--gang", "llm/pretrain")
    assert doc["schema"] == SCHEMA_VERSION == 1
    assert set(doc) == SCHEMA[""]
    assert set(doc["target"]) == SCHEMA["target"] and set(doc["spec"]) == SCHEMA["spec"]
    assert all(set(c) == SCHEMA["check"] for c in doc["checks"])
    assert set(doc["history"]) == SCHEMA["history"]
    assert all(set(a) == SCHEMA["attempt_summary"] for a in doc["history"]["attempts"])
    assert all(set(e) == SCHEMA["event"] for e in doc["history"]["events"])
    assert set(doc["attempt"]) == SCHEMA["attempt_failed"]
    vdoc = invoke_json("explain", VICTIMS, "--gang", "ml/llm-pretrain", "--policy", "permit")
    assert all(set(v) == SCHEMA["victim"] for v in vdoc["history"]["victims_triggered"])


def test_at_picks_the_attempt_at_or_before():
    first = invoke_json("explain", STUCK, "--gang", "llm/pretrain", "--at", "1s")
    assert first["attempt"]["t_s"] == 0.0 and first["attempt"]["cycle"] == 1


def test_recording_changes_nothing_and_sees_only_real_attempts():
    """The recording replay is the plain one (same event log), and the recorder sees each real
    PodGroup cycle once: workload-aware preemption's dry runs (victims-in-vain under gang) are not
    attempts."""
    trace = load_trace([VICTIMS])
    plain = replay(trace, "gang")
    gang = next(g for g in plain.gangs if g.gang == "ml/llm-pretrain")
    rec = AttemptRecorder({p.pod for p in plain.pods if p.gang == gang.gang})
    config = replace(trace.config, fast_path=replace(trace.config.fast_path, doomed_pass=False))
    recorded = replay(trace, "gang", config=config, recorder=rec)
    facts = lambda log: (list(log.ev_t_ms), log.ev_object, log.ev_reason, log.ev_message, log.victims)  # noqa: E731
    assert facts(recorded) == facts(plain)
    assert plain.counters["podgroup_preemption_attempts"] > 0
    assert len({a.cycle for a in rec.attempts}) == gang.schedule_attempts > 0


def test_pod_target_and_markdown():
    res = invoke("explain", STUCK, "--pod", "llm/pretrain-3", "--format", "markdown")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("# gangsim explain: pod llm/pretrain-3 (stuck-gang, policy gang)")
    assert "| NodeResourcesFit | 3 |" in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--gang", "llm/nope"), "--gang llm/nope: no such gang in this replay (gangs: llm/pretrain)"),
        ((), "give exactly one of --gang NS/NAME and --pod NS/NAME"),
        (("--gang", "a/b", "--pod", "a/c"), "give exactly one of --gang NS/NAME and --pod NS/NAME"),
        (("--pod", "nons"), "--pod nons: want NS/NAME"),
    ],
)
def test_usage_errors_are_one_line(args, message):
    res = invoke("explain", STUCK, *args)
    assert res.exit_code == 2
    assert res.stderr == f"gangsim: error: {message}\n"
