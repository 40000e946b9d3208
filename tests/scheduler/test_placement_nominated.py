"""The nominated placement of the KEP-5732 placement loop, as the newest upstream code has it
(``pkg/scheduler/algorithm_podgroup.go``: ``podGroupSchedulingPlacementAlgorithm`` and
``nominatedPlacement``; cases written from that code):
the one placement holding any nominated node is evaluated first and taken when feasible with a
pod placed; feasible with none placed it is not a candidate, and when nothing else is feasible
the fit error says so. The pass is a stub that returns a fixed result per placement."""

from types import SimpleNamespace

import numpy as np

from gangsim.scheduler.framework.interface import Code, Placement, Status
from gangsim.scheduler.framework.types import NO_NODE, GroupResult
from gangsim.scheduler.schedule_placement import run_placement_algorithm

RACKS = [Placement("rack-a", np.array([0, 1])), Placement("rack-b", np.array([2, 3])), Placement("rack-c", np.array([4, 5]))]
UNSCHEDULABLE = Status(Code.UNSCHEDULABLE, ("minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",))


def loop(outcomes: dict[str, GroupResult], nominated: tuple[int, ...]):
    """Run the loop over RACKS with pods nominated to ``nominated`` rows; the racks in the order
    the stub pass saw them, and the result."""
    seen: list[str] = []

    def stub_pass(fw, st, pods, *, messages=True):
        seen.append(fw.placement.name)
        r = outcomes[fw.placement.name]
        return GroupResult(r.status, list(r.placed), dict(r.failed), r.evaluated)

    generator = SimpleNamespace(generate_placements=lambda st, pods: (list(RACKS), None))
    fw = SimpleNamespace(placement_generate_plugins=[generator], placement=None, placement_evaluations=[0, 0], placements_generated=0, placement_scorers=[], rng=None)
    pods = [SimpleNamespace(nominated_row=r) for r in nominated] or [SimpleNamespace(nominated_row=NO_NODE)]
    return seen, run_placement_algorithm(fw, SimpleNamespace(), pods, stub_pass)


def placed(name: str) -> GroupResult:
    return GroupResult(None, [(SimpleNamespace(name=name), 0)])


def test_the_placement_of_a_nominated_node_is_tried_first_and_taken():
    seen, result = loop({"rack-a": placed("a"), "rack-b": placed("b"), "rack-c": placed("c")}, (4,))
    assert seen == ["rack-c"] and result.placed[0][0].name == "c"


def test_a_nominated_node_outside_every_placement_does_not_hide_the_one_inside():
    """``nominatedPlacement`` matches a placement holding *any* nominated node (row 9 is in none)."""
    seen, _ = loop({"rack-a": placed("a"), "rack-b": placed("b"), "rack-c": placed("c")}, (9, 2))
    assert seen == ["rack-b"]


def test_nominated_nodes_in_two_placements_evaluate_all_in_order():
    seen, _ = loop({"rack-a": GroupResult(UNSCHEDULABLE), "rack-b": placed("b"), "rack-c": placed("c")}, (0, 4))
    assert seen == ["rack-a", "rack-b", "rack-c"]


def test_a_nominated_placement_that_places_no_pod_is_no_candidate():
    """Feasible only through members scheduled before: the others are evaluated and win."""
    seen, result = loop({"rack-a": placed("a"), "rack-b": GroupResult(None), "rack-c": GroupResult(UNSCHEDULABLE)}, (3,))
    assert seen == ["rack-b", "rack-a", "rack-c"] and result.placed[0][0].name == "a"


def test_nothing_else_feasible_reports_the_nominated_placement():
    _, result = loop({"rack-a": GroupResult(UNSCHEDULABLE), "rack-b": GroupResult(None), "rack-c": GroupResult(UNSCHEDULABLE)}, (3,))
    assert result.status.code == Code.UNSCHEDULABLE
    assert result.status.message == "0/3 placements are available, first placement status: nominated placement is feasible but no pending pod was scheduled"
