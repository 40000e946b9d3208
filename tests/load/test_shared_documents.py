"""The streaming loader decodes a JSON Pod, Job or PodGroup document that repeats an earlier one
but for its names (``metadata.name``, the PodGroup its pods name) once (``Decoder(share_identical=True)``,
``gangsim.load.shared``, issue 16: scheduler_perf's 50,000 identical pods, a gang trace's PodGroup
and Job per gang): the same trace — every event, object, source, warning and notice — or the
same error line as the reference path, which decodes every document."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.shapes import gang_docs
from gangsim import pipeline
from gangsim.load.decode import Decoder
from gangsim.load.switches import REFERENCE_LOADER
from gangsim.report import render_json
from tests.importers.conftest import invoke
from tests.importers.test_swf import SWF_HEADER, _line
from tests.load.test_stream import assert_same, outcome, streamed_directly

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"}, "status": {"allocatable": {"cpu": "4", "nvidia.com/gpu": "8"}}}


def pod(name: str, **extra) -> dict:
    doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", **extra.pop("meta", {})},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}  # fmt: skip
    doc.update(extra)
    return doc


def write(tmp_path, docs: list[dict], name: str = "t.jsonl"):
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in docs))
    return path


def test_identical_pods_with_warnings_statuses_and_annotations_load_as_the_reference_path(tmp_path):
    docs = [NODE]
    for i in range(5):
        docs.append(pod(f"p-{i}"))
        docs.append(pod(f"q-{i}", meta={"labels": {"kueue.x-k8s.io/queue-name": "a"}}))  # folded notice per pod
        docs.append(pod(f"s-{i}", status={"phase": "Running"}))  # "ignored status of N Pods (e.g. …)"
        docs.append(pod(f"d-{i}", meta={"annotations": {"gangsim.dev/duration": "10m", "gangsim.dev/arrival": f"{i}s"}}))
        docs.append(pod(f"o-{i}", meta={"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "controller": True}]}))
    path = write(tmp_path, docs)
    assert streamed_directly([path])
    got = assert_same([path])
    assert got[0] == "trace" and len(got[-1]) == len(docs)


def test_a_bad_name_on_a_repeated_pod_is_the_reference_paths_error(tmp_path):
    path = write(tmp_path, [NODE, pod("good-0"), pod("good-1"), pod("Bad_Name")])
    got = assert_same([path])
    assert got[0] == "error" and 't.jsonl:4: Pod default/Bad_Name: metadata.name: Invalid value: "Bad_Name"' in got[2]


def test_a_duplicate_repeated_pod_is_the_reference_paths_error(tmp_path):
    got = assert_same([write(tmp_path, [NODE, pod("a"), pod("b"), pod("a")])])
    assert got[0] == "error" and "t.jsonl:4" in got[2]


NAMES = st.one_of(st.from_regex(r"[a-z][a-z0-9-]{0,12}[a-z0-9]", fullmatch=True), st.sampled_from(["", "A", "a_b", "-a", "a" * 300, "x.y"]))


@settings(max_examples=40, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=8), extra=st.sampled_from([{}, {"meta": {"labels": {"app": "x"}}}, {"status": {}}]))
def test_repeated_pods_property(tmp_path_factory, names, extra):
    path = write(tmp_path_factory.mktemp("same"), [NODE] + [pod(n, **{k: dict(v) if isinstance(v, dict) else v for k, v in extra.items()}) for n in names])
    assert_same([path])


def pod_group(name: str, min_count: int = 4, **meta) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": "default", **meta},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}  # fmt: skip


def job(name: str, group: object = None, parallelism: int = 4, **meta) -> dict:
    spec: dict = {"restartPolicy": "Never", "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}
    if group is not None:
        spec["schedulingGroup"] = {"podGroupName": group}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default", **meta},
            "spec": {"parallelism": parallelism, "completions": parallelism, "completionMode": "Indexed", "template": {"spec": spec}}}  # fmt: skip


def full_decodes(monkeypatch) -> list[str]:
    """The kinds of the documents decoded in full from now on (the rest were shared)."""
    seen: list[str] = []
    real = Decoder._decode

    def spy(self, raw, source, status_warning):
        seen.append(raw.get("kind"))
        return real(self, raw, source, status_warning)

    monkeypatch.setattr(Decoder, "_decode", spy)
    return seen


def test_a_gang_per_pod_group_and_job_loads_as_the_reference_path_and_is_decoded_once(tmp_path, monkeypatch):
    docs = [NODE]
    for i in range(6):
        docs += [pod_group(f"gang-{i}"), job(f"gang-{i}", f"gang-{i}")]
    docs += [pod_group("other", annotations={"gangsim.dev/rendezvous-timeout": "5m"}), job("other", "other", annotations={"gangsim.dev/duration": "1h"})]
    docs += [pod(f"member-{i}", spec={"containers": [{"name": "c"}], "schedulingGroup": {"podGroupName": f"gang-{i}"}}) for i in range(3)]
    path = write(tmp_path, docs)
    decoded = full_decodes(monkeypatch)
    assert streamed_directly([path])
    decoded.clear()
    assert outcome([path], streaming=True)[0] == "trace"
    # the first of each shape in full (the gangsim annotations are part of the shape), the rest shared
    assert decoded == ["Node", "PodGroup", "Job", "PodGroup", "Job", "Pod"]
    got = assert_same([path])
    assert got[0] == "trace" and len(got[-1]) == len(docs)


def test_a_job_naming_no_pod_group_never_takes_one_naming_a_group(tmp_path):
    # "" and an absent schedulingGroup name no PodGroup: KEP-5547 infers the Job's gang for them
    path = write(tmp_path, [NODE, job("a", "g-a"), job("b", ""), job("c"), job("d", "g-d"), job("e", "")])
    got = assert_same([path])
    assert got[0] == "trace"


@pytest.mark.parametrize(
    ("docs", "where"),
    [
        ([job("good-0", "g-0"), job("good-1", "g-1"), job("bad", "Bad_Group")], 't.jsonl:4: Job default/bad: spec.template.spec.schedulingGroup.podGroupName: Invalid value: "Bad_Group"'),
        ([job("good-0", "g-0"), job("good-1", "g-1"), job("x" * 64, "g-2")], '"' + "x" * 64 + '": must be no more than 63 characters'),
        ([job("good-0", "g-0"), job("good-1", "g-1"), job("bad", 7)], "t.jsonl:4: Job default/bad: spec.template.spec.schedulingGroup.podGroupName: Invalid value: 7"),
        ([pod_group("g-0"), pod_group("g-1"), pod_group("Bad_Group")], 't.jsonl:4: PodGroup default/Bad_Group: metadata.name: Invalid value: "Bad_Group"'),
    ],
    ids=["bad-group-name", "job-name-over-63", "group-name-not-a-string", "bad-pod-group-name"],
)
def test_a_bad_name_on_a_repeated_document_is_the_reference_paths_error(tmp_path, docs, where):
    got = assert_same([write(tmp_path, [NODE, *docs])])
    assert got[0] == "error" and "t.jsonl:4: " in got[2] and where in got[2], got


def test_a_duplicate_repeated_pod_group_is_the_reference_paths_error(tmp_path):
    got = assert_same([write(tmp_path, [NODE, pod_group("a"), pod_group("b"), pod_group("a")])])
    assert got[0] == "error" and "t.jsonl:4" in got[2]


GROUPS = st.one_of(NAMES, st.none(), st.sampled_from([0, "", "g.x"]))


@settings(max_examples=40, deadline=None)
@given(gangs=st.lists(st.tuples(NAMES, GROUPS, st.sampled_from([1, 2, 4])), min_size=1, max_size=6))
def test_repeated_jobs_and_pod_groups_property(tmp_path_factory, gangs):
    docs = [NODE]
    for name, group, size in gangs:
        docs += [pod_group(name, size), job(name, group, size)]
    assert_same([write(tmp_path_factory.mktemp("same"), docs)])


def _report(path, policy: str) -> bytes:
    return render_json(pipeline.run_policy(pipeline.load([str(path)]), policy, seed=7))


@pytest.mark.parametrize("policy", ["gang", "pod"])
def test_report_bytes_with_the_switch_on_and_off(tmp_path, monkeypatch, policy):
    """``GANGSIM_REFERENCE_LOADER=1`` switches the sharing off (every document decoded): the same
    report on a generated gang trace and on a SWF log imported to JSONL (a PodGroup and a Job per
    job, sizes repeating)."""
    gangs = write(tmp_path, gang_docs(nodes=40, gangs=60, size=3), "gangs.jsonl")
    swf = tmp_path / "log.swf"
    swf.write_text(SWF_HEADER + "".join(_line(n, 7 * n, 0, 30 + n % 5 * 60, 1 + n % 24) for n in range(1, 80)))
    imported = tmp_path / "log.jsonl"
    assert invoke("import", "swf", str(swf), "-o", str(imported)).exit_code == 0
    decoded = full_decodes(monkeypatch)
    fast = [_report(p, policy) for p in (gangs, imported)]
    with_sharing = len(decoded)
    monkeypatch.setenv(REFERENCE_LOADER, "1")
    assert [_report(p, policy) for p in (gangs, imported)] == fast
    # (each load decodes in full: the sharing skipped most documents, the switch none)
    assert with_sharing < (len(decoded) - with_sharing) // 2
