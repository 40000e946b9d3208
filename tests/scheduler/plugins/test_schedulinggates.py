"""SchedulingGates (``plugins/schedulinggates``): PreEnqueue holds a pod with
``spec.schedulingGates`` with upstream's exact status.

Ported: every case of upstream ``TestPreEnqueue`` (scheduling_gates_test.go). Left out:
``TestIsSchedulableAfterUpdateTargetPodSchedulingGatesEliminated``: gangsim re-runs PreEnqueue on
every pod update (``Scheduler.on_pod_update``) instead of registering a queueing hint.
"""

import pytest

from gangsim.scheduler.framework.interface import Code, Status
from gangsim.scheduler.plugins.schedulinggates import WAITING_FOR_GATES
from scheduler.harness import harness, pod, pod_info


@pytest.mark.parametrize(
    ("gates", "want"),
    [
        pytest.param((), None, id='TestPreEnqueue/"pod does not carry scheduling gates"'),
        pytest.param(
            ("foo", "bar"),
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("waiting for scheduling gates: [foo bar]",), "SchedulingGates"),
            id='TestPreEnqueue/"pod carries scheduling gates"',
        ),
    ],
)
def test_pre_enqueue(gates, want):
    sched, fw = harness([])
    assert fw.plugins["SchedulingGates"].pre_enqueue(pod_info(sched, pod(gates=gates))) == want


def test_message_template_is_upstreams():
    assert WAITING_FOR_GATES.format("a") == "waiting for scheduling gates: [a]"
