"""Classic DefaultPreemption (SEMANTICS §5): victims, the six node-pick criteria, PDBs,
nominations and the victim's grace period."""

from builders import create, events_of, make_node, make_pdb, make_pod, make_trace, placements, pod_rows, run, victims


def fill(name, node, prio, cpu=1, at_s=0, **kw):
    return create(make_pod(name, cpu=cpu, priority=prio, node_name=node, grace_s=0, **kw), at_s=at_s)


def test_lower_priority_victim_is_evicted_and_preemptor_binds_after_grace():
    t = make_trace(
        create(make_node("n1", cpu=2)),
        create(make_pod("low", cpu=2, priority=1, node_name="n1", grace_s=30)),
        create(make_pod("high", cpu=2, priority=10), at_s=5),
    )
    log = run(t)
    assert victims(log) == ["low"]
    v = log.victims[0]
    assert (v.t_ms, v.node, v.preemptor, v.preemptor_priority, v.victim_priority) == (5000, "n1", "default/high", 10, 1)
    low = pod_rows(log, "low")[0]
    assert (low.ended_ms, low.end_reason) == (35000, "Preempted")  # grace period keeps the resources
    high = pod_rows(log, "high")[0]
    assert (high.bound_ms, high.node) == (35000, "n1")
    assert v.in_vain is False
    fail = events_of(log, "high", "FailedScheduling")[0][2]
    assert fail == "0/1 nodes are available: 1 Insufficient cpu."  # preemption succeeded: no post-filter message


def test_equal_priority_is_never_a_victim():
    t = make_trace(
        create(make_node("n1", cpu=2)),
        fill("peer", "n1", 5, cpu=2),
        create(make_pod("p", cpu=2, priority=5), at_s=1),
    )
    log = run(t)
    assert victims(log) == []
    msg = pod_rows(log, "p")[0].waiting_reason
    assert msg.endswith("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")


def test_preemption_policy_never():
    t = make_trace(
        create(make_node("n1", cpu=2)),
        fill("low", "n1", 1, cpu=2),
        create(make_pod("p", cpu=2, priority=5, preemption_policy="Never"), at_s=1),
    )
    log = run(t)
    assert victims(log) == []
    assert pod_rows(log, "p")[0].waiting_reason.endswith("preemption: not eligible due to preemptionPolicy=Never.")


def test_reprieve_keeps_the_most_important_victims():
    # n1: 4 cpu with a (prio 3, started first), b (prio 3), c (prio 1), d (prio 2); preemptor needs 2.
    t = make_trace(
        create(make_node("n1", cpu=4)),
        fill("a", "n1", 3),
        fill("b", "n1", 3, at_s=1),
        fill("c", "n1", 1, at_s=2),
        fill("d", "n1", 2, at_s=3),
        create(make_pod("p", cpu=2, priority=10), at_s=10),
    )
    assert victims(run(t)) == ["c", "d"]


def test_pdb_violating_victims_are_reprieved_first():
    # Without the PDB c (prio 1) and d (prio 2) would go; c is protected (0 disruptions allowed),
    # so it is reprieved first and the preemptor takes b (prio 3) and d instead.
    t = make_trace(
        create(make_node("n1", cpu=4)),
        fill("a", "n1", 4),
        fill("b", "n1", 3, at_s=1),
        fill("c", "n1", 1, at_s=2, labels={"app": "db"}),
        fill("d", "n1", 2, at_s=3),
        create(make_pdb("db", {"app": "db"}, min_available=1)),
        create(make_pod("p", cpu=2, priority=10), at_s=10),
    )
    assert victims(run(t)) == ["b", "d"]


def _two_node_choice(n1_pods, n2_pods, preemptor_cpu=2, extra=()):
    return make_trace(
        create(make_node("n1", cpu=2)),
        create(make_node("n2", cpu=2)),
        *n1_pods,
        *n2_pods,
        *extra,
        create(make_pod("p", cpu=preemptor_cpu, priority=100), at_s=100),
    )


def test_pick_criterion_1_fewest_pdb_violations():
    t = _two_node_choice(
        [fill("n1-a", "n1", 1, cpu=2, labels={"app": "db"})],
        [fill("n2-a", "n2", 5, cpu=2)],
        extra=[create(make_pdb("db", {"app": "db"}, max_unavailable=0))],
    )
    assert victims(run(t)) == ["n2-a"]  # n1's victim would violate the PDB, though its priority is lower


def test_pick_criterion_2_lowest_highest_victim_priority():
    t = _two_node_choice([fill("n1-a", "n1", 5, cpu=2)], [fill("n2-a", "n2", 3, cpu=2)])
    assert victims(run(t)) == ["n2-a"]


def test_pick_criterion_3_smallest_priority_sum():
    t = _two_node_choice(
        [fill("n1-a", "n1", 3), fill("n1-b", "n1", 2)],
        [fill("n2-a", "n2", 3), fill("n2-b", "n2", 1)],
    )
    assert victims(run(t)) == ["n2-a", "n2-b"]


def test_pick_criterion_4_fewest_victims():
    # Σ(priority + 2^31) ties only when a victim has priority -2^31: [7] vs [7, -2^31]
    lowest = -(2**31)
    t = _two_node_choice(
        [fill("n1-a", "n1", 7), fill("n1-b", "n1", lowest)],
        [fill("n2-a", "n2", 7, cpu=2)],
    )
    assert victims(run(t)) == ["n2-a"]


def test_pick_criterion_5_latest_start_of_the_top_victims():
    t = _two_node_choice([fill("n1-a", "n1", 3, cpu=2, at_s=10)], [fill("n2-a", "n2", 3, cpu=2, at_s=20)])
    assert victims(run(t)) == ["n2-a"]  # started later: less work lost


def test_pick_criterion_6_first_candidate_in_node_order():
    t = _two_node_choice([fill("n1-a", "n1", 3, cpu=2, at_s=10)], [fill("n2-a", "n2", 3, cpu=2, at_s=10)])
    assert victims(run(t)) == ["n1-a"]


def test_unresolvable_nodes_are_not_preemption_candidates():
    t = make_trace(
        create(make_node("small", cpu=1)),
        create(make_node("big", cpu=4)),
        fill("low-small", "small", 1, cpu=1),
        fill("low-big", "big", 1, cpu=4),
        create(make_pod("p", cpu=2, priority=10), at_s=1),
    )
    log = run(t)
    assert victims(log) == ["low-big"]
    assert placements(log)["p"] == "big"


def test_nominated_node_is_reserved_against_lower_priority_pods():
    t = make_trace(
        create(make_node("n1", cpu=4)),
        create(make_pod("low-a", cpu=2, priority=1, node_name="n1", grace_s=30)),
        create(make_pod("x", cpu=1, priority=1, node_name="n1")),
        create(make_pod("high", cpu=3, priority=10, node_selector={"kubernetes.io/hostname": "n1"}), at_s=1),
        create(make_pod("late", cpu=1, priority=1), at_s=10),
    )
    log = run(t)
    assert victims(log) == ["low-a"]  # x is reprieved
    late_fail = events_of(log, "late", "FailedScheduling")
    assert late_fail and late_fail[0][0] == 10000  # 1 cpu is free, but reserved for "high"
    assert "1 Insufficient cpu" in late_fail[0][2]
    got = placements(log)
    assert got["high"] == "n1"
    assert "late" not in got  # after the victim ends: high (3) + x (1) fill n1


def test_terminating_victim_on_nominated_node_blocks_new_preemption():
    t = make_trace(
        create(make_node("n1", cpu=2)),
        create(make_pod("low", cpu=2, priority=1, node_name="n1", grace_s=60)),
        create(make_pod("high", cpu=2, priority=10), at_s=1),
        create(make_node("n2", cpu=1), at_s=5),  # an event that retries "high" while low terminates
    )
    log = run(t)
    assert victims(log) == ["low"]
    msgs = [m for _, _, m in events_of(log, "high", "FailedScheduling")]
    assert any(m.endswith("preemption: not eligible due to a terminating pod on the nominated node.") for m in msgs)
    assert placements(log)["high"] == "n1"
