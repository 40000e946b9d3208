"""A single-shape PodGroup pass in which every pod finds a node, replayed from counts.

Under KEP-5732 a PodGroup cycle runs the pass once per placement and keeps one; a gang of 128
on 40 empty blocks would run 40 passes pod by pod. When ``doomed.feasible`` knows each feasible
row's capacity, the rows can hold every queued pod, and each row's total score with 0, 1, … of
the group's pods on it is its own (``rotation.row_keys``), the pass is fixed: pod i in pod order
takes the row the i-th search of ``rotation.replay`` takes, and PlacementFeasible's verdicts
depend on the counts alone. The caller runs those verdicts; ``layout`` says whether the pass
can be replayed and ``doomed.searches`` replays it. Kept per search like the doomed plans.

Without a placement (``FastPath.counted_pass``) the same replay places a successful gang of an
HPC log, whose pods each take a whole node, without a Filter and Score pass per pod; on a cluster
of ``MAX_ROWS`` nodes or more, ``windows`` replays only the windows the pass's searches reach
(``FastPath.counted_windows``).
"""

from __future__ import annotations

from gangsim.scheduler.fastpath import doomed, rotation, windows
from gangsim.scheduler.framework.types import NO_NODE, PodInfo


MAX_ROWS = 1024  # without a placement, try only clusters of fewer nodes (``layout``)


Replay = rotation.Layout | windows.Windows


def layout(fw: doomed.Runner, pods: list[PodInfo], *, big: bool = False) -> Replay | None:
    """How the pass can be replayed when every one of ``pods`` (one signature, none nominated)
    finds a node: its ``rotation.Layout``, or its ``windows.Windows``; None otherwise.

    Without a KEP-5732 placement (``FastPath.counted_pass``) the search runs over every node:
    a big cluster's rows mostly take several pods each, which ``rotation.row_keys`` would have
    to score with tentative pods, so a layout is tried only on clusters of fewer than
    ``MAX_ROWS`` nodes, where looking costs little (whole-node pods on an HPC cluster: each row
    takes one pod, nothing to rescore); on bigger ones, with ``big``
    (``FastPath.counted_windows``), only the windows the searches reach."""
    signature = pods[0].signature
    if not signature or any(p.signature != signature or p.nominated_row != NO_NODE for p in pods):
        return None
    if fw.placement is None:  # a successful gang binds: its layout will not come again, so none is kept
        if len(fw.snapshot.nodes.order) < MAX_ROWS:
            return _layout(fw, pods, kept=False)
        return windows.plan(fw, pods) if big else None
    return doomed.kept(fw, pods, ("counted",), lambda: _layout(fw, pods))


def searches(fw: doomed.Runner, replay: Replay, count: int) -> list[int]:
    """The rows the first ``count`` searches of the replayed pass take, in order; the search
    state moves as theirs would."""
    if isinstance(replay, windows.Windows):
        return windows.searches(fw, replay, count)
    return doomed.searches(fw, replay, count)


def _layout(fw: doomed.Runner, pods: list[PodInfo], *, kept: bool = True) -> rotation.Layout | None:
    found = doomed.feasible(fw, pods, len(pods))
    if found is None:
        return None
    entry, positions, rows, per_row = found
    if int(per_row.sum()) < len(pods):
        return None  # some pod fails: the doomed pass's or the pod-by-pod pass's
    keys = rotation.row_keys(fw, entry, pods, rows, per_row)
    return None if keys is None else rotation.Layout(positions.tolist(), keys, kept=kept)
