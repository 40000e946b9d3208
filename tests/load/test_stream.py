"""The streaming loader (gangsim.load.stream) against the reference path (``streaming=False``):
the same trace (every event, object, source and order, the warnings and notices) or the same
error line, on every bundled and golden trace, on mutated ones (the fuzz cases), and on the
shapes where it must hand over to the reference path."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gangsim.errors import GangsimError
from gangsim.load import load_trace
from gangsim.load.stream import may_patch, stream_creates
from gangsim.load.trace import single_config
from tests.fuzz.mutate import make_case
from tests.golden.cases import SHARED

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted(
    [p for p in (ROOT / "traces").glob("*.yaml")]
    + [p for p in (ROOT / "tests" / "golden" / "traces").iterdir() if p.suffix in (".yaml", ".jsonl")]
    + [p for p in (ROOT / "tests" / "load" / "controllers").glob("*.yaml") if p.name != "pool.yaml"]
)
POOL = ROOT / "tests" / "load" / "controllers" / "pool.yaml"
_FIELDS = ("name", "horizon_ms", "files", "warnings", "notices", "job_workloads", "config")


def outcome(paths: list, **kw) -> tuple:
    """What loading gives: the trace's fields and events, or the error line."""
    try:
        trace = load_trace(paths, **kw)
    except GangsimError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("trace", *(getattr(trace, f) for f in _FIELDS), trace.events)


def assert_same(paths: list, **kw) -> tuple:
    streamed = outcome(paths, streaming=True, **kw)
    reference = outcome(paths, streaming=False, **kw)
    assert streamed == reference
    return streamed


def streamed_directly(paths: list) -> bool:
    """Whether the streaming path decided the trace itself (did not hand over)."""
    return stream_creates([str(p) for p in paths], single_config) is not None


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_same_trace_as_the_reference_path(path):
    paths = [POOL, path] if path.parent.name == "controllers" else [path]
    got = assert_same(paths)
    assert got[0] == "trace"


def test_bundled_traces_are_streamed_not_handed_over():
    # the bundled traces write their PriorityClasses first: nothing forces the reference path
    for name in ("mixed-day.yaml", "disruption-all.yaml", "victims-in-vain.yaml", "deadlock.yaml"):
        assert streamed_directly([ROOT / "traces" / name]), name


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {nvidia.com/gpu: '8'}}\n"
CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
DEFAULT_CLASS = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: base}\nvalue: 7\nglobalDefault: true\n"
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {gangsim.dev/duration: 1h}}\nspec:\n  priorityClassName: high\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]\n"
PLAIN_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]\n"


def test_priority_class_after_its_pods_hands_over_and_resolves(tmp_path):
    # the pod names a class written after it, and a later globalDefault class applies to the
    # plain pod: one pass cannot know either, so the reference path loads it
    path = _write(tmp_path, "t.yaml", "---\n".join([NODE, POD, PLAIN_POD, CLASS, DEFAULT_CLASS]))
    assert not streamed_directly([path])
    got = assert_same([path])
    pods = {ev.name: ev.obj for ev in got[-1] if ev.kind == "Pod"}
    assert (pods["p"].spec.priority, pods["q"].spec.priority) == (1000, 7)


def test_priority_classes_first_are_streamed(tmp_path):
    path = _write(tmp_path, "t.yaml", "---\n".join([CLASS, DEFAULT_CLASS, NODE, POD, PLAIN_POD]))
    assert streamed_directly([path])
    got = assert_same([path])
    pods = {ev.name: ev.obj for ev in got[-1] if ev.kind == "Pod"}
    assert (pods["p"].spec.priority, pods["q"].spec.priority) == (1000, 7)


def test_patches_keep_their_targets_documents(tmp_path):
    trace = _write(tmp_path, "t.yaml", "---\n".join([CLASS, NODE, POD]))
    patch = _write(tmp_path, "p.jsonl", '{"at": "10m", "patch": {"kind": "Node", "name": "n1", "metadata": {"labels": {"zone": "a"}}}}\n')
    assert may_patch([str(trace), str(patch)]) and not may_patch([str(trace)])
    assert streamed_directly([trace, patch])
    got = assert_same([trace, patch])
    patched = [ev for ev in got[-1] if ev.kind == "Node" and ev.op.name == "PATCH"]
    assert [ev.obj.labels.get("zone") for ev in patched] == ["a"]


def test_an_error_is_the_reference_paths_error(tmp_path):
    # a decoding error in an early document and a syntax error later in the file: the
    # reference path reads the whole file first, so the syntax error is the one reported
    bad_pod = POD.replace("'1'", "'one'")
    path = _write(tmp_path, "t.yaml", "---\n".join([CLASS, NODE, bad_pod, "a: [unclosed\n"]))
    got = assert_same([path])
    assert got[0] == "error" and "invalid YAML" in got[2] and "t.yaml:" in got[2]


def test_streamed_creates_hold_no_documents():
    collected, _decoder, _warnings, events = stream_creates([str(ROOT / "traces" / "mixed-day.yaml")], single_config)
    creates = [ev for ev in events if ev.op.name == "CREATE"]
    assert creates and all(ev.raw is None for ev in creates if ev.kind != "NodePool")


@pytest.mark.parametrize("seed", range(60))
def test_mutated_traces_load_or_fail_alike(tmp_path, seed):
    """The fuzz suite's mutated traces (tests/fuzz/mutate.py): the same trace or the same error."""
    case = make_case(seed, "workloads" if seed % 4 == 0 else None)
    if case.target not in ("run", "validate", "import:swf", "import:gavel"):
        pytest.skip(f"target {case.target}: not a trace the loader reads")
    for name, data in case.files.items():
        (tmp_path / name).write_bytes(data)
    if case.target.startswith("import:"):
        kind = case.target.split(":", 1)[1]
        name = next(iter(case.files))
        paths = [f"{kind}:{tmp_path / name}"]
    else:
        paths = [tmp_path / name for name in case.files]
        if case.family == "workloads":
            paths = [POOL, *paths]
    assert_same(paths)


@pytest.mark.skipif(not (SHARED / "pwa-hpc2n-2002-head").is_dir(), reason="needs ../shared/traces-data")
def test_an_imported_swf_log_streams_the_same(capsys):
    src = SHARED / "pwa-hpc2n-2002-head" / "hpc2n.swf"
    got = assert_same([f"swf:{src}"])
    assert got[0] == "trace" and len(got[-1]) > 1000
    # the importer's notes are printed once per load, by whichever path finished it
    err = capsys.readouterr().err
    assert err.count("offered load") == 2  # two loads above: streamed, then the reference path
    assert streamed_directly([f"swf:{src}"])


def test_jsonl_lines_are_read_as_before():
    from gangsim.load.documents import jsonl_documents

    raw = b'{"a": 1}\r\n\n  \n{"b": 2}'
    docs = list(jsonl_documents(raw, "x.jsonl", 0))
    assert [(d.line, d.data) for d in docs] == [(1, {"a": 1}), (4, {"b": 2})]
    assert list(io.BytesIO(raw)) != raw.split(b"\n")  # the lines keep their b"\n" until stripped
