"""The fast path changes no placement, and stays fast: non-timing guards."""

from pathlib import Path

import pytest

from benchmarks import shapes
from gangsim.load import load_trace
from gangsim.report import build_report, write_report
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[2]
TRACES = ["deadlock.yaml", "mixed-day.yaml", "victims-in-vain.yaml", "greedy-limit.yaml", "disruption-single.yaml"]


def report_bytes(trace, policy: str, tmp_path: Path, name: str, **changes) -> dict[str, bytes]:
    config = trace.config.with_changes(**changes) if changes else trace.config
    out = tmp_path / name
    write_report(build_report(replay(trace, policy, config=config)), out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("policy", ["gang", "permit", "pod"])
@pytest.mark.parametrize("name", TRACES)
def test_batching_never_changes_a_report(name, policy, tmp_path):
    trace = load_trace([ROOT / "traces" / name])
    on = report_bytes(trace, policy, tmp_path, "on")
    off = report_bytes(trace, policy, tmp_path, "off", opportunistic_batching=False)
    assert on == off


def test_filter_work_per_pod_does_not_grow_with_the_cluster():
    """Pods of one shape on a big cluster: after the first pod only the rows changed by the
    previous bind are filtered again (an O(nodes × pods) path would compute ~1,000 per pod)."""
    log = replay(shapes.scheduling_basic(1000, 2000), "pod")
    pods = sum(1 for p in log.pods if p.bound_ms is not None)
    assert pods == 2000
    assert log.counters["filter_rows_computed"] <= 1000 + 4 * pods
    # what upstream's serial search would evaluate: at least the adaptive node count per pod
    assert log.counters["filter_rows_evaluated"] >= pods * 420
    assert log.counters["batch_hits"] >= pods - 1


def test_gang_cycles_reuse_the_signature_cache():
    log = replay(shapes.gang_shape(500, 100, 8), "gang")
    pods = sum(1 for p in log.pods if p.bound_ms is not None)
    assert pods == 800
    assert log.counters["filter_rows_computed"] <= 500 + 4 * pods
