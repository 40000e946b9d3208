"""A kubectl dump whose pods carry topologySpreadConstraints (CoreDNS-like: zone DoNotSchedule,
hostname ScheduleAnyway, matchLabelKeys on pod-template-hash) imports with its constraints and
replays spread: the four pending replicas fill zone-b and zone-c to the two already running in
zone-a, one per node (the hostname constraint's score), under every policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from gangsim.pipeline import load
from gangsim.sim.replay import replay

from tests.importers.conftest import creates, imported

FIXTURE = str(Path(__file__).parent / "fixtures" / "kubectl-coredns.yaml")


def test_constraints_are_kept():
    recs, stats = imported("kubectl", FIXTURE)
    pods = [o for o in creates(recs) if o["kind"] == "Pod"]
    assert len(pods) == 6
    for p in pods:
        spread = p["spec"]["topologySpreadConstraints"]
        assert [(c["topologyKey"], c["whenUnsatisfiable"], c["matchLabelKeys"]) for c in spread] == [
            ("topology.kubernetes.io/zone", "DoNotSchedule", ["pod-template-hash"]),
            ("kubernetes.io/hostname", "ScheduleAnyway", ["pod-template-hash"]),
        ]
    assert not any("topology" in n for n in stats.notes)


@pytest.mark.parametrize("policy", ["pod", "permit", "gang"])
def test_pending_replicas_spread_over_zones_and_hosts(policy):
    log = replay(load([f"kubectl:{FIXTURE}"]), policy)
    where = {p.pod.rsplit("-", 1)[1]: p.node for p in log.pods if p.bound_ms is not None}
    assert where == {"aaaaa": "a-1", "bbbbb": "a-2", "ccccc": "b-1", "ddddd": "c-1", "eeeee": "b-2", "fffff": "c-2"}
