"""`gangsim import` plumbing shared by every importer: output formats, atomic output, usage
errors, and `KIND:PATH` direct loading."""

from __future__ import annotations

import json

from tests.importers.conftest import invoke, read_jsonl

SWF = "; MaxNodes: 2\n; MaxProcs: 16\n" + "".join(
    f"{i} {i * 10} 0 {100 + i} {p} -1 -1 -1 3600 -1 1 1 1 -1 1 1 -1 -1\n" for i, p in enumerate([12, 4, 16, 1], start=1)
)


def _swf(tmp_path):
    path = tmp_path / "tiny.swf"
    path.write_text(SWF)
    return path


def test_yaml_output_replays_like_jsonl(tmp_path):
    path = _swf(tmp_path)
    j, y = tmp_path / "t.jsonl", tmp_path / "t.yaml"
    assert invoke("import", "swf", str(path), "-o", str(j), "--cancelled", "delete").exit_code == 0
    assert invoke("import", "swf", str(path), "-o", str(y)).exit_code == 0
    text = y.read_text()
    assert text.startswith("---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata:\n  name: tiny\n")
    assert "gangsim.dev/arrival: 10s" in text
    runs = [invoke("run", str(p), "--policy", "gang", "--format", "json") for p in (j, y)]
    assert all(r.exit_code == 0 for r in runs), [r.output for r in runs]
    assert json.loads(runs[0].stdout)["gangs"] == json.loads(runs[1].stdout)["gangs"]
    direct = invoke("run", f"swf:{path}", "--policy", "gang", "--format", "json")
    assert json.loads(direct.stdout)["gangs"] == json.loads(runs[0].stdout)["gangs"]


def test_stdout_and_summary(tmp_path):
    res = invoke("import", "swf", str(_swf(tmp_path)))
    assert res.exit_code == 0
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert lines[0]["kind"] == "Trace" and len(lines) == 2 + 3 + 1 + 2 + 1  # header, pool, j1 (PG + 2 Jobs), j2, j3 (PG + Job), j4
    assert "imported swf: 2 nodes, 16 processors, 4 jobs, 6 pods -> stdout (9 lines" in res.stderr
    quiet = invoke("import", "swf", str(_swf(tmp_path)), "-q")
    assert quiet.stderr == "" and quiet.stdout == res.stdout


def test_usage_errors(tmp_path):
    res = invoke("import", "parquet", "x")
    assert res.exit_code == 2
    res = invoke("import", "swf", str(tmp_path / "missing.swf"))
    assert res.exit_code == 2 and "missing.swf: no such file or directory" in res.stderr.lower()
    res = invoke("import", "swf", str(_swf(tmp_path)), "-o", str(tmp_path / "nodir" / "t.jsonl"))
    assert res.exit_code == 2 and "no such directory" in res.stderr
    res = invoke("import", "openb", str(_swf(tmp_path)))
    assert res.exit_code == 2 and "not an openb node list" in res.stderr
    res = invoke("import", "swf", str(_swf(tmp_path)), "--priority", "1")
    assert res.exit_code == 2 and "--priority: Invalid value: '1': expected KEY=INTEGER" in res.stderr


def test_existing_output_is_kept_when_the_import_fails(tmp_path):
    out = tmp_path / "t.jsonl"
    out.write_text("previous\n")
    bad = tmp_path / "bad.swf"
    bad.write_text(SWF + "5 50 0 10\n")
    res = invoke("import", "swf", str(bad), "-o", str(out))
    assert res.exit_code == 2 and "bad.swf:7: job 5: expected 18" in res.stderr
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.swf", "t.jsonl"]


def test_direct_loading_errors_name_the_source(tmp_path):
    res = invoke("run", f"swf:{tmp_path}/none.swf")
    assert res.exit_code == 2 and "none.swf: swf import: no such file or directory" in res.stderr
    bad = tmp_path / "bad.swf"
    bad.write_text(SWF.replace(" 16 -1 -1 -1 3600", " -16 -1 -1 -1 3600"))
    res = invoke("run", f"swf:{bad}")
    assert res.exit_code == 2
    assert 'bad.swf:5: job 3: field 5 (allocated processors): Invalid value: "-16": must be positive' in res.stderr
    res = invoke("validate", f"swf:{bad}")  # validate reports it as a finding
    assert res.exit_code == 1 and 'bad.swf:5: error: job 3: field 5 (allocated processors)' in res.stdout
    # a real file whose name looks like KIND:PATH is read as a file
    odd = tmp_path / "swf:x.jsonl"
    odd.write_text('{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"1"}}}\n')
    res = invoke("run", str(odd), "--format", "json")
    assert res.exit_code == 0, res.output
    assert read_jsonl(odd)[0]["kind"] == "Node"
