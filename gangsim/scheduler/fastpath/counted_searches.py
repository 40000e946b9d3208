"""Pod-by-pod cycles of one shape where every pod finds a node, replayed from counts
(``FastPath.counted_searches``, issue 16: NASA under ``permit`` and ``pod``).

A gang under ``permit`` (its pods each their own queue entity, waiting at Permit) or a Job's pods
under ``pod`` (a ``PodRun``) schedule one pod per cycle, each with a Filter and Score pass, though
they usually come one after the other on a cluster that only their own assumptions change. That
is the PodGroup pass ``fastpath.counted`` replays from counts, spread over cycles: with the same
``rotation.Layout`` (every pod of the shape finds a node, each row's score its own), the k-th
search from the state the layout was read in takes the row ``rotation.steps`` says and leaves the
start index it says.

Exact because each step checks that the state is the one the replay stands for: the pod has the
layout's signature and no nomination, nobody is nominated, no pod with (anti-)affinity is placed,
and since the previous step the node table changed exactly once, on the row that step took (its
pod assumed there), and nothing else moved the search's start index. Anything else — another
pod's cycle, a bind that changes a row, a node event, a pod rejected at Reserve — ends the replay
and the pod gets its pass. A replay is started for the pods the caller says are likely next
(``upcoming``) only when the signature cache already says at least that many nodes pass Filter
(``doomed.enough_rows``, what a successful gang's pass checks), so a congested cluster does not
pay for layouts that fail.
"""

from __future__ import annotations

from collections.abc import Callable

from gangsim.scheduler.fastpath import counted, doomed, rotation
from gangsim.scheduler.framework.types import NO_NODE, PodInfo

MIN_PODS = 2  # a replay for fewer pods costs more than their passes


class _Replay:
    __slots__ = ("signature", "rows", "steps", "k", "generation", "row", "start")

    def __init__(self, signature: tuple, rows: list[int], steps: list[tuple[int, int, int]]) -> None:
        self.signature = signature
        self.rows = rows  # the search rows (``doomed.search_rows``) when the layout was read
        self.steps = steps  # per search: (start index it leaves, rows it evaluated, position it took)
        self.k = 0  # the next step
        self.generation = -1  # the node table's generation the next step expects (-1: the first step, no check)
        self.row = -1  # the row the last step took
        self.start = -1  # the start index it left


class CountedSearches:
    """One framework's replay of successful pod-by-pod searches (see the module)."""

    def __init__(self, fw: doomed.Runner) -> None:
        self.fw = fw
        self.replay: _Replay | None = None
        self.replayed = 0  # searches replayed (a work counter for tests)
        self.layouts = 0  # replays started

    def take(self, pod: PodInfo, upcoming: Callable[[], list[PodInfo]]) -> int | None:
        """The row ``pod``'s pass would take, the search state moved as the pass would move it;
        None: run the pass."""
        r = self.replay
        if r is None or not self._holds(r, pod):
            r = self.replay = self._start(pod, upcoming)
            if r is None:
                return None
        fw = self.fw
        start, evaluated, pos = r.steps[r.k]
        row = r.rows[pos]
        r.k += 1
        fw.next_start_index = r.start = start
        fw.filter_rows_evaluated += evaluated
        r.generation = fw.snapshot.nodes.generation + 1  # the caller assumes the pod on ``row``
        r.row = row
        self.replayed += 1
        return row

    def _holds(self, r: _Replay, pod: PodInfo) -> bool:
        fw = self.fw
        nodes = fw.snapshot.nodes
        return (
            r.k < len(r.steps)
            and pod.signature == r.signature
            and pod.nominated_row == NO_NODE
            and nodes.generation == r.generation
            and int(nodes.row_generation[r.row]) == r.generation
            and fw.next_start_index == r.start
            and not fw.nominator.by_row
            and not fw.snapshot.affinity_pods
        )

    def _start(self, pod: PodInfo, upcoming: Callable[[], list[PodInfo]]) -> _Replay | None:
        fw = self.fw
        if fw.placement is not None or fw.snapshot.affinity_pods:
            return None
        pods = upcoming()
        if len(pods) < MIN_PODS or pods[0] is not pod or not doomed.enough_rows(fw, pod, len(pods)):
            return None
        layout = counted.layout(fw, pods)  # (one signature, none nominated, every pod fits)
        if layout is None:
            return None
        order = doomed.search_rows(fw)
        n = len(order)
        steps = list(rotation.steps(n, fw.num_feasible_nodes_to_find(n), fw.next_start_index % n, layout, len(pods)))
        if any(pos < 0 for _, _, pos in steps):
            return None
        self.layouts += 1
        return _Replay(pod.signature, order.tolist(), steps)
