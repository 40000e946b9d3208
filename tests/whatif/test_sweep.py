"""`gangsim sweep`: grid expansion, one row per run, the same table from every backend."""

import importlib.util

import polars as pl
import pytest

from cli_kit import DEADLOCK, invoke
from gangsim.report.diff import metric_keys

from .kit import write_two_pools

GRID = ["--trace", DEADLOCK, "--policy", "gang", "--policy", "pod", "--seed", "none", "--seed", "3", "--pool", "gpu=20,32"]


def sweep(tmp_path, name: str, *args: str) -> pl.DataFrame:
    out = tmp_path / f"{name}.parquet"
    res = invoke("sweep", *GRID, "-o", str(out), "-o", str(tmp_path / f"{name}.csv"), "--no-progress", *args)
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return pl.read_parquet(out)


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serial")
    return tmp, sweep(tmp, "serial", "--jobs", "1")


def test_one_row_per_run_in_grid_order(serial):
    _, table = serial
    assert table.height == 8
    assert table.columns[:7] == ["run", "trace", "config", "policy", "seed", "pool.gpu", "trace_name"]
    assert table.columns[7:] == list(metric_keys())
    assert table.get_column("run").to_list() == list(range(8))
    assert table.select("policy", "seed", "pool.gpu").rows() == [
        ("gang", None, 20), ("gang", None, 32), ("gang", 3, 20), ("gang", 3, 32),
        ("pod", None, 20), ("pod", None, 32), ("pod", 3, 20), ("pod", 3, 32),
    ]  # fmt: skip
    assert table.schema["gangs.started"] == pl.Int64 and table.schema["gpu.stranded_s"] == pl.Float64
    # 32 nodes = 128 GPUs run both 64-GPU jobs at once under every policy
    big = table.filter(pl.col("pool.gpu") == 32)
    assert big.get_column("gangs.wait_max_s").to_list() == [63.0] * 4
    assert table.filter(pl.col("pool.gpu") == 20).get_column("gpu.capacity_s").unique().to_list() == [20 * 4 * 21600.0]


def test_process_pool_gives_the_same_table(serial, tmp_path):
    tmp, table = serial
    pooled = sweep(tmp_path, "pool", "--jobs", "2")
    assert pooled.equals(table)
    assert (tmp_path / "pool.csv").read_bytes() == (tmp / "serial.csv").read_bytes()
    assert (tmp_path / "pool.parquet").read_bytes() == (tmp / "serial.parquet").read_bytes()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed (pip install 'gangsim[ray]')")
def test_ray_backend_gives_the_same_table(serial, tmp_path):
    tmp, table = serial
    on_ray = sweep(tmp_path, "ray", "--backend", "ray")
    assert on_ray.equals(table)
    assert (tmp_path / "ray.csv").read_bytes() == (tmp / "serial.csv").read_bytes()


def test_ray_missing_is_a_usage_error(monkeypatch):
    import gangsim.whatif.sweep

    monkeypatch.setattr(gangsim.whatif.sweep, "ray_available", lambda: False)
    res = invoke("sweep", "--trace", DEADLOCK, "--backend", "ray")
    assert res.exit_code == 2
    assert res.stderr == "gangsim: error: --backend ray needs Ray: pip install 'gangsim[ray]'\n"


def test_grid_file_with_relative_paths_and_cli_override(tmp_path):
    trace = write_two_pools(tmp_path)
    (tmp_path / "grid.yaml").write_text(
        "traces: [two-pools.yaml]\n"
        "policies: [gang, pod+no-batching]\n"
        "pools: {big: '2..3', small: [4]}\n"
        "horizon: 3h\n"
    )
    res = invoke("sweep", "--grid", str(tmp_path / "grid.yaml"), "--format", "csv", "--jobs", "1")
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("run,trace,config,policy,seed,pool.big,pool.small,trace_name,horizon_s,")
    rows = [line.split(",")[:9] for line in lines[1:]]
    assert rows == [
        ["0", trace, "", "gang", "", "2", "4", "two-pools", "10800.0"],
        ["1", trace, "", "gang", "", "3", "4", "two-pools", "10800.0"],
        ["2", trace, "", "pod+no-batching", "", "2", "4", "two-pools", "10800.0"],
        ["3", trace, "", "pod+no-batching", "", "3", "4", "two-pools", "10800.0"],
    ]
    res = invoke("sweep", "--grid", str(tmp_path / "grid.yaml"), "--policy", "permit", "--jobs", "1")
    assert res.exit_code == 0
    assert "sweep: 2 runs" in res.stdout and "permit" not in res.stdout.split("sweep: 2 runs")[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(["--pool", "gpu=1,x"], "--pool gpu: bad size 'x'", id="bad-size"),
        pytest.param(["--pool", "tpu=4"], "--pool 'tpu': the trace has no NodePool of that name", id="unknown-pool"),
        pytest.param(["--policy", "gang+fast"], "unknown variant 'fast'", id="bad-variant"),
        pytest.param(["-o", "out.json"], "-o out.json: the file name must end in .parquet or .csv", id="bad-output"),
        pytest.param(["--seed", "x"], "--seed 'x'", id="bad-seed"),
    ],
)
def test_sweep_bad_input_exits_2_before_running(args, needle):
    res = invoke("sweep", "--trace", DEADLOCK, *args)
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert needle in res.stderr and res.stderr.count("\n") == 1


def test_bad_grid_file(tmp_path):
    (tmp_path / "g.yaml").write_text("traces: [a.yaml]\npolicy: [gang]\n")
    res = invoke("sweep", "--grid", str(tmp_path / "g.yaml"))
    assert res.exit_code == 2
    assert "g.yaml: policy: Unsupported field" in res.stderr
