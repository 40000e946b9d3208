"""The PodGroup cycles grid's wall-time row: nearest-rank p50 / p99 and the max of the
algorithm's per-attempt times, kept by the replay as doubles in an ``array`` (a congested log
times millions of attempts) and read the same from a plain list."""

from __future__ import annotations

from array import array

import pytest

from gangsim.report.summary import podgroup_cycles_grid

SUMMARY = {"scheduler": {"podgroup_attempts_scheduled": 2, "podgroup_attempts_unschedulable": 198}}


def wall_row(timings) -> tuple[str, ...] | None:
    grid = podgroup_cycles_grid(SUMMARY, timings)
    assert grid is not None
    rows = [r for r in grid.rows if r[0].startswith("algorithm wall time")]
    return rows[0] if rows else None


@pytest.mark.parametrize("kind", [list, lambda v: array("d", v)], ids=["list", "array"])
def test_nearest_rank_percentiles_in_milliseconds(kind):
    # 200 samples 0.001 s .. 0.200 s, shuffled: p50 is the 100th smallest, p99 the 198th
    samples = [((i * 37) % 200 + 1) / 1000 for i in range(200)]
    assert wall_row({"podgroup_algorithm_s": kind(samples)}) == ("algorithm wall time p50 / p99 / max", "100.00 / 198.00 / 200.00 ms")


def test_one_sample_is_every_percentile():
    assert wall_row({"podgroup_algorithm_s": array("d", [0.00123])}) == ("algorithm wall time p50 / p99 / max", "1.23 / 1.23 / 1.23 ms")


def test_no_samples_no_row():
    assert wall_row({}) is None
    assert wall_row({"podgroup_algorithm_s": array("d")}) is None
