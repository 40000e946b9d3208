"""KEP-4671 behaviours that are scheduler configuration in gangsim, off by default (§8.5)."""

from builders import NO_BACKOFF, create, make_group, make_node, make_pod, make_trace, pod_rows, run, victims


def trace(config):
    # A 6-cpu node with three high-priority pods (h1, h2 end at 10 s). A gang of 5 (minCount 2)
    # arrives at 1 s: three pods fit and bind; g4, g5 have nobody to preempt. At 10 s two cpus
    # free up and a low-priority pod takes one of them first.
    return make_trace(
        create(make_node("node", cpu=6)),
        create(make_pod("h1", cpu=1, priority=100, node_name="node", duration_s=10)),
        create(make_pod("h2", cpu=1, priority=100, node_name="node", duration_s=10)),
        create(make_pod("h3", cpu=1, priority=100, node_name="node")),
        create(make_group("pg", 2, priority=10), at_s=1),
        *[create(make_pod(f"g{i}", cpu=1, priority=10, group="pg"), at_s=1) for i in range(1, 6)],
        create(make_pod("low", cpu=1, priority=1, grace_s=5), at_s=10),
        config=config,
        horizon_s=100,
    )


def bound_at(log, name):
    return pod_rows(log, name)[0].bound_ms


def test_shipped_code_binds_what_fits_and_preempts_only_for_the_rest_later():
    log = run(trace(NO_BACKOFF), "gang")
    assert [bound_at(log, f"g{i}") for i in (1, 2, 3)] == [1000, 1000, 1000]
    assert bound_at(log, "low") == 10_000
    assert bound_at(log, "g4") == 10_000  # g4 fits and binds; g5 fails on its own, no preemption
    assert victims(log) == ["low"]  # g5's next cycle ("no pods were schedulable") preempts
    assert bound_at(log, "g5") == 15_000  # after the victim's 5 s grace period


def test_partial_success_prefers_preemption_over_binding_on_a_later_cycle():
    log = run(trace(NO_BACKOFF.with_changes(partial_success=True)), "gang")
    assert [bound_at(log, f"g{i}") for i in (1, 2, 3)] == [1000, 1000, 1000]  # first cycle: binds
    assert victims(log) == ["low"]
    assert bound_at(log, "g4") == bound_at(log, "g5") == 15_000  # g4 waited for g5's preemption
