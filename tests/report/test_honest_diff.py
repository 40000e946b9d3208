"""Issue 14 item 4: a diff never calls a policy's waits better because it started fewer gangs.

The trace is generated here: one 4-GPU node, a one-pod gang ``quick`` (no GPU, 10 min) and two
gangs ``a`` and ``b`` of two 2-GPU pods (1 h) whose pods arrive interleaved (a-0, b-0, a-1, b-1).
``gang`` starts quick and a at once and b when a ends (1 h). ``pod`` binds a-0 and b-0, the
other halves never fit, both partial gangs time out at the 30 min rendezvous and, being bare pods,
are not recreated: only quick starts. Over started gangs only, pod's p99 wait (0 s) beats gang's
(1 h) — the RICC 3-day effect in miniature. ``pod`` also goes idle at 1 h while ``gang`` runs to 2 h.
"""

from __future__ import annotations

import pytest

from cli_kit import invoke, invoke_json


def _pod(name: str, group: str, duration: str, limits: str) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: ml
  annotations: {{gangsim.dev/duration: {duration}}}
spec:
  schedulingGroup: {{podGroupName: {group}}}
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}{limits}}}}}]
"""


def _group(name: str, min_count: int) -> str:
    return f"""---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: {name}, namespace: ml}}
spec:
  schedulingPolicy: {{gang: {{minCount: {min_count}}}}}
"""


@pytest.fixture(scope="module")
def started_fewer(tmp_path_factory) -> str:
    docs = [
        "apiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: started-fewer}\nevents: []\n",
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n0}\nstatus:\n  allocatable: {cpu: '16', memory: 64Gi, nvidia.com/gpu: '4'}\n",
        _group("quick", 1),
        _pod("quick", "quick", "10m", ""),
        _group("a", 2),
        _group("b", 2),
    ]
    docs += [_pod(f"{g}-{i}", g, "1h", ", limits: {nvidia.com/gpu: '2'}") for i in range(2) for g in "ab"]
    path = tmp_path_factory.mktemp("trace") / "started-fewer.yaml"
    path.write_text("".join(docs))
    return str(path)


def test_fewer_started_gangs_never_make_waits_better(started_fewer):
    doc = invoke_json("diff", started_fewer, "-p", "gang", "-p", "pod")
    gang, pod = ({**s["gangs"], "horizon_s": s["horizon_s"]} for s in doc["summaries"])
    assert (gang["started"], pod["started"]) == (3, 1) and pod["never_started"] == 2
    # the misleading started-only figure is still there (INTERFACE keeps it), but not called better
    assert pod["wait_p99_s"] == 0.0 < gang["wait_p99_s"] == 3600.0
    delta = doc["deltas"][0]
    assert not [k for k in delta["better"] if k.startswith("gangs.wait_")]
    # every gang counts: pod's two never-started gangs waited the whole 2 h window
    assert (gang["wait_censored_p99_s"], pod["wait_censored_p99_s"]) == (3600.0, 7200.0)
    assert {"gangs.wait_censored_p50_s", "gangs.wait_censored_p90_s", "gangs.wait_censored_p99_s", "gangs.started"} <= set(delta["worse"])


def test_every_policy_is_compared_over_the_same_window(started_fewer):
    doc = invoke_json("diff", started_fewer, "-p", "gang", "-p", "pod")
    assert doc["window"] == {"window_s": {"gang": 7200.0, "pod": 7200.0}, "natural_horizon_s": {"gang": 7200.0, "pod": 3600.0}}
    assert [s["horizon_s"] for s in doc["summaries"]] == [7200.0, 7200.0]
    # reading pod's idle run on to 2 h is exactly a replay stopped at 2 h
    pod_at_2h = invoke_json("run", started_fewer, "-p", "pod", "--horizon", "2h")
    assert doc["summaries"][1] == {"label": "pod", **pod_at_2h}
    # single-policy run keeps its natural horizon
    assert invoke_json("run", started_fewer, "-p", "pod")["horizon_s"] == 3600.0


def test_terminal_says_the_window_and_never_started_beside_each_percentile(started_fewer):
    res = invoke("diff", started_fewer, "-p", "gang", "-p", "pod")
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "Window: 0 to 2h for every policy (the longest run; pod stopped at 1h, idle after)." in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip().startswith("wait_")}
    assert rows["wait_p99_s"] == ["wait_p99_s", "(started", "only)", "time", "1h", "0s", "(2", "never)", "-1h"]
    assert rows["wait_censored_p99_s"] == ["wait_censored_p99_s", "time", "1h", "2h", "(2", "never)", "+1h"]


@pytest.mark.parametrize(
    ("expr", "code"),
    [
        ("pod.gangs.wait_censored_p99_s > gang.gangs.wait_censored_p99_s", 1),
        ("pod.gangs.wait_censored_p95_s <= 1h", 0),  # any N in 1..100 from the gangs table: 7200 s
        ("gang.gangs.wait_censored_p95_s == 1h", 1),
    ],
)
def test_fail_if_reads_censored_waits(started_fewer, expr, code):
    res = invoke("diff", started_fewer, "-p", "gang", "-p", "pod", "--fail-if", expr)
    assert res.exit_code == code, (res.stdout, res.stderr)


def _report(waits_s: list[int], late_never: int):
    """Gangs submitted at 0 that started after ``waits_s``, and ``late_never`` gangs submitted
    1 s before the 1000 s horizon that never started (censored at 1 s)."""
    from gangsim.report import build_report

    from .logs import gang, make_log

    log = make_log(horizon_ms=1_000_000)
    log.gangs += [gang(f"ns/g{i}", started_ms=w * 1000) for i, w in enumerate(waits_s)]
    log.gangs += [gang(f"ns/late{i}", submitted_ms=999_000) for i in range(late_never)]
    return build_report(log)


@pytest.mark.parametrize(
    ("other_waits", "other_late_never", "want"),
    [
        # the RICC case: one more gang left unstarted, censored waits shorter (1 s) → not "better"
        ([1, 1, 1], 1, "neutral"),
        # every gang started, shorter waits → better
        ([1, 1, 1, 1], 0, "better"),
    ],
    ids=["more-unstarted", "same-unstarted"],
)
def test_censored_wait_is_better_only_without_more_unstarted_gangs(other_waits, other_late_never, want):
    from gangsim.report.diff import build_diff

    diff = build_diff(["a", "b"], [_report([500, 500, 500, 500], 0), _report(other_waits, other_late_never)])
    shades = {m.key: m.tones[0] for m in diff.metrics}
    assert shades["gangs.wait_censored_p99_s"] == want
    assert shades["gangs.wait_p99_s"] == "neutral"  # started-only: never coloured
