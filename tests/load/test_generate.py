"""`gangsim generate`: presets (mixed-day byte for byte), options, determinism, bad options."""

from __future__ import annotations

import json

import pytest

from gangsim.load.generate import PRESETS, generate, preset, to_jsonl, to_yaml
from tests.importers.conftest import ROOT, invoke, read_jsonl

MIXED_DAY = ROOT / "traces" / "mixed-day.yaml"


def test_mixed_day_preset_reproduces_the_bundled_trace():
    text = MIXED_DAY.read_text()
    header = text.split("\n", 3)
    assert all(line.startswith("#") for line in header[:3]) and header[3].startswith("---\n")
    res = invoke("generate", "--preset", "mixed-day")
    assert res.exit_code == 0, res.output
    assert res.stdout == header[3]
    assert to_yaml(generate(preset("mixed-day"))) == header[3]


def test_output_file_formats_and_determinism(tmp_path):
    a, b, y = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.yaml"
    for out in (a, b):
        assert invoke("generate", "--preset", "small", "--seed", "5", "-o", str(out)).exit_code == 0
    assert a.read_bytes() == b.read_bytes()  # -o *.jsonl picks JSON Lines
    assert invoke("generate", "--preset", "small", "--seed", "5", "-o", str(y)).exit_code == 0
    assert y.read_text().startswith("---\napiVersion: gangsim.dev/v1alpha1\nkind: Trace\n")
    from dataclasses import replace

    assert a.read_bytes() == to_jsonl(generate(replace(preset("small"), seed=5)))
    other = tmp_path / "o.jsonl"
    assert invoke("generate", "--preset", "small", "--seed", "6", "-o", str(other)).exit_code == 0
    assert other.read_bytes() != a.read_bytes()
    # both load and give the same replay
    sums = [json.loads(invoke("run", str(p), "--policy", "gang", "--format", "json").stdout) for p in (a, y)]
    assert sums[0]["gangs"] == sums[1]["gangs"] and sums[0]["gangs"]["total"] == 40


def test_options_shape_the_trace(tmp_path):
    out = tmp_path / "t.jsonl"
    res = invoke(
        "generate", "--pool", "gpu=40x8", "--pool", "t4=4x4,cpu=32,memory=256Gi,gpu=t4", "--jobs", "30", "--hours", "2",
        "--gang-sizes", "1:1,4:1", "--gpus-per-pod", "2:1", "--priority", "low=10:3", "--priority", "high=1000:1",
        "--duration-median", "20m", "--checkpoint-interval", "none", "--node-failures", "1", "--seed", "11", "--name", "plan", "-o", str(out),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    docs = read_jsonl(out)
    assert docs[0]["metadata"]["name"] == "plan"
    assert [(d["metadata"]["name"], d["value"]) for d in docs if d["kind"] == "PriorityClass"] == [("low", 10), ("high", 1000)]
    pools = [d for d in docs if d["kind"] == "NodePool"]
    assert [(p["metadata"]["name"], p["spec"]["count"]) for p in pools] == [("gpu", 40), ("t4", 4)]
    assert pools[1]["spec"]["template"] == {"status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "4"}}, "metadata": {"labels": {"gpu": "t4"}}}
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert len(jobs) == 30 and {j["spec"]["parallelism"] for j in jobs} <= {1, 4}
    assert all("gangsim.dev/checkpoint-interval" not in j["metadata"]["annotations"] for j in jobs)
    assert {j["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] for j in jobs} == {"2"}
    assert len(docs[-1]["events"]) == 1 and docs[-1]["events"][0]["delete"]["name"].startswith("gpu-")
    assert invoke("run", str(out), "--policy", "pod", "--format", "json").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "huge"], "--preset: unknown preset 'huge'"),
        (["--pool", "gpu=40"], "--pool: Invalid value: 'gpu=40'"),
        (["--pool", "gpu=4x8,cpu=many"], "cpu must be an integer"),
        (["--gang-sizes", "0:1"], "--gang-sizes: Invalid value: '0:1'"),
        (["--priority", "Prod=1"], "--priority: Invalid value: 'Prod=1'"),
        (["--duration-median", "soon"], "--duration-median: Invalid value: 'soon'"),
        (["--pool", "cpu=4x0"], "at least one pool with GPUs"),
    ],
)
def test_bad_options_exit_2(args, message):
    res = invoke("generate", *args)
    assert res.exit_code == 2
    assert message in res.stderr and res.stderr.count("\n") == 1, res.stderr
    assert res.stdout == ""


def test_every_preset_is_listed_and_loads(tmp_path):
    res = invoke("generate", "--list-presets")
    assert res.exit_code == 0 and all(name in res.stdout for name in PRESETS)
    from gangsim.load import load_trace

    for name in ("small", "gang-heavy"):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(to_jsonl(generate(preset(name))))
        assert load_trace([path]).events
    # benchmark-basic is big: count its jobs without loading
    assert sum(1 for d in generate(preset("benchmark-basic")) if d["kind"] == "Job") == 10_000

