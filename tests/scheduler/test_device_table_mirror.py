"""``DeviceTable.shares`` / ``units``: the per-row lists a bind picks and takes devices from
mirror the numpy ``free`` / ``per`` that Filter, Score and capacity read. A property over random
node (re)definitions (whole GPUs or a declared share, more or fewer GPUs, the table growing) and
random holds (pick, then take) and gives of whole and shared requests: after every step each row's
list is its numpy row, the columns past its last device stay -1, and ``hold`` takes what
``api.devices.pick`` picks over the numpy row."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.api.devices import pick
from gangsim.scheduler.cache.devices import DeviceTable
from gangsim.scheduler.framework.types import ResourceIndex
from tests.builders import make_node

SHARE = "alibaba.com/gpu-milli"
STEPS = st.lists(
    st.tuples(st.sampled_from(["node", "whole", "shared", "give"]), st.integers(0, 9), st.integers(0, 4), st.booleans()),
    max_size=50,
)


def _check(t: DeviceTable, rows: int) -> None:
    for row in range(rows):
        n = int(t.count[row])
        assert t.shares[row] == t.free[row, :n].tolist()
        assert t.units[row] == int(t.per[row])
        assert (t.free[row, n:] == -1).all()


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_the_lists_mirror_the_numpy_rows(steps: list[tuple[str, int, int, bool]]) -> None:
    resources = ResourceIndex(["nvidia.com/gpu", SHARE])
    t = DeviceTable(resources, capacity=1)
    rows = 0
    held: list[tuple[int, np.ndarray, tuple[int, ...]]] = []
    for op, k, gpus, shared_node in steps:
        if op == "node" or not rows:
            row = k % (rows + 1)
            if row == rows:
                rows += 1
                if rows > len(t.count):
                    t.grow(2 * rows)
            node = make_node(f"n{row}", cpu=8, gpus=gpus)
            if shared_node and gpus:
                node = replace(node, allocatable={**node.allocatable, SHARE: 1000 * gpus}, gpu_share=SHARE)
            held = [h for h in held if h[0] != row]  # (a redefined node starts with its devices free)
            t.set_node(row, node)
        elif op in ("whole", "shared"):
            row = k % rows
            ask = {"nvidia.com/gpu": 1 + gpus % 2} if op == "whole" else {SHARE: 100 * (1 + gpus)}
            demand = resources.vector(ask, pod=True)
            n = int(t.count[row])
            whole, shared = t.request(row, demand)
            expected = pick(t.free[row, :n].tolist(), int(t.per[row]), whole, shared) if whole or shared else ()
            before = t.free[row, :n].tolist()
            ids = t.hold(row, demand, None)  # (picks, then takes what it picked)
            assert ids == (expected or ())
            took = int(t.per[row]) if whole else shared
            assert t.free[row, :n].tolist() == [f - took if i in ids else f for i, f in enumerate(before)]
            if ids:
                held.append((row, demand, ids))
        elif held:
            row, demand, ids = held.pop(k % len(held))
            t.give(row, demand, ids)
        _check(t, rows)
