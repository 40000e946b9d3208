"""Input limits (``gangsim.load.limits``): types and ranges of every number the loader reads,
checked before anything is expanded, with the same located line from ``run`` and ``validate``;
values echoed in messages are cut (issue 17, items 1 and 3)."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from gangsim.api.objects import Source
from gangsim.cli import app
from gangsim.errors import ERROR_PREFIX, MAX_LINE_CHARS, InputError, cut, fit, invalid
from gangsim.load.fields import SUBDOMAIN_MSG
from gangsim.load.decode import Decoder, Warnings
from gangsim.load.limits import (
    MAX_DURATION_MS,
    MAX_INT64,
    MAX_NODES_PER_POOL,
    MAX_PODS_PER_JOB,
    check_count,
    check_duration_ms,
    check_quantity_int64,
)
from gangsim.load.priority import Priorities

runner = CliRunner()

NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", memory: 8Gi}}\n---\n'  # 5 lines


def pod(requests: str, *, containers: int = 1, annotations: str = "") -> str:
    ann = f", annotations: {{{annotations}}}" if annotations else ""
    body = "".join(f"  - name: c{i}\n    resources: {{requests: {requests}}}\n" for i in range(containers))
    return NODE + f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{ann}}}\nspec:\n  containers:\n{body}"


def job(parallelism: str, key: str = "parallelism") -> str:
    return NODE + f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  {key}: {parallelism}\n  template:\n    spec:\n      containers: [{{name: c}}]\n"


def pool(count: str) -> str:
    return f'apiVersion: gangsim.dev/v1alpha1\nkind: NodePool\nmetadata: {{name: pool}}\nspec:\n  count: {count}\n  template:\n    status: {{allocatable: {{cpu: "4"}}}}\n'


def node(extra: str) -> str:
    return f'apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: "4", {extra}}}}}\n'


REQ = "spec.containers[0].resources.requests"
INT64 = f"must be no more than {MAX_INT64}"

# (trace text, where, object, field error) — run prints "gangsim: error: where: obj: detail" (exit 2),
# validate "where: error: obj: detail [invalid]" (exit 1: validate's "errors found").
CASES = [
    pytest.param(pod("{cpu: [1, 2]}"), "t.yaml:12", "Pod default/p", f"{REQ}[cpu]: Invalid value: [1,2]: quantities must be strings or numbers", id="quantity-list"),
    pytest.param(pod("{memory: {a: 1}}"), "t.yaml:12", "Pod default/p", f'{REQ}[memory]: Invalid value: {{"a":1}}: quantities must be strings or numbers', id="quantity-map"),
    pytest.param(pod("{cpu: true}"), "t.yaml:12", "Pod default/p", f"{REQ}[cpu]: Invalid value: true: quantities must be strings or numbers", id="quantity-bool"),
    pytest.param(pod("{cpu: '" + "1" * 65 + "'}"), "t.yaml:12", "Pod default/p", f'{REQ}[cpu]: Invalid value: "{"1" * 65}": quantities must be no more than 64 characters', id="quantity-too-long"),
    pytest.param(node('nvidia.com/gpu: "300000000000000000000Ti"'), "t.yaml:4", "Node n1", f'status.allocatable[nvidia.com/gpu]: Invalid value: "300000000000000000000Ti": {INT64} units (int64)', id="gpu-overflow"),
    pytest.param(pod("{cpu: 9223372036854775808m}"), "t.yaml:12", "Pod default/p", f'{REQ}[cpu]: Invalid value: "9223372036854775808m": {INT64} millicores (int64)', id="cpu-int64-plus-1"),
    pytest.param(pod("{cpu: '9223372036854776'}"), "t.yaml:12", "Pod default/p", f'{REQ}[cpu]: Invalid value: "9223372036854776": {INT64} millicores (int64)', id="cpu-cores-overflow-millicores"),
    pytest.param(pod("{memory: '9223372036854775808'}"), "t.yaml:12", "Pod default/p", f'{REQ}[memory]: Invalid value: "9223372036854775808": {INT64} bytes (int64)', id="memory-int64-plus-1"),
    pytest.param(pod("{memory: 8Ei}"), "t.yaml:12", "Pod default/p", f'{REQ}[memory]: Invalid value: "8Ei": {INT64} bytes (int64)', id="memory-8Ei"),
    pytest.param(pod("{memory: '4611686018427387904'}", containers=2), "t.yaml:10", "Pod default/p", f"spec.containers: Invalid value: the pod's total memory request {INT64} (int64)", id="memory-sum-overflow"),
    pytest.param(job("1.0e+308"), "t.yaml:10", "Job default/j", "spec.parallelism: Invalid value: 1e+308: must be an integer between 0 and 100000", id="parallelism-1e308"),
    pytest.param(job("3.0"), "t.yaml:10", "Job default/j", "spec.parallelism: Invalid value: 3.0: must be an integer between 0 and 100000", id="parallelism-float"),
    pytest.param(job('"3"'), "t.yaml:10", "Job default/j", 'spec.parallelism: Invalid value: "3": must be an integer between 0 and 100000', id="parallelism-string"),
    pytest.param(job("-1"), "t.yaml:10", "Job default/j", "spec.parallelism: Invalid value: -1: must be an integer between 0 and 100000", id="parallelism-negative"),
    pytest.param(job("100001"), "t.yaml:10", "Job default/j", "spec.parallelism: Invalid value: 100001: must be an integer between 0 and 100000", id="parallelism-max-plus-1"),
    pytest.param(job("100001", "completions"), "t.yaml:10", "Job default/j", "spec.completions: Invalid value: 100001: must be an integer between 0 and 100000", id="completions-max-plus-1"),
    pytest.param(pool("1.0e+308"), "t.yaml:5", "NodePool pool", "spec.count: Invalid value: 1e+308: must be an integer between 0 and 100000", id="pool-count-1e308"),
    pytest.param(pool("100000000"), "t.yaml:5", "NodePool pool", "spec.count: Invalid value: 100000000: must be an integer between 0 and 100000", id="pool-count-1e8"),
    pytest.param(pool("100001"), "t.yaml:5", "NodePool pool", "spec.count: Invalid value: 100001: must be an integer between 0 and 100000", id="pool-count-max-plus-1"),
    pytest.param(pool("2.0"), "t.yaml:5", "NodePool pool", "spec.count: Invalid value: 2.0: must be an integer between 0 and 100000", id="pool-count-float"),
    pytest.param(pod("{}", annotations=f'gangsim.dev/duration: "{MAX_DURATION_MS // 1000 + 1}"'), "t.yaml:8", "Pod default/p", f'metadata.annotations[gangsim.dev/duration]: Invalid value: "{MAX_DURATION_MS // 1000 + 1}": must be no more than 100 years', id="duration-max-plus-1s"),
    pytest.param(pod("{}", annotations="gangsim.dev/duration: 36501d"), "t.yaml:8", "Pod default/p", 'metadata.annotations[gangsim.dev/duration]: Invalid value: "36501d": must be no more than 100 years', id="duration-days"),
    pytest.param(pod("{}", annotations="gangsim.dev/duration: 1e999999999"), "t.yaml:8", "Pod default/p", 'metadata.annotations[gangsim.dev/duration]: Invalid value: "1e999999999": exponent out of range', id="duration-huge-exponent"),
    pytest.param(pod("{}", annotations="gangsim.dev/duration: '" + "9" * 5000 + "'"), "t.yaml:8", "Pod default/p", f'metadata.annotations[gangsim.dev/duration]: Invalid value: "{"9" * 79}…": durations must be no more than 64 characters', id="duration-5000-digits"),
    pytest.param(pod("{cpu: " + "x" * 500 + "}"), "t.yaml:12", "Pod default/p", f'{REQ}[cpu]: Invalid value: "{"x" * 79}…": quantities must be no more than 64 characters', id="long-value-cut"),
    pytest.param(
        NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {terminationGracePeriodSeconds: 30.0, containers: [{name: c}]}\n", "t.yaml:9", "Pod default/p",
        "spec.terminationGracePeriodSeconds: Invalid value: 30.0: must be an integer", id="integer-field-float",
    ),
    pytest.param(
        NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {terminationGracePeriodSeconds: " + "9" * 30 + ", containers: [{name: c}]}\n", "t.yaml:9", "Pod default/p",
        f"spec.terminationGracePeriodSeconds: Invalid value: {'9' * 30}: must be less than or equal to {MAX_INT64}", id="integer-field-beyond-int64",
    ),
    pytest.param(
        node('nvidia.com/gpu: "600000"') + "---\n" + node('nvidia.com/gpu: "600000"').replace("n1", "n2"), "t.yaml:6", "Node n2",
        'status.allocatable[nvidia.com/gpu]: Invalid value: 600000: the cluster would have 1,200,000 GPUs at 0s: gangsim replays at most 1,000,000', id="cluster-gpus",
    ),
    pytest.param(
        NODE + "apiVersion: v1\nkind: Pod\nmetadata: {name: " + "a" * 1_000_000 + "}\nspec: {containers: [{name: c}]}\n", "t.yaml:8", "Pod default/" + "a" * 67 + "…",
        f'metadata.name: Invalid value: "{"a" * 79}…": must be no more than 253 characters', id="long-name-cut",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("text", "where", "obj", "detail"), CASES)
def test_run_and_validate_give_the_same_located_line(text, where, obj, detail, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(text)
    res = runner.invoke(app, ["run", "t.yaml", "--out", "out"])
    assert res.exit_code == 2, (res.stderr, res.exception)
    assert res.stderr == f"gangsim: error: {where}: {obj}: {detail}\n"
    assert len(res.stderr) < 400
    assert not (tmp_path / "out").exists()
    res = runner.invoke(app, ["validate", "t.yaml"])
    assert res.exit_code == 1, (res.stdout, res.exception)
    assert res.stdout.splitlines() == [f"{where}: error: {obj}: {detail} [invalid]", "1 error, 0 warnings"]


# --- the boundaries: the maximum is accepted ------------------------------------------------------


def decode(text: str):
    raw = yaml.safe_load(text.split("---\n")[-1])
    return Decoder(Priorities(), Warnings()).decode(raw, Source("t.yaml", 1))


def test_max_parallelism_is_accepted():
    assert decode(job(str(MAX_PODS_PER_JOB))).obj.parallelism == MAX_PODS_PER_JOB


def test_max_pool_count_is_accepted():
    assert decode(pool(str(MAX_NODES_PER_POOL))).obj.count == MAX_NODES_PER_POOL


@pytest.mark.parametrize(
    ("requests", "resource", "amount"),
    [
        pytest.param("{cpu: 9223372036854775807m}", "cpu", MAX_INT64, id="cpu-millicores"),
        pytest.param("{memory: '9223372036854775807'}", "memory", MAX_INT64, id="memory-bytes"),
        pytest.param("{example.com/foo: '9223372036854775807'}", "example.com/foo", MAX_INT64, id="extended"),
    ],
)
def test_max_int64_quantity_is_accepted(requests, resource, amount):
    assert decode(pod(requests)).obj.spec.requests[resource] == amount


def test_max_duration_is_accepted():
    ms = MAX_DURATION_MS
    assert decode(pod("{}", annotations=f'gangsim.dev/duration: "{ms // 1000}"')).obj.spec.duration_ms == ms


# --- the helpers the importers use ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param(0, True, id="zero"),
        pytest.param(10, True, id="max"),
        pytest.param(11, False, id="max-plus-1"),
        pytest.param(-1, False, id="negative"),
        pytest.param(3.0, False, id="float"),
        pytest.param(True, False, id="bool"),
        pytest.param("3", False, id="string"),
        pytest.param(None, False, id="null"),
    ],
)
def test_check_count(value, ok):
    if ok:
        assert check_count(value, "f", 10) == value
    else:
        with pytest.raises(InputError) as err:
            check_count(value, "spec.f", 10, line=3)
        assert err.value.line == 3
        assert str(err.value).startswith("spec.f: Invalid value: ") and str(err.value).endswith(": must be an integer between 0 and 10")


def test_check_quantity_and_duration_helpers():
    assert check_quantity_int64("cpu", "1500m", "f") == 1500
    assert check_quantity_int64("memory", 1, "f") == 1
    with pytest.raises(InputError, match=r'^f: Invalid value: "8Ei": must be no more than 9223372036854775807 bytes \(int64\)$'):
        check_quantity_int64("memory", "8Ei", "f")
    with pytest.raises(InputError, match=r"^f: Invalid value: \[1\]: quantities must be strings or numbers$"):
        check_quantity_int64("cpu", [1], "f")
    assert check_duration_ms(MAX_DURATION_MS, "f") == MAX_DURATION_MS
    with pytest.raises(InputError, match="^f: Invalid value: 3153600000001: must be no more than 100 years$"):
        check_duration_ms(MAX_DURATION_MS + 1, "f")


def test_cut_and_the_whole_line_cap():
    assert cut("x" * 80) == "x" * 80
    assert cut("x" * 81) == "x" * 79 + "…"
    long_field = "spec." + "k" * 5000
    line = str(InputError(f"{long_field}: Unsupported value", file="t.yaml", line=1))
    assert len(ERROR_PREFIX + line) == MAX_LINE_CHARS == 300 and line.endswith("…")


def test_fit_cuts_the_value_further_before_the_rule():
    # a 10,000-character label key under a long field path: the value gives way, the rule stays whole
    path = "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key"
    err = InputError(invalid(path, "x" * 10_000, "name part must be no more than 63 characters"), file="trace.yaml", line=285, obj="Job ml/train")
    line = ERROR_PREFIX + str(err)
    assert len(line) <= 300
    assert line.endswith('…": name part must be no more than 63 characters')
    assert line.startswith(f"gangsim: error: trace.yaml:285: Job ml/train: {path}: Invalid value: \"xxx")


def test_fit_drops_the_regex_hint_only_when_the_line_is_too_long():
    percent = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
    short = InputError(invalid("spec.maxUnavailable", "x", percent), file="t.yaml", line=3, obj="PodDisruptionBudget ml/a")
    assert str(short) == f't.yaml:3: PodDisruptionBudget ml/a: spec.maxUnavailable: Invalid value: "x": {percent}'  # apimachinery's text, whole
    long = InputError(invalid("metadata.name", "x" * 300, SUBDOMAIN_MSG), file="/tmp/some/long/dir/trace.yaml", line=3, obj="PodGroup ml/" + "x" * 300)
    line = ERROR_PREFIX + str(long)
    assert len(line) <= 300
    assert line.endswith("must start and end with an alphanumeric character")
    assert "regex" not in line


def test_fit_of_plain_text_and_tiny_budgets():
    assert fit("ok", 10) == "ok"
    assert fit("a\nb", 10) == "a b"
    assert fit("x" * 50, 10) == "x" * 9 + "…"
    assert fit("bad (e.g. 'a', regex used for validation is 'b')", 5) == "bad"
