"""What the fast-path A/B tests share: a speed shortcut is proven equal to the reference path by
replaying one trace with its switch on and off and comparing what users read — the report files
byte for byte (``report_bytes``), or each pod's outcome and the event log (``outcome``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hypothesis import strategies as st

from builders import SRC, create, delete, load_generated, make_group, make_node, make_spec, make_trace, patch

from gangsim.api.objects import Pod, PodSpec
from gangsim.load import load_trace
from gangsim.load.generate import GeneratorSpec, PoolSpec
from gangsim.report import build_report, write_report
from gangsim.sim.replay import replay

ROOT = Path(__file__).resolve().parents[1]
# the real traces beside the project (``../shared/traces-data``); tests needing one skip without it
SHARED = next((p / "shared" / "traces-data" for p in ROOT.parents if (p / "shared" / "traces-data").is_dir()), ROOT.parent / "shared" / "traces-data")


def generated_trace(path: Path, spec: GeneratorSpec, *, horizon_ms: int):
    """``spec``'s generated trace, written to ``path`` and loaded, replayed until ``horizon_ms``."""
    return replace(load_generated(spec, path), horizon_ms=horizon_ms)


def imported_trace(tmp_path: Path, fmt: str, source: Path, *, days: int, **options):
    """``source`` through the ``fmt`` importer (``ImportOptions(**options)``), its first ``days``."""
    from gangsim.load.importers import ImportOptions, records
    from gangsim.load.importers import write_jsonl as write_imported

    path = tmp_path / f"{fmt}.jsonl"
    with path.open("wb") as out:
        write_imported(records(fmt, [str(source)], ImportOptions(**options)), out)
    return replace(load_trace([path]), horizon_ms=days * 86_400_000)


def rigid_jobs(path: Path, seed: int, pools: tuple[PoolSpec, ...], *, priorities: int, horizon_h: float, **shape):
    """Rigid jobs (no PodGroup policy: under ``pod`` scheduled pod by pod, broken at the
    rendezvous timeout, recreated, and retried on every release) of ``shape`` (``GeneratorSpec``'s
    jobs, gang and pod sizes, node failures) on ``pools``, arriving within 2 hours, median 30
    minutes, replayed for ``horizon_h`` hours. One priority class, or with ``priorities=2``
    40 % high (1000) that preempt 60 % low."""
    classes = (("only", 0, 1.0),) if priorities == 1 else (("low", 0, 0.6), ("high", 1000, 0.4))
    spec = GeneratorSpec(seed=seed, pools=pools, hours=2, priorities=classes, duration_median_s=1800, gang_policy=False, **shape)
    return generated_trace(path, spec, horizon_ms=int(horizon_h * 3_600_000))


def congested_rigid_jobs(tmp_path: Path, seed: int, *, priorities: int):
    """Rigid jobs of 1–48 pods of 1–8 GPUs on 250 nodes of two sizes, three of which fail,
    replayed for 5 hours, 10 % of the nodes scored (100 rows a search): runs' passes meet full
    nodes (failing rows in the window), releases, node losses and preemptions."""
    trace = rigid_jobs(
        tmp_path / f"congested-{seed}-{priorities}.jsonl", seed, (PoolSpec("big", 170, gpus=8), PoolSpec("small", 80, cpu=32, memory_gi=256, gpus=4)),
        priorities=priorities, horizon_h=5, jobs=70, gang_sizes=((1, 0.2), (8, 0.3), (24, 0.3), (48, 0.2)),
        gpus_per_pod=((1, 0.4), (2, 0.3), (4, 0.2), (8, 0.1)), node_failures=3,
    )  # fmt: skip
    return replace(trace, config=trace.config.with_changes(percentage_of_nodes_to_score=10))


def report_bytes(trace, policy: str, out: Path, *, seed: int | None = None, counters: dict | None = None, **changes) -> dict[str, bytes]:
    """The report files of ``trace`` replayed under ``policy`` with the configuration ``changes``
    (``SchedulerConfig.with_changes``), written to ``out``; the replay's counters into ``counters``."""
    config = trace.config.with_changes(**changes) if changes else trace.config
    log = replay(trace, policy, config=config, seed=seed)
    if counters is not None:
        counters.update(log.counters)
    write_report(build_report(log), out)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith(".")}


# counters that count gangsim's work, not the cluster's (they differ between a shortcut and the
# reference path): ``log_facts`` leaves out those whose names start with these
WORK_COUNTERS = ("filter_rows", "batch_hits", "doomed_passes", "counted_passes", "repeated_failures", "failures_repeated")


def log_facts(log, work: tuple[str, ...] = WORK_COUNTERS) -> tuple:
    """Everything a report is built from, except wall-clock timings and the counters whose names
    start with one of ``work``."""
    return (
        list(log.ev_t_ms), log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message,
        list(log.tl_t_ms), list(log.tl_gpus_allocated), list(log.tl_pending_pods),
        log.pods, log.gangs, log.victims, log.podgroup_attempts,
        {k: v for k, v in log.counters.items() if not k.startswith(work)},
    )  # fmt: skip


def outcome(trace, policy: str, **changes) -> tuple[list, list]:
    """Each pod's node, bind and end times, waiting reason and attempts, and every event."""
    log = replay(trace, policy, config=trace.config.with_changes(**changes))
    pods = [(p.pod, p.node, p.bound_ms, p.ended_ms, p.waiting_reason, p.scheduling_attempts) for p in log.pods]
    return pods, list(zip(log.ev_t_ms, log.ev_object, log.ev_reason, log.ev_message))


def arrival_events(ops: list[tuple[str, int, int]], plain: dict[str, PodSpec], gated: dict[str, PodSpec], at: Callable[[int, int], int]) -> list:
    """Pods ``p0``–``p5`` of group ``g`` and ``p6``… of ``h`` created (``gated``: with the spec
    carrying a scheduling gate), deleted and let go (the gate patched away) as the hypothesis ops
    ``(op, pod index, jitter)`` say, op t at ``at(t, jitter)`` seconds; ops that do not apply to a
    pod's state then are skipped."""
    events = []
    live: dict[str, Pod] = {}
    for t, (op, i, dt) in enumerate(ops):
        name, group = f"p{i}", "g" if i < 6 else "h"
        when = at(t, dt)
        if op in ("create", "gated") and name not in live:
            live[name] = Pod(namespace="default", name=name, spec=(gated if op == "gated" else plain)[group], source=SRC)
            events.append(create(live[name], at_s=when))
        elif op == "delete" and name in live:
            events.append(delete("Pod", name, at_s=when))
            del live[name]
        elif op == "ungate" and name in live and live[name].spec.scheduling_gates:
            live[name] = replace(live[name], spec=plain[group])
            events.append(patch(live[name], at_s=when))
    return events


# hypothesis ops for :func:`arrival_events`: (op, pod index, jitter)
ARRIVAL_OPS = st.lists(
    st.tuples(st.sampled_from(["create", "create", "create", "gated", "delete", "ungate"]), st.integers(0, 9), st.integers(0, 2)),
    min_size=1,
    max_size=30,
)


def two_gangs_on_one_node(ops: list[tuple[str, int, int]], min_g: int, min_h: int, cpu: int):
    """Gangs ``g`` (minCount ``min_g``) and ``h`` (``min_h``) of 1-CPU pods arriving as
    :data:`ARRIVAL_OPS` say (several at an instant, some gated, deleted and let go) on one node
    of ``cpu`` CPUs, too small for both: members wait at Permit, time out and come again."""
    plain = {g: make_spec(cpu=1, group=g, duration_s=40) for g in ("g", "h")}
    gated = {g: make_spec(cpu=1, group=g, gates=("wait",), duration_s=40) for g in ("g", "h")}
    events = [create(make_node("n0", cpu=cpu, memory_gi=16)), create(make_group("g", min_g)), create(make_group("h", min_h))]
    events += arrival_events(ops, plain, gated, at=lambda t, dt: 1 + 20 * (t // 4) + dt)
    return make_trace(*events, horizon_s=1200)


def gang_at_once(size: int):
    """A gang ``g`` of ``size`` pods of one spec, all created at 1 s, on a node that holds it all
    (under ``permit`` each waits at Permit until the last releases them)."""
    spec = make_spec(cpu=0.5, group="g", duration_s=60)
    events = [create(make_node("n0", cpu=64, memory_gi=64)), create(make_group("g", size))]
    events += [create(Pod(namespace="default", name=f"p{i:02}", spec=spec, source=SRC), at_s=1) for i in range(size)]
    return make_trace(*events)
