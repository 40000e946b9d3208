"""Reading files: multi-document YAML, JSON, List, JSON Lines, directories and merge ordering."""

from __future__ import annotations

import json

import pytest

from gangsim.api.trace import Op
from gangsim.load import load_trace
from gangsim.load.documents import LDict, LList, read_documents

from .kit import node_yaml, pod_yaml


def refs(trace):
    return [(e.at_ms, e.op.value, e.ref) for e in trace.events]


def test_yaml_documents_keep_lines(write):
    write("t.yaml", "---\n# comment\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels: {x: y}\nstatus: {}\n---\n")
    (doc,) = read_documents("t.yaml", 0)
    assert isinstance(doc.data, LDict)
    assert doc.line == 4
    assert doc.data.lines == {"apiVersion": 4, "kind": 5, "metadata": 6, "status": 9}
    assert doc.data["metadata"].lines == {"name": 7, "labels": 8}


def test_yaml_lists_anchors_and_merge_keys(write):
    write(
        "t.yaml",
        """
        base: &base {cpu: "1"}
        items:
        - <<: *base
          memory: 1Gi
        - name: b
        """,
    )
    (doc,) = read_documents("t.yaml", 0)
    items = doc.data["items"]
    assert isinstance(items, LList) and items.lines == [3, 5]
    assert items[0] == {"cpu": "1", "memory": "1Gi"}


def test_multi_document_yaml_in_document_order(load):
    trace = load(node_yaml("b") + "---\n" + node_yaml("a") + "---\n" + pod_yaml("p"))
    assert refs(trace) == [(0, "create", "Node b"), (0, "create", "Node a"), (0, "create", "Pod default/p")]
    assert [e.order for e in trace.events] == [(0, 0, 0), (0, 1, 0), (0, 2, 0)]
    assert [e.source.line for e in trace.events] == [1, 6, 11]


def node_dict(name, arrival=None):
    meta = {"name": name}
    if arrival is not None:
        meta["annotations"] = {"gangsim.dev/arrival": arrival}
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta, "status": {"capacity": {"cpu": "1"}}}


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param([node_dict("a"), node_dict("b")], id="json-list"),
        pytest.param({"apiVersion": "v1", "kind": "List", "items": [node_dict("a"), node_dict("b")]}, id="json-List-kind"),
    ],
)
def test_json_forms(write, payload):
    trace = load_trace([write("t.json", json.dumps(payload, indent=1))])
    assert refs(trace) == [(0, "create", "Node a"), (0, "create", "Node b")]
    assert trace.events[1].source.line is not None


def test_json_single_object_and_yaml_list_kind(write):
    write("one.json", json.dumps(node_dict("a")))
    write("l.yaml", "apiVersion: v1\nkind: List\nitems:\n- " + json.dumps(node_dict("b")) + "\n- " + json.dumps(node_dict("c")) + "\n")
    trace = load_trace(["one.json", "l.yaml"])
    assert refs(trace) == [(0, "create", "Node a"), (0, "create", "Node b"), (0, "create", "Node c")]
    assert [e.source.line for e in trace.events] == [1, 4, 5]


def test_yaml_top_level_sequence(write):
    write("t.yaml", "- " + json.dumps(node_dict("a")) + "\n- " + json.dumps(node_dict("b")) + "\n---\n" + node_yaml("c"))
    trace = load_trace(["t.yaml"])
    assert [(e.name, e.order, e.source.line) for e in trace.events] == [("a", (0, 0, 0), 1), ("b", (0, 1, 0), 2), ("c", (0, 2, 0), 4)]


def test_jsonl_events_and_bare_objects(write):
    lines = [
        json.dumps(node_dict("n", arrival="5s")),
        "",
        json.dumps({"at": 12.5, "create": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}}),
        json.dumps({"at": "1m", "delete": {"kind": "Pod", "name": "p"}}),
    ]
    trace = load_trace([write("t.jsonl", "\n".join(lines) + "\n")])
    assert refs(trace) == [(5000, "create", "Node n"), (12_500, "create", "Pod default/p"), (60_000, "delete", "Pod default/p")]
    assert [e.source.line for e in trace.events] == [1, 3, 4]


def test_directory_files_by_name_and_command_line_order(write):
    write("cluster/b.yaml", node_yaml("from-b"))
    write("cluster/a.yml", node_yaml("from-a"))
    write("cluster/c.json", json.dumps(node_dict("from-c")))
    write("cluster/notes.txt", "ignored")
    write("jobs.yaml", node_yaml("from-jobs"))
    trace = load_trace(["jobs.yaml", "cluster"])
    assert [e.name for e in trace.events] == ["from-jobs", "from-a", "from-b", "from-c"]
    assert trace.files == ("jobs.yaml", "cluster/a.yml", "cluster/b.yaml", "cluster/c.json")
    assert [e.order[0] for e in trace.events] == [0, 1, 2, 3]
    assert trace.name == "jobs"


def test_same_arrival_document_order_across_files(write):
    write("x.yaml", node_yaml("x0") + "---\n" + node_yaml("x1").replace("metadata: {name: x1}", "metadata: {name: x1, annotations: {gangsim.dev/arrival: 10s}}"))
    write("y.yaml", node_yaml("y0").replace("metadata: {name: y0}", "metadata: {name: y0, annotations: {gangsim.dev/arrival: 10s}}") + "---\n" + node_yaml("y1"))
    trace = load_trace(["y.yaml", "x.yaml"])
    assert [(e.at_ms, e.name) for e in trace.events] == [(0, "y1"), (0, "x0"), (10_000, "y0"), (10_000, "x1")]


def test_trace_document_items_and_settings(load):
    trace = load(
        """
        apiVersion: gangsim.dev/v1alpha1
        kind: Trace
        metadata: {name: day-1}
        horizon: 6h
        events:
        - at: 1m
          create: {apiVersion: v1, kind: Node, metadata: {name: a}, status: {capacity: {cpu: 1}}}
        - at: 1m
          create: {apiVersion: v1, kind: Node, metadata: {name: b, annotations: {gangsim.dev/arrival: 1m}}, status: {capacity: {cpu: 1}}}
        - create: {apiVersion: v1, kind: Node, metadata: {name: c}, status: {capacity: {cpu: 1}}}
        ---
        apiVersion: gangsim.dev/v1alpha1
        kind: Trace
        metadata: {name: ignored}
        horizon: 2h
        """
    )
    assert [(e.at_ms, e.name, e.order) for e in trace.events] == [(0, "c", (0, 0, 2)), (60_000, "a", (0, 0, 0)), (60_000, "b", (0, 0, 1))]
    assert (trace.name, trace.horizon_ms) == ("day-1", 6 * 3_600_000)
    assert trace.events[0].op is Op.CREATE


def test_empty_file_is_an_empty_trace(load):
    trace = load("# nothing yet\n", name="empty.yaml")
    assert (trace.events, trace.name, trace.horizon_ms) == ([], "empty", None)
