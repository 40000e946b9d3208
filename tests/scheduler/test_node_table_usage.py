"""``NodeTable.usage``: ``requested``, ``nonzero_requested`` and ``free`` are views of one array
so that a bind is one addition of the pod's ``usage_delta``. A property over random node adds
(the table growing past its capacity), updates, and assigns / unassigns of pods with random
requests: after every step each live row's ``requested`` and non-zero cpu / memory equal the sums
over the pods on it, ``free`` equals ``allocatable - requested``, and the three names still read
the table (not an array the growth left behind)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.scheduler.cache.node_table import NodeTable, usage_delta
from gangsim.scheduler.framework.types import ResourceIndex
from tests.builders import make_node

POD = st.tuples(st.integers(0, 4000), st.integers(0, 3), st.integers(0, 2))  # milli-cpu, GPUs, GiB
OPS = st.lists(st.tuples(st.sampled_from(["add", "update", "assign", "assign", "unassign"]), st.integers(0, 15), POD), max_size=50)
GI = 1 << 30


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_usage_views_sum_the_pods_on_each_row(ops: list[tuple[str, int, tuple[int, int, int]]]) -> None:
    nodes = NodeTable(ResourceIndex(["cpu", "memory", "pods", "nvidia.com/gpu"]), capacity=2)
    res = nodes.resources
    placed: dict[int, tuple[int, np.ndarray, int, int]] = {}  # uid -> row, demand, non-zero cpu, mem
    uid = 0
    for op, k, (cpu, gpus, mem) in ops:
        if op == "add" or not nodes.names:
            nodes.add_node(make_node(f"n{len(nodes.names)}", cpu=16, gpus=4, memory_gi=64))
        elif op == "update":
            name = nodes.names[k % len(nodes.names)]
            nodes.update_node(make_node(name, cpu=8 + k, gpus=4, memory_gi=32 + k))
        elif op == "assign":
            uid += 1
            row = int(nodes.order[k % len(nodes.order)])
            demand = res.vector({"cpu": cpu, "memory": mem * GI, "nvidia.com/gpu": gpus}, pod=True)
            nz_cpu, nz_mem = cpu or 100, mem * GI or 200 << 20
            nodes.assign(row, uid, object(), usage_delta(demand, nz_cpu, nz_mem))
            placed[uid] = (row, demand, nz_cpu, nz_mem)
        elif op == "unassign" and placed:
            victim = sorted(placed)[k % len(placed)]
            row, demand, nz_cpu, nz_mem = placed.pop(victim)
            nodes.unassign(row, victim, usage_delta(demand, nz_cpu, nz_mem))
        n = len(nodes.names)
        assert nodes.requested.base is nodes.usage and nodes.free.base is nodes.usage
        assert nodes.nonzero_requested.base is nodes.usage
        want = np.zeros((n, len(res)), dtype=np.int64)
        want_nz = np.zeros((n, 2), dtype=np.int64)
        for row, demand, nz_cpu, nz_mem in placed.values():
            want[row] += demand
            want_nz[row] += (nz_cpu, nz_mem)
        assert np.array_equal(nodes.requested[:n], want)
        assert np.array_equal(nodes.nonzero_requested[:n], want_nz)
        assert np.array_equal(nodes.free[:n], nodes.allocatable[:n] - want)
        assert not nodes.usage[n:].any()  # rows not yet used stay zero
