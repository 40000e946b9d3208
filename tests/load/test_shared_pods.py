"""The streaming loader decodes a JSON Pod document that repeats an earlier one but for its name
once (``Decoder(share_identical=True)``, issue 16: scheduler_perf's 50,000 identical pods): the
same trace — every event, object, source, warning and notice — or the same error line as the
reference path, which decodes every document."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.load.test_stream import assert_same, streamed_directly

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
