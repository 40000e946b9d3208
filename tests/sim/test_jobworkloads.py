"""KEP-5547: the Workload and PodGroup the Job controller creates for a Job under gang/permit
(names, minCount = parallelism, creation order), the switches, and all-or-nothing for such gangs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_invariants import check_all_or_nothing

from gangsim.api.objects import PolicyKind
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec, generate, write_jsonl
from gangsim.report import build_report
from gangsim.api.naming import fnv32a, pod_group_name, safe_encode, template_name, workload_name
from gangsim.sim.jobworkloads import job_workload_events
from gangsim.sim.replay import replay

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "64", nvidia.com/gpu: "8"}}
"""


def job(name: str, p: int, c: int | None, mode: str = "Indexed", extra: str = "", template: str = "") -> str:
    comp = f"\n  completions: {c}" if c is not None else ""
    return f"""---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml, annotations: {{gangsim.dev/duration: 1h}}}}
spec:
  parallelism: {p}{comp}
  completionMode: {mode}{extra}
  template:
    spec:{template}
      containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: 2}}}}}}]
"""


@pytest.fixture
def trace_of(tmp_path):
    def _load(text: str):
        path = tmp_path / "t.yaml"
        path.write_text(text)
        return load_trace([path])

    return _load


def test_fnv_and_safe_encoding_match_go():
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C  # hash/fnv New32a test vectors
    assert safe_encode("0123456789") == "456789bcdf"  # rand.SafeEncodeString: alphanums[rune % 27]


def test_names_follow_the_job_controller():
    assert template_name(_job("train")) == "train-pgt-0"
    wl = workload_name(_job("train"))
    assert wl == "train-" + safe_encode(str(fnv32a(b"ml/train")))
    assert pod_group_name(wl, "train-pgt-0") == f"{wl}-train-pgt-0-" + safe_encode(str(fnv32a(wl.encode() + b"train-pgt-0")))
    long = pod_group_name("w" * 200, "t" * 200)
    assert len(long) == 253 and long.startswith("w" * 121 + "-" + "t" * 120 + "-")


def _job(name):
    from dataclasses import replace

    from builders import make_job

    return replace(make_job(name, 2, namespace="ml"))


@pytest.mark.parametrize(
    ("p", "c", "mode", "managed"),
    [
        (4, 4, "Indexed", True),
        (4, 4, "NonIndexed", False),  # shouldManageWorkloadForJob: Indexed only
        (4, 8, "Indexed", False),  # completions == parallelism only
        (1, 1, "Indexed", False),  # parallelism > 1 only
    ],
)
def test_which_jobs_get_a_workload(trace_of, p, c, mode, managed):
    trace = trace_of(NODE + job("j", p, c, mode))
    events = job_workload_events(trace.events)
    kinds = [(ev.op.value, ev.kind) for ev in events if ev.kind != "Node"]
    if managed:
        assert kinds == [("create", "Workload"), ("create", "PodGroup"), ("create", "Job")]  # KEP-5547 "Object Creation Order"
        wl, pg, jb = (ev.obj for ev in events if ev.kind != "Node")
        assert (pg.policy.kind, pg.policy.min_count, pg.workload_ref) == (PolicyKind.GANG, p, (wl.name, "j-pgt-0"))
        assert wl.controller_ref == ("batch", "Job", "j") and [t.name for t in wl.templates] == ["j-pgt-0"]
        assert jb.template.scheduling_group == pg.name
    else:
        assert kinds == [("create", "Job")]


def test_pods_that_name_a_podgroup_get_none(trace_of):
    pg = "---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: own, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 4}}}\n"
    trace = trace_of(NODE + pg + job("j", 4, 4, template="\n      schedulingGroup: {podGroupName: own}"))
    assert [ev.kind for ev in job_workload_events(trace.events)] == ["Node", "PodGroup", "Job"]


def test_spec_scheduling_asks_for_it_explicitly(trace_of):
    sched = "\n  scheduling: {schedulingPolicy: {gang: {}}, disruptionMode: {all: {}}}"
    trace = trace_of(NODE + job("j", 3, 6, "NonIndexed", extra=sched))
    (pg,) = [ev.obj for ev in job_workload_events(trace.events, infer=False) if ev.kind == "PodGroup"]
    assert (pg.policy.min_count, pg.policy.disruption_mode.value) == (3, "all")  # minCount defaults to parallelism
    # a PodGroup gang is one distributed job: its completions are not run in waves
    (jb,) = [ev.obj for ev in trace.events if ev.kind == "Job"]
    assert (jb.completions, jb.waves) == (None, False)
    assert trace.warnings == [
        "Job ml/j: spec.completions (6) differs from spec.parallelism (3) while its pods form a PodGroup gang: gangsim runs parallelism pods as one gang and ignores completions"
    ]


def test_spec_scheduling_min_count_above_parallelism_is_an_error(tmp_path):
    from gangsim.errors import InputError

    path = tmp_path / "t.yaml"
    path.write_text(NODE + job("j", 2, 2, extra="\n  scheduling: {schedulingPolicy: {gang: {minCount: 3}}}"))
    with pytest.raises(InputError, match=r"spec.scheduling.schedulingPolicy.gang.minCount: Invalid value: 3: must be less than or equal to spec.parallelism \(2\)"):
        load_trace([path])


def test_the_podgroup_carries_the_pod_templates_priority(trace_of):
    # the scheduler needs a group's pods at the group's priority (validatePodGroup): the controller
    # gives the PodGroup the template's priorityClassName (workloadbuilder DefaultConfig)
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
    trace = trace_of(pc + "---\n" + NODE + job("j", 4, 4, template="\n      priorityClassName: high"))
    (pg,) = [ev.obj for ev in job_workload_events(trace.events) if ev.kind == "PodGroup"]
    assert (pg.policy.priority_class_name, pg.priority) == ("high", 1000)
    (g,) = replay(trace, "gang").gangs
    assert (g.kind, g.priority, g.state) == ("PodGroup", 1000, "Completed")


def test_the_replay_creates_them_only_under_gang_and_permit(trace_of):
    trace = trace_of(NODE + job("j", 4, 4))
    for policy, kind in (("pod", "Job"), ("permit", "PodGroup"), ("gang", "PodGroup")):
        log = replay(trace, policy)
        assert [(g.kind, g.pods, g.min_count) for g in log.gangs] == [(kind, 4, 4)], policy


def test_switched_off_by_the_trace_and_the_option(trace_of, tmp_path):
    from cli_kit import invoke

    off = "apiVersion: gangsim.dev/v1alpha1\nkind: Trace\njobWorkloads: false\n---\n"
    assert [g.kind for g in replay(trace_of(off + NODE + job("j", 4, 4)), "gang").gangs] == ["Job"]
    path = tmp_path / "on.yaml"
    path.write_text(NODE + job("j", 4, 4))
    for flag, kind in (("--no-job-workloads", "Job"), ("--job-workloads", "PodGroup")):
        res = invoke("run", str(path), "-p", "gang", flag, "--format", "json", "--no-progress", "-o", str(tmp_path / flag))
        assert res.exit_code == 0, res.stderr
        assert (tmp_path / flag / "gangs.csv").read_text().splitlines()[1].split(",")[1] == kind


def test_a_parallelism_patch_resyncs_min_count_and_a_delete_removes_both(trace_of):
    events = """---
apiVersion: gangsim.dev/v1alpha1
kind: Trace
events:
- {at: 10m, patch: {kind: Job, namespace: ml, name: j, spec: {parallelism: 2, completions: 2}}}
- {at: 20m, delete: {kind: Job, namespace: ml, name: j}}
"""
    out = job_workload_events(trace_of(NODE + job("j", 4, 4) + events).events)
    got = [(ev.at_ms, ev.op.value, ev.kind, getattr(ev.obj, "policy", None) and ev.obj.policy.min_count) for ev in out if ev.kind != "Node"]
    assert got == [
        (0, "create", "Workload", None), (0, "create", "PodGroup", 4), (0, "create", "Job", None),
        (600_000, "patch", "PodGroup", 2), (600_000, "patch", "Job", None),
        (1_200_000, "delete", "Job", None), (1_200_000, "delete", "PodGroup", None), (1_200_000, "delete", "Workload", None),
    ]  # fmt: skip


# --- property: under gang no Job-derived gang is ever partially bound -------------------------------


@settings(max_examples=10, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), nodes=st.integers(2, 8), gpus=st.sampled_from((4, 8)), failures=st.integers(0, 2))
def test_job_derived_gangs_are_never_partially_bound(tmp_path_factory, seed, nodes, gpus, failures):
    """Generated plain Indexed Jobs (no PodGroups written) on a congested pool: every multi-pod Job
    becomes a PodGroup gang, and whenever its pods bind at least minCount of them run right after."""
    spec = GeneratorSpec(
        seed=seed,
        pools=(PoolSpec("a", nodes, cpu=32, memory_gi=256, gpus=gpus),),
        jobs=16,
        hours=2,
        gang_sizes=((1, 0.3), (2, 0.2), (4, 0.3), (8, 0.2)),
        gpus_per_pod=((1, 0.4), (2, 0.3), (4, 0.3)),
        priorities=(("low", 0, 0.6), ("high", 1000, 0.4)),
        duration_median_s=1800,
        node_failures=min(failures, nodes - 1),
        gang_policy=False,
    )
    path = Path(tmp_path_factory.mktemp("jw")) / "gen.jsonl"
    with path.open("wb") as out:
        write_jsonl(generate(spec), out)
    trace = load_trace([path])
    trace.horizon_ms = 6 * 3_600_000
    report = build_report(replay(trace, "gang", check_invariants=True))
    gangs = report.tables["gangs"]
    assert all(kind == "PodGroup" or pods == 1 for kind, pods in zip(gangs["kind"], gangs["pods"], strict=True))  # one-pod Jobs: no gang
    assert (gangs["pods"] == gangs["min_count"]).all()
    check_all_or_nothing(report)
    groups = gangs.filter(gangs["kind"] == "PodGroup")
    assert groups.height == 0 or groups["started_s"].is_not_null().any()  # not all-or-nothing by never binding
