"""S03 as a user would run it: a YAML trace beside this file, replayed through ``gangsim run``.

The trace carries the upstream integration knobs in a KubeSchedulerConfiguration (no backoff;
GangScheduling ``permitTimeoutSeconds: 5``). Expected summary under every policy: the gang (pg1,
submitted when its PodGroup appears at 2 s) first makes progress when the blocker goes at 20 s
— under ``pod`` too, since p3 only fits then — so it waits 18 s; all four pods end bound.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from builders import run
from gangsim.cli import app
from gangsim.load import load_trace

from .kit import bound, condition_events, events

S03_YAML = Path(__file__).with_name("s03_gang_waits_for_podgroup_then_resources.yaml")


@pytest.fixture(scope="module")
def trace():
    return load_trace([str(S03_YAML)])


def test_the_yaml_carries_the_upstream_knobs(trace):
    assert (trace.config.pod_initial_backoff_ms, trace.config.pod_max_backoff_ms, trace.config.permit_timeout_ms) == (0, 0, 5000)
    assert [(e.at_ms, e.op.value, e.ref) for e in trace.events] == [
        (0, "create", "Node node"),
        (0, "create", "Pod default/blocker"),
        (1000, "create", "Pod default/p1"),
        (1000, "create", "Pod default/p2"),
        (1000, "create", "Pod default/p3"),
        (2000, "create", "PodGroup default/pg1"),
        (20_000, "delete", "Pod default/blocker"),
    ]


def test_the_yaml_replays_S03_under_gang(trace):
    log = run(trace, "gang")
    assert bound(log) == {"blocker": (0, "node"), "p1": (20, "node"), "p2": (20, "node"), "p3": (20, "node")}
    assert [c[:3] for c in condition_events(log)] == [(2, "pg1", "Unschedulable"), (20, "pg1", "Scheduled")]
    assert {e[3] for e in events(log, reasons=("Gated",))} == {'waiting for pods\'s pod group "pg1" to appear in scheduling queue'}


SUMMARY = {
    "trace": "s03-gang-waits-for-podgroup-then-resources",
    "horizon_s": 20.0,
    "gangs": {"total": 1, "started": 1, "completed": 0, "never_started": 0, "wait_p50_s": 18.0, "wait_p90_s": 18.0, "wait_p99_s": 18.0, "wait_max_s": 18.0,
              # the one gang started: its wait counted with every gang is the same 18 s
              "wait_censored_p50_s": 18.0, "wait_censored_p90_s": 18.0, "wait_censored_p99_s": 18.0},
    "preemption": {"victims": 0, "victims_in_vain": 0, "lost_gpu_s": 0.0},
    "pods": {"total": 4, "bound": 4, "pending_at_end": 0, "restarts": 0},
}


def invoke(policy: str) -> dict:
    result = CliRunner().invoke(app, ["run", str(S03_YAML), "--policy", policy, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "policy",
    [
        "gang",
        "pod",
        pytest.param(
            "permit",
        ),
    ],
)
def test_cli_summary(policy):
    summary = invoke(policy)
    assert summary["policy"] == policy
    got = {k: summary[k] for k in ("trace", "horizon_s")}
    got["gangs"] = summary["gangs"]
    got["preemption"] = {k: summary["preemption"][k] for k in SUMMARY["preemption"]}
    got["pods"] = summary["pods"]
    assert got == SUMMARY


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
def test_cli_summary_outcomes(policy):
    """The outcome keys alone (horizon aside): every policy ends with the gang started after 18 s."""
    summary = invoke(policy)
    assert summary["gangs"] == SUMMARY["gangs"]
    assert summary["pods"] == SUMMARY["pods"]
    assert summary["preemption"]["victims"] == 0


def test_cli_default_policy_is_gang():
    result = CliRunner().invoke(app, ["run", str(S03_YAML), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["policy"] == "gang"
