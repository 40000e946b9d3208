"""``NodeTable.live_generation``: ``fastpath.doomed.kept`` reads it instead of the max over the
live rows' generations while no node came or went. A property over random add/update/remove of
nodes and assign/unassign of pods (on live rows and on rows whose node was removed): for every
earlier generation ``g`` taken at the current ``static_generation``, a live row changed since
``g`` exactly when ``live_generation > g``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gangsim.scheduler.cache.node_table import NodeTable, usage_delta
from gangsim.scheduler.framework.types import ResourceIndex
from tests.builders import make_node

OPS = st.lists(st.tuples(st.sampled_from(["add", "update", "remove", "assign", "unassign"]), st.integers(0, 7)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_live_generation_says_whether_a_live_row_changed(ops: list[tuple[str, int]]) -> None:
    nodes = NodeTable(ResourceIndex(["cpu"]), capacity=4)
    delta = usage_delta(nodes.resources.vector({"cpu": 1000}, pod=True), 1000, 0)
    placed: dict[int, int] = {}  # uid -> row
    marks: list[tuple[int, int]] = []  # (generation, static_generation) seen so far
    uid = 0
    for op, k in ops:
        names = nodes.names
        if op == "add" or not names:
            nodes.add_node(make_node(f"n{len(names)}", cpu=8))
        elif op == "update":
            live = list(nodes.row_of)
            nodes.update_node(make_node(live[k % len(live)], cpu=4 + k))
        elif op == "remove":
            live = list(nodes.row_of)
            if len(live) > 1:
                nodes.remove_node(live[k % len(live)])
        elif op == "assign" and len(nodes.order):
            uid += 1
            row = int(nodes.order[k % len(nodes.order)])
            nodes.assign(row, uid, object(), delta)
            placed[uid] = row
        elif op == "unassign" and placed:  # (also on a row whose node was removed since)
            victim = sorted(placed)[k % len(placed)]
            nodes.unassign(placed.pop(victim), victim, delta)
        marks.append((nodes.generation, nodes.static_generation))
        order = nodes.order
        for g, static in marks:
            if static != nodes.static_generation or not len(order):
                continue
            changed = int(np.max(nodes.row_generation[order])) > g
            assert changed == (nodes.live_generation > g), (op, g, nodes.live_generation)
