"""Jobs as users write them: generateName, completions, suspend and Kueue labels, and durations
for manifests that have none (Trace defaultDuration / durations, --default-duration)."""

from __future__ import annotations

import pytest

from gangsim.api.objects import Job, Pod
from gangsim.load.durations import has_durations
from gangsim.load.meta import generated_name

NODE = """
apiVersion: v1
kind: Node
metadata: {name: n}
status: {allocatable: {cpu: "64", nvidia.com/gpu: "8"}}
"""


def job(head: str = "name: j", spec: str = "", labels: str = "{app: train}", gpus: int = 1) -> str:
    return f"""
apiVersion: batch/v1
kind: Job
metadata: {{{head}, namespace: ml}}
spec:
  parallelism: 2{spec}
  template:
    metadata: {{labels: {labels}}}
    spec:
      containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}]
"""


def docs(*parts: str) -> str:
    return "---".join(parts)


def objs(trace, kind):
    return [ev.obj for ev in trace.events if ev.kind == kind]


def test_generated_names_follow_creation_order_per_prefix(load):
    text = docs(
        NODE,
        job("generateName: train-").replace("metadata: {generateName", "metadata: {annotations: {gangsim.dev/arrival: 1m}, generateName"),
        job("generateName: train-"),
        job("generateName: eval-"),
        "\napiVersion: v1\nkind: Pod\nmetadata: {generateName: train-}\nspec: {containers: [{name: c}]}\n",
    )
    trace = load(text)
    # the first document arrives at 1m: it is created second, so it gets the second name
    assert [(ev.at_ms, ev.kind, ev.name) for ev in trace.events if ev.kind != "Node"] == [
        (0, "Job", "train-bbbbb"),
        (0, "Job", "eval-bbbbb"),
        (0, "Pod", "train-bbbbb"),  # another kind: its own numbering
        (60_000, "Job", "train-bbbbc"),
    ]
    assert all(isinstance(o, (Job, Pod)) and o.name for o in objs(trace, "Job") + objs(trace, "Pod"))


def test_generated_name_suffix_is_five_characters_of_the_apiserver_alphabet():
    assert [generated_name("x-", n) for n in (0, 1, 26, 27)] == ["x-bbbbb", "x-bbbbc", "x-bbbb9", "x-bbbcb"]
    assert len(generated_name("a" * 58, 27**5 - 1)) == 63


def test_generated_names_collide_with_written_names_as_duplicates(load_error):
    text = docs(NODE, job("generateName: t-"), job("name: t-bbbbb"))
    assert load_error(text).endswith("metadata.name: Duplicate value: \"t-bbbbb\": already exists (created at t.yaml:6)")


def test_a_patch_can_name_a_generated_object(load):
    text = docs(NODE, job("generateName: t-"), """
apiVersion: gangsim.dev/v1alpha1
kind: Trace
events:
- at: 1h
  patch: {kind: Job, namespace: ml, name: t-bbbbb, spec: {parallelism: 4}}
""")
    (created, patched) = [ev for ev in load(text).events if ev.kind == "Job"]
    assert (created.obj.parallelism, patched.obj.parallelism, patched.name) == (2, 4, "t-bbbbb")


def test_completions_mode_and_limits_are_read(load):
    spec = "\n  completions: 6\n  completionMode: Indexed\n  backoffLimit: 2\n  activeDeadlineSeconds: 90"
    (j,) = objs(load(docs(NODE, job(spec=spec))), "Job")
    assert (j.parallelism, j.completions, j.indexed, j.backoff_limit, j.active_deadline_ms, j.waves) == (2, 6, True, 2, 90_000, True)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("\n  completionMode: Indexed", "t.yaml:5: Job ml/j: spec.completions: Required value: when completion mode is Indexed"),
        ("\n  backoffLimit: -1", "t.yaml:6: Job ml/j: spec.backoffLimit: Invalid value: -1: must be an integer between 0 and 2147483647"),
        ("\n  activeDeadlineSeconds: 1.5", "t.yaml:6: Job ml/j: spec.activeDeadlineSeconds: Invalid value: 1.5: must be an integer between 0 and 3153600000"),
        ("\n  activeDeadlineSeconds: 99999999999", "t.yaml:6: Job ml/j: spec.activeDeadlineSeconds: Invalid value: 99999999999: must be an integer between 0 and 3153600000"),
    ],
    ids=["indexed-needs-completions", "backoff-negative", "deadline-float", "deadline-over-100-years"],
)
def test_bad_job_fields_are_one_line(load_error, spec, message):
    assert load_error(job(spec=spec)) == message


def test_suspend_and_kueue_label_are_one_folded_warning_each(load):
    kueue = "{app: train, kueue.x-k8s.io/queue-name: team-a}"
    text = docs(
        NODE,
        job("name: a", spec="\n  suspend: true").replace("namespace: ml}", "namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}"),
        job("name: b", spec="\n  suspend: true"),
        job("name: c", spec="\n  suspend: false"),
        "\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: " + kueue + "}\nspec: {containers: [{name: c}]}\n",
    )
    trace = load(text)
    assert trace.notices == [
        "2 objects (e.g. Job ml/a): spec.suspend: true: gangsim has no Kueue or other admission model: replayed as admitted (unsuspended) at creation",
        "2 objects (e.g. Job ml/a): label kueue.x-k8s.io/queue-name: gangsim has no Kueue model (no queues, quotas or admission order): replayed as admitted at creation",
    ]
    assert all(n in trace.warnings for n in trace.notices)
    assert [ev.at_ms for ev in trace.events if ev.kind == "Job"] == [0, 0, 0]  # admitted at creation


# --- durations ------------------------------------------------------------------------------------

RULES = """
apiVersion: gangsim.dev/v1alpha1
kind: Trace
defaultDuration: 30m
durations:
- selector: {matchLabels: {app: eval}}
  duration: 10m
- selector: {matchExpressions: [{key: app, operator: In, values: [sim]}]}
  distribution: {type: uniform, min: 1h, max: 2h, seed: 7}
"""


def durations_of(trace):
    return {ev.name: ev.obj.template.duration_ms for ev in trace.events if ev.kind == "Job"}


def test_duration_rules_then_default(load):
    text = docs(
        RULES, NODE,
        job("name: annotated").replace("metadata: {name: annotated", "metadata: {annotations: {gangsim.dev/duration: 5m}, name: annotated"),
        job("name: e", labels="{app: eval}"),
        job("name: s1", labels="{app: sim}"),
        job("name: s2", labels="{app: sim}"),
        job("name: other"),
    )  # fmt: skip
    d = durations_of(load(text))
    assert (d["annotated"], d["e"], d["other"]) == (300_000, 600_000, 1_800_000)
    assert 3_600_000 <= d["s1"] <= 7_200_000 and 3_600_000 <= d["s2"] <= 7_200_000 and d["s1"] != d["s2"]
    assert durations_of(load(text)) == d  # the seed makes the draws the same every time


def test_cli_default_replaces_the_trace_default_only(write):
    from gangsim.load import load_trace

    path = write("t.yaml", docs(RULES, NODE, job("name: e", labels="{app: eval}"), job("name: other")))
    d = durations_of(load_trace([path], default_duration_ms=3_600_000))
    assert (d["e"], d["other"]) == (600_000, 3_600_000)


def test_no_duration_anywhere(load):
    trace = load(docs(NODE, job()))
    assert not has_durations(trace.events)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("- {duration: 1h, distribution: {type: exponential, mean: 1h}}", "durations[0].duration: Required value: exactly one of duration or distribution"),
        ("- distribution: {type: normal, mean: 1h}", 'durations[0].distribution.type: Unsupported value: "normal": supported values: "uniform", "exponential", "lognormal"'),
        ("- distribution: {type: lognormal, median: 1h}", "durations[0].distribution.sigma: Required value: a lognormal distribution needs median and sigma"),
        ("- distribution: {type: lognormal, median: 1h, sigma: .nan}", "durations[0].distribution.sigma: Invalid value: nan: must be a number between 0 and 10"),
        ("- distribution: {type: uniform, min: 2h, max: 1h}", 'durations[0].distribution.max: Invalid value: "1h": must not be less than min'),
        ("- distribution: {type: exponential, mean: 1h, seed: -3}", "durations[0].distribution.seed: Invalid value: -3: must be an integer between 0 and 9223372036854775807"),
        ("- {duration: 200y}", 'durations[0].duration: Invalid value: "200y"'),
    ],
    ids=["both", "unknown-type", "missing-sigma", "nan-sigma", "max-below-min", "negative-seed", "bad-duration"],
)
def test_bad_duration_rules_are_one_line(load_error, rule, message):
    text = f"apiVersion: gangsim.dev/v1alpha1\nkind: Trace\ndurations:\n{rule}\n"
    got = load_error(text)
    assert got.startswith("t.yaml:") and "Trace" in got and message in got, got


def test_two_different_default_durations_are_an_error(load_error):
    text = "apiVersion: gangsim.dev/v1alpha1\nkind: Trace\ndefaultDuration: 1h\n---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\ndefaultDuration: 2h\n"
    assert load_error(text) == "t.yaml:7: Trace: defaultDuration: Invalid value: 2h: differs from the defaultDuration at t.yaml:3"


def test_a_pod_owned_by_a_job_joins_that_jobs_gang(load, load_error):
    pod = "\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n  ownerReferences: {refs}\nspec: {{containers: [{{name: c}}]}}\n"
    owned = load(docs(NODE, pod.format(refs="[{apiVersion: apps/v1, kind: ReplicaSet, name: r}, {apiVersion: batch/v1, kind: Job, name: train, controller: true}]")))
    (p,) = objs(owned, "Pod")
    assert p.job == "train"
    (p,) = objs(load(docs(NODE, pod.format(refs="[{apiVersion: batch/v1, kind: Job, name: train}]"))), "Pod")
    assert p.job == ""  # not the controller reference
    assert load_error(pod.format(refs="[x]")) == 't.yaml:6: Pod ml/p: metadata.ownerReferences[0]: Invalid value: "x": must be an object with apiVersion, kind and name'
