"""S37 (SCENARIOS.md §H): API validation and immutability, as loader errors (SEMANTICS §1.2, §1.3).

Each case writes a small YAML trace to a temp file and loads it with ``gangsim.load.load_trace``;
a rejected input raises ``InputError`` whose one line carries the upstream message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gangsim.api.objects import DisruptionMode, PodGroup, PolicyKind
from gangsim.errors import InputError
from gangsim.load import load_trace

PG = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: pg1, namespace: default}}\nspec:\n{spec}\n"
GANG3 = "  schedulingPolicy: {gang: {minCount: 3}}\n  priority: 100"
WORKLOAD = "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\nspec:\n  podGroupTemplates:\n"
TRACE = "---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: t}\nevents:\n"
CLASSES = (
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 100\n---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: also-high}\nvalue: 100\n---\n"
)


def templates(*items: str) -> str:
    return WORKLOAD + "".join(f"  - {item}\n" for item in items)


def pg_patch(spec: str) -> str:
    return TRACE + f"- at: 5s\n  patch: {{kind: PodGroup, namespace: default, name: pg1, spec: {spec}}}\n"


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)

    def _load(text: str):
        Path("t.yaml").write_text(text)
        return load_trace(["t.yaml"])

    return _load


def load_error(load, text: str) -> str:
    with pytest.raises(InputError) as info:
        load(text)
    message = str(info.value)
    assert "\n" not in message  # one clear line (INTERFACE: exit 2, no traceback)
    return message


REJECTED = [
    # (a) more than 8 podGroupTemplates: TooMany
    pytest.param(
        templates(*(f"{{name: t{i}, schedulingPolicy: {{basic: {{}}}}}}" for i in range(9))),
        "Workload default/w: spec.podGroupTemplates: Too many: 9: must have at most 8 items",
        id="S37a-nine-templates",
    ),
    # (b) minCount 0 is Required, a negative one is Invalid (origin minimum)
    pytest.param(PG.format(spec="  schedulingPolicy: {gang: {minCount: 0}}"), "PodGroup default/pg1: spec.schedulingPolicy.gang.minCount: Required value", id="S37b-min-count-zero"),
    pytest.param(PG.format(spec="  schedulingPolicy: {gang: {minCount: -1}}"), "PodGroup default/pg1: spec.schedulingPolicy.gang.minCount: Invalid value: -1:", id="S37b-min-count-negative"),
    pytest.param(
        templates("{name: a, schedulingPolicy: {gang: {minCount: 0}}}"),
        "Workload default/w: spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Required value",
        id="S37b-template-min-count-zero",
    ),
    # (c) the schedulingPolicy union
    pytest.param(PG.format(spec="  schedulingPolicy: {}"), "spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`", id="S37c-policy-neither"),
    pytest.param(
        PG.format(spec="  schedulingPolicy: {basic: {}, gang: {minCount: 2}}"),
        "spec.schedulingPolicy: Invalid value: \"{`basic`, `gang`}\": exactly one of `basic`, `gang` is required, but multiple fields are set",
        id="S37c-policy-both",
    ),
    # (d) the disruptionMode union
    pytest.param(PG.format(spec=GANG3 + "\n  disruptionMode: {}"), "spec.disruptionMode: Invalid value: \"\": must specify one of: `single`, `all`", id="S37d-disruption-neither"),
    pytest.param(
        PG.format(spec=GANG3 + "\n  disruptionMode: {single: {}, all: {}}"),
        "spec.disruptionMode: Invalid value: \"{`single`, `all`}\": exactly one of `single`, `all` is required, but multiple fields are set",
        id="S37d-disruption-both",
    ),
    # (e) Basic + All: rejected at load (workloadbuilder message)
    pytest.param(
        PG.format(spec="  schedulingPolicy: {basic: {}}\n  disruptionMode: {all: {}}"),
        "PodGroup default/pg1: spec.disruptionMode.all: Invalid value: {}: the disruptionMode `all` is not supported with the Basic scheduling policy",
        id="S37e-basic-with-all",
    ),
    pytest.param(
        templates("{name: a, schedulingPolicy: {basic: {}}, disruptionMode: {all: {}}}"),
        "spec.podGroupTemplates[0].disruptionMode.all: Invalid value: {}: the disruptionMode `all` is not supported with the Basic scheduling policy",
        id="S37e-template-basic-with-all",
    ),
    # (f) immutable fields of a PodGroup, changed by a Trace patch
    pytest.param(PG.format(spec=GANG3) + pg_patch("{disruptionMode: {all: {}}}"), 'spec.disruptionMode: Invalid value: {"all":{}}: field is immutable', id="S37f-disruption-mode"),
    pytest.param(
        PG.format(spec=GANG3) + pg_patch("{schedulingPolicy: {gang: null, basic: {}}}"),
        'spec.schedulingPolicy: Invalid value: {"basic":{}}: field is immutable',
        id="S37f-policy-kind",
    ),
    pytest.param(PG.format(spec=GANG3) + pg_patch("{priority: 50}"), "spec.priority: Invalid value: 50: field is immutable", id="S37f-priority"),
    pytest.param(
        CLASSES + PG.format(spec="  schedulingPolicy: {gang: {minCount: 3}}\n  priorityClassName: high") + pg_patch("{priorityClassName: also-high}"),
        'spec.priorityClassName: Invalid value: "also-high": field is immutable',
        id="S37f-priority-class-name",
    ),
    pytest.param(
        PG.format(spec=GANG3) + pg_patch("{workloadRef: {workloadName: w, templateName: a}}"),
        'spec.workloadRef: Invalid value: {"workloadName":"w","templateName":"a"}: field is immutable',
        id="S37f-workload-ref",
    ),
    pytest.param(
        templates("{name: a, schedulingPolicy: {basic: {}}}")
        + TRACE
        + "- at: 5s\n  patch: {kind: Workload, namespace: default, name: w, spec: {podGroupTemplates: "
        + "[{name: a, schedulingPolicy: {basic: {}}}, {name: b, schedulingPolicy: {basic: {}}}]}}\n",
        'spec.podGroupTemplates: Invalid value: ["a","b"]: field is immutable',
        id="S37f-template-added",
    ),
    pytest.param(
        templates("{name: a, schedulingPolicy: {basic: {}}}", "{name: b, schedulingPolicy: {basic: {}}}")
        + TRACE
        + "- at: 5s\n  patch: {kind: Workload, namespace: default, name: w, spec: {podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}}]}}\n",
        'spec.podGroupTemplates: Invalid value: ["a"]: field is immutable',
        id="S37f-template-removed",
    ),
    # a patch may not make a valid gang invalid either
    pytest.param(PG.format(spec=GANG3) + pg_patch("{schedulingPolicy: {gang: {minCount: 0}}}"), "spec.schedulingPolicy.gang.minCount: Required value", id="S37f-min-count-to-zero"),
]


@pytest.mark.parametrize(("text", "message"), REJECTED)
def test_rejected(load, text, message):
    assert message in load_error(load, text)


def test_upstream_messages_are_carried_verbatim(load):
    """The exact texts SCENARIOS.md S37 quotes appear in the loader's line."""
    assert "must specify one of: `basic`, `gang`" in load_error(load, PG.format(spec="  schedulingPolicy: {}"))
    assert "exactly one of `basic`, `gang` is required, but multiple fields are set" in load_error(
        load, PG.format(spec="  schedulingPolicy: {basic: {}, gang: {minCount: 1}}")
    )
    assert "must have at most 8 items" in load_error(load, templates(*(f"{{name: t{i}, schedulingPolicy: {{gang: {{minCount: 1}}}}}}" for i in range(9))))


def test_eight_templates_are_fine(load):
    trace = load(templates(*(f"{{name: t{i}, schedulingPolicy: {{basic: {{}}}}}}" for i in range(8))))
    assert [e.ref for e in trace.events] == ["Workload default/w"]


def test_S37f_min_count_patch_is_accepted(load):
    """(f) gang.minCount is mutable (scale up and down); the other fields stay as they were."""
    trace = load(PG.format(spec=GANG3 + "\n  disruptionMode: {all: {}}") + pg_patch("{schedulingPolicy: {gang: {minCount: 2}}}"))
    assert [(e.at_ms, e.op.value, e.ref) for e in trace.events] == [(0, "create", "PodGroup default/pg1"), (5000, "patch", "PodGroup default/pg1")]
    before, after = trace.events[0].obj, trace.events[1].obj
    assert isinstance(before, PodGroup) and isinstance(after, PodGroup)
    assert (before.policy.min_count, after.policy.min_count) == (3, 2)
    assert after.policy.kind is PolicyKind.GANG
    assert after.policy.disruption_mode is DisruptionMode.ALL
    assert after.priority == 100


def test_S37f_min_count_increase_is_accepted(load):
    trace = load(PG.format(spec=GANG3) + pg_patch("{schedulingPolicy: {gang: {minCount: 8}}}"))
    assert trace.events[1].obj.policy.min_count == 8


def test_S37f_template_min_count_patch_is_accepted(load):
    trace = load(
        templates("{name: a, schedulingPolicy: {gang: {minCount: 3}}}")
        + TRACE
        + "- at: 5s\n  patch: {kind: Workload, namespace: default, name: w, spec: {podGroupTemplates: [{name: a, schedulingPolicy: {gang: {minCount: 2}}}]}}\n"
    )
    assert [e.op.value for e in trace.events] == ["create", "patch"]


def test_S39_patch_removing_a_gate_and_adding_a_toleration_is_accepted(load):
    pod = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p3}\nspec:\n  schedulingGates: [{name: g}]\n"
        "  containers: [{name: c, resources: {requests: {cpu: 3}}}]\n"
    )
    patch = "{kind: Pod, namespace: default, name: p3, spec: {schedulingGates: null, tolerations: [{key: dedicated, operator: Equal, value: group1, effect: NoSchedule}]}}"
    trace = load(pod + TRACE + f"- at: 3s\n  patch: {patch}\n")
    after = trace.events[1].obj
    assert after.spec.scheduling_gates == ()
    assert [t.key for t in after.spec.tolerations] == ["dedicated"]
