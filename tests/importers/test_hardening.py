"""Every importer on broken input: one ``gangsim: error:`` line naming file, line and field, exit 2
(never a traceback, never exit 3, never the interrupt path); an interrupt is still exit 130. And
whatever ``import`` writes, ``run`` (``gangsim.load.load_trace``) accepts."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

from gangsim.load import load_trace
from tests.importers.conftest import dataset, invoke

FIXTURES = Path(__file__).parent / "fixtures"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,V100\n"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
POD = "p1,1000,1024,1,1000,,LS,Running,0,100,10\n"
SWF = "; MaxNodes: 2\n; MaxProcs: 16\n"
JOB = "1 0 0 100 8 -1 -1 8 3600 -1 1 1 1 -1 1 1 -1 -1\n"
GAVEL = "ResNet-50\tpython3 main.py\t--num_steps\t1\t4000\t0\t1\n"
KUBECTL = """apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {cpu: "8", memory: 32Gi}
- apiVersion: v1
  kind: Pod
  metadata: {name: p1, namespace: default}
  spec:
    containers:
    - name: c
      resources:
        requests: {cpu: "1"}
"""
BIG = "99999999999999999999"  # beyond int64


def _openb(tmp: Path, pods: bytes | str, *, name: str = "pods.csv") -> tuple[list[str], str]:
    (tmp / "nodes.csv").write_text(NODES)
    path = tmp / name
    path.write_bytes(pods if isinstance(pods, bytes) else pods.encode())
    return ["openb", str(tmp / "nodes.csv"), str(path)], str(path)


def _one(tmp: Path, kind: str, name: str, data: bytes | str, *extra: str) -> tuple[list[str], str]:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return [kind, str(path), *extra], str(path)


def _cut_gz(text: str) -> bytes:
    data = gzip.compress(text.encode())
    return data[: len(data) - 12]  # the end of the deflate stream and the trailer are gone


CASES = {
    # openb
    "openb-truncated-line": (lambda t: _openb(t, POD_HEADER + POD + "p2,1000,10"), "3: pod p2: expected 11 columns (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time), found 3: truncated or malformed line"),
    "openb-truncated-gz": (lambda t: _openb(t, _cut_gz(POD_HEADER + POD * 1), name="pods.csv.gz"), "2: truncated gzip data: the file ends inside the compressed stream"),
    "openb-corrupt-gz": (lambda t: _openb(t, b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage!", name="pods.csv.gz"), None),
    "openb-invalid-utf8": (lambda t: _openb(t, (POD_HEADER + POD).encode() + b"p2,1000,1024,1,1000,,L\xffS,Running,5,100,10\n"), "3: not UTF-8 text: byte 0xff at column 23"),
    "openb-column-count": (lambda t: _openb(t, POD_HEADER + POD + "p2,1,1,0,0,,LS,Running,0,1,1,extra\n"), "3: pod p2: expected 11 columns (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time), found 12: truncated or malformed line"),
    "openb-non-numeric": (lambda t: _openb(t, POD_HEADER + "p1,lots,1024,1,1000,,LS,Running,0,100,10\n"), '2: pod p1: cpu_milli: Invalid value: "lots": must be an integer'),
    "openb-beyond-int64": (lambda t: _openb(t, POD_HEADER + f"p1,{BIG},1024,1,1000,,LS,Running,0,100,10\n"), f'2: pod p1: cpu_milli: Invalid value: "{BIG}": must be no more than 9223372036854775807'),
    "openb-memory-bytes-beyond-int64": (lambda t: _openb(t, POD_HEADER + "p1,1000,9000000000000000,1,1000,,LS,Running,0,100,10\n"), '2: pod p1: memory_mib: Invalid value: "9000000000000000": must be no more than 8796093022207'),
    "openb-huge-time": (lambda t: _openb(t, POD_HEADER + "p1,1000,1024,1,1000,,LS,Running,0,1e300,10\n"), '2: pod p1: deletion_time: Invalid value: "1e300": must be no more than 100 years'),
    "openb-bad-name": (lambda t: _openb(t, POD_HEADER + "Bad_Name,1000,1024,1,1000,,LS,Running,0,100,10\n"), "2: pod Bad_Name: name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
    "openb-bad-label": (lambda t: _openb(t, POD_HEADER + "p1,1000,1024,1,1000,,x y,Running,0,100,10\n"), "2: pod p1: qos: Invalid value: \"x y\": must be a label value: at most 63 characters, alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character"),
    # swf
    "swf-truncated-line": (lambda t: _one(t, "swf", "t.swf", SWF + JOB + "2 10 0 10"), "4: job 2: expected 18 whitespace-separated fields, found 4: truncated or malformed line"),
    "swf-truncated-gz": (lambda t: _one(t, "swf", "t.swf.gz", _cut_gz(SWF + JOB)), "3: truncated gzip data: the file ends inside the compressed stream"),
    "swf-invalid-utf8": (lambda t: _one(t, "swf", "t.swf", SWF.encode() + b"1 0 0 100 8 -1 -1 8 \xe9 -1 1 1 1 -1 1 1 -1 -1\n"), "3: not UTF-8 text: byte 0xe9 at column 21"),
    "swf-column-count": (lambda t: _one(t, "swf", "t.swf", SWF + JOB.strip() + " 7 7\n"), "3: job 1: expected 18 whitespace-separated fields, found 20: truncated or malformed line"),
    "swf-non-numeric": (lambda t: _one(t, "swf", "t.swf", SWF + JOB.replace(" 100 8 ", " 1h 8 ")), '3: job 1: field 4 (run time): Invalid value: "1h": must be a number'),
    "swf-beyond-int64": (lambda t: _one(t, "swf", "t.swf", SWF + JOB.replace("1 0 0 100", f"{BIG} 0 0 100", 1)), f'3: job {BIG}: field 1 (job number): Invalid value: "{BIG}": must be no more than 9223372036854775807'),
    "swf-huge-time": (lambda t: _one(t, "swf", "t.swf", SWF + JOB.replace("1 0 0 100", "1 1e300 0 100", 1)), '3: job 1: field 2 (submit time): Invalid value: "1e300": must be no more than 100 years'),
    "swf-too-many-pods": (lambda t: _one(t, "swf", "t.swf", SWF + JOB.replace(" 8 -1 -1 8 ", " 900000 -1 -1 8 "), "--pod-size", "1", "--cores-per-node", "8"), '3: job 1: processors (field 5 or 8): Invalid value: "900000": gives 900,000 pods: a job may have at most 100,000'),
    # gavel
    "gavel-truncated-line": (lambda t: _one(t, "gavel", "a.trace", GAVEL + "ResNet-50\tpython3", "--nodes", "2"), "2: vc-a/j1: expected 7 tab-separated columns, found 2: truncated or malformed line"),
    "gavel-truncated-gz": (lambda t: _one(t, "gavel", "a.trace", _cut_gz(GAVEL), "--nodes", "2"), "1: truncated gzip data: the file ends inside the compressed stream"),
    "gavel-invalid-utf8": (lambda t: _one(t, "gavel", "a.trace", b"ResNet\xff\tpython3 main.py\t--n\t1\t4000\t0\t1\n", "--nodes", "2"), "1: not UTF-8 text: byte 0xff at column 7"),
    "gavel-column-count": (lambda t: _one(t, "gavel", "a.trace", GAVEL.strip() + "\t9\n", "--nodes", "2"), "1: vc-a/j0: expected 7 tab-separated columns, found 8: truncated or malformed line"),
    "gavel-non-numeric": (lambda t: _one(t, "gavel", "a.trace", GAVEL.replace("\t0\t1\n", "\tsoon\t1\n"), "--nodes", "2"), '1: vc-a/j0: column 6 (arrival time): Invalid value: "soon": must be a number'),
    "gavel-beyond-int64": (lambda t: _one(t, "gavel", "a.trace", GAVEL.replace("\t4000\t", f"\t{BIG}\t"), "--nodes", "2"), f'1: vc-a/j0: column 5 (total steps): Invalid value: "{BIG}": must be no more than 9223372036854775807'),
    "gavel-huge-arrival": (lambda t: _one(t, "gavel", "a.trace", GAVEL.replace("\t0\t1\n", "\t1e300\t1\n"), "--nodes", "2"), '1: vc-a/j0: column 6 (arrival time): Invalid value: "1e300": must be no more than 100 years'),
    "gavel-huge-duration": (lambda t: _one(t, "gavel", "a.trace", GAVEL.replace("\t4000\t", "\t9000000000000\t"), "--nodes", "2", "--steps-per-second", "1"), '1: vc-a/j0: column 5 (total steps): Invalid value: "9000000000000": gives a time or duration over 100 years'),
    # kubectl
    "kubectl-truncated": (lambda t: _one(t, "kubectl", "c.yaml", KUBECTL[: KUBECTL.index("allocatable") + 20]), None),
    "kubectl-truncated-json": (lambda t: _one(t, "kubectl", "c.json", '{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node"'), None),
    "kubectl-invalid-utf8": (lambda t: _one(t, "kubectl", "c.yaml", KUBECTL.encode().replace(b"name: n1", b"name: n\xff1")), "6: not UTF-8 text"),
    "kubectl-beyond-int64": (lambda t: _one(t, "kubectl", "c.yaml", KUBECTL.replace("  spec:\n    containers:", f"  spec:\n    priority: {BIG}\n    containers:")), f'9: Pod default/p1: spec.priority: Invalid value: "{BIG}": must be a 64-bit integer'),
    "kubectl-quantity-beyond-int64": (lambda t: _one(t, "kubectl", "c.yaml", KUBECTL.replace('cpu: "8"', "cpu: 300000000000000000000Ti")), None),
    "kubectl-wrong-type": (lambda t: _one(t, "kubectl", "c.yaml", KUBECTL.replace('allocatable: {cpu: "8", memory: 32Gi}', "allocatable: [1, 2]")), None),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_bad_input_is_one_line_exit_2(case, tmp_path):
    build, expected = CASES[case]
    args, path = build(tmp_path)
    res = invoke("import", *args)
    assert res.exit_code == 2, (res.exit_code, res.output, res.exception)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"gangsim: error: {path}"), res.stderr
    assert "Traceback" not in res.output and len(res.stderr) < 400
    if expected is not None:
        assert res.stderr == f"gangsim: error: {path}:{expected}\n"
    # `run KIND:PATH` imports on the fly: the same error, exit 2
    if len(args) == 2:
        direct = invoke("run", f"{args[0]}:{args[1]}")
        assert direct.exit_code == 2 and path in direct.stderr and direct.stderr.count("\n") == 1, direct.output


def test_keyboard_interrupt_is_still_130(tmp_path, monkeypatch, capsys):
    from gangsim import cli
    from gangsim.load.importers import swf

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt
        yield  # a generator, like every importer

    monkeypatch.setattr(swf, "read", interrupted)
    args, _ = _one(tmp_path, "swf", "t.swf", SWF + JOB)
    monkeypatch.setattr(sys, "argv", ["gangsim", "import", *args])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 130
    assert "Traceback" not in capsys.readouterr().err


def test_truncated_gz_is_not_the_interrupt_path(tmp_path, monkeypatch, capsys):
    from gangsim import cli

    args, path = _openb(tmp_path, _cut_gz(POD_HEADER + "".join(POD.replace("p1", f"p{i}") for i in range(50))), name="pods.csv.gz")
    monkeypatch.setattr(sys, "argv", ["gangsim", "import", *args])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gangsim: error: {path}:") and "truncated gzip data" in err and "aborted" not in err


# --- round trip: whatever `import` writes, `run` accepts ---------------------------------------

FIXTURE_IMPORTS = {
    "openb": ["openb", str(FIXTURES / "openb")],
    "swf": ["swf", str(FIXTURES / "swf" / "tiny.swf")],
    "gavel": ["gavel", str(FIXTURES / "gavel")],
    "kubectl": ["kubectl", str(FIXTURES / "kubectl-cluster.yaml")],
}
REAL_IMPORTS = {
    "openb-default": ("alibaba-gpu-v2023-openb", "openb", [], ["--limit", "300"]),
    "openb-gpushare40": ("alibaba-gpu-v2023-openb", "openb", ["openb_pod_list_gpushare40.csv"], ["--limit", "300"]),
    "openb-multigpu50": ("alibaba-gpu-v2023-openb", "openb", ["openb_pod_list_multigpu50.csv"], ["--limit", "300"]),
    "swf-lublin": ("lublin-model-swf", "swf", ["lublin_256.swf"], ["--limit", "300"]),
    "swf-hpc2n": ("pwa-hpc2n-2002-head", "swf", ["hpc2n.swf"], ["--limit", "300"]),
    "swf-nasa-gz": ("pwa-nasa-ipsc-1993", "swf", ["NASA-iPSC-1993-3.1-cln.swf.gz"], ["--limit", "300"]),
    "swf-ricc-gz": ("pwa-ricc-2010", "swf", ["RICC-2010-2.swf.gz"], ["--limit", "300"]),
    "gavel-philly": ("microsoft-philly-partial", "gavel", ["gavel-per-vc-traces-seed0"], ["--limit", "300"]),
}


def _round_trip(tmp_path: Path, kind: str, sources: list[str], extra: list[str]) -> None:
    out = tmp_path / f"{kind}.jsonl"
    res = invoke("import", kind, *sources, *extra, "-o", str(out), "-q")
    assert res.exit_code == 0, res.output
    trace = load_trace([str(out)])
    assert trace is not None


@pytest.mark.parametrize("kind", list(FIXTURE_IMPORTS), ids=list(FIXTURE_IMPORTS))
def test_fixture_round_trip(kind, tmp_path):
    args = FIXTURE_IMPORTS[kind]
    _round_trip(tmp_path, args[0], args[1:], [])


@pytest.mark.parametrize("case", list(REAL_IMPORTS), ids=list(REAL_IMPORTS))
def test_real_trace_round_trip(case, tmp_path):
    folder, kind, files, extra = REAL_IMPORTS[case]
    root = dataset(folder)
    sources = [str(Path(root) / f) for f in files] if files else [root]
    if kind == "openb" and files:
        sources = [root, *sources]
    _round_trip(tmp_path, kind, sources, extra)
