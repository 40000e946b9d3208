"""``replay(trace, policy)``: push the trace onto the engine, run, return the event log."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Job, Node, Pod
from gangsim.api.trace import Trace
from gangsim.errors import UsageError
from gangsim.eventlog import EventLog
from gangsim.scheduler.framework.runtime import Recorder
from gangsim.scheduler.framework.types import ResourceIndex
from gangsim.scheduler.profiles import POLICIES
from gangsim.scheduler.scheduler import Scheduler
from gangsim.sim.cluster import Cluster
from gangsim.sim.engine import Engine, Phase
from gangsim.sim.jobworkloads import job_workload_events

# Without --horizon a replay stops when nothing can change any more; this caps replays that
# never settle (e.g. a partial-gang livelock restarting every rendezvous timeout).
SAFETY_HORIZON_MS = 7 * 24 * 3_600_000
# The cyclic collector's youngest-generation threshold while a replay runs (CPython's default:
# 700 allocations). A replay allocates its pods' objects by the hundred thousand and keeps them
# to the end: at 700 they pass through the older generations' collections again and again
# (~10 % of a 50,000-pod replay, issue 16); at 10,000 those collections run 14× less often, and
# cyclic garbage waits at most 10,000 allocations longer. Results cannot change (reference
# counting frees everything else as before).
REPLAY_GC_GEN0 = 10_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """``REPLAY_GC_GEN0`` as the youngest generation's threshold inside, the old one restored after."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], REPLAY_GC_GEN0), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def resource_names(trace: Trace) -> set[str]:
    names: set[str] = set()
    for ev in trace.events:
        obj = ev.obj
        if isinstance(obj, Node):
            names.update(obj.allocatable)
        elif isinstance(obj, Pod):
            names.update(obj.spec.requests)
        elif isinstance(obj, Job):
            for spec in obj.pod_specs():
                names.update(spec.requests)
    names.add("nvidia.com/gpu")
    return names


class Setup:
    """A replay built but not run: tests drive it (``run_until``) and inspect the scheduler."""

    def __init__(self, trace: Trace, policy: str, *, seed: int | None = None, config: SchedulerConfig | None = None, recorder: Recorder | None = None) -> None:
        if policy not in POLICIES:
            raise UsageError(f"unknown policy {policy!r}: choose one of {', '.join(POLICIES)}")
        self.log = EventLog()
        self.log.info.trace = trace.name
        self.log.info.policy = policy
        self.log.info.seed = seed
        self.engine = Engine()
        self.cluster = Cluster(self.engine, self.log)
        rng = np.random.default_rng(seed) if seed is not None else None
        self.scheduler = Scheduler(config or trace.config, POLICIES[policy], ResourceIndex(resource_names(trace)), self.cluster, self.log, rng)
        self.cluster.attach(self.scheduler)
        for fw in self.scheduler.frameworks.values():
            fw.recorder = recorder
        events = trace.events
        if POLICIES[policy].features.gang_scheduling:  # GenericWorkload: the Job controller's Workloads (KEP-5547)
            events = job_workload_events(events, infer=trace.job_workloads)
        for ev in events:
            self.engine.feed(ev.at_ms, Phase.API, self.cluster.apply, ev)

    def run_until(self, t_ms: int) -> None:
        """Process everything before ``t_ms`` (the retries of sleeping groups counted too)."""
        self.engine.run(t_ms)
        self.scheduler.queue.advance_sleepers(t_ms)


def replay(
    trace: Trace,
    policy: str = "gang",
    *,
    seed: int | None = None,
    horizon_ms: int | None = None,
    config: SchedulerConfig | None = None,
    progress: Callable[[int, int, int, int], None] | None = None,
    check_invariants: bool = False,
    recorder: Recorder | None = None,
) -> EventLog:
    """Replay ``trace``; ``progress(now_ms, expected_ms, pods_bound, pods_pending)`` is called
    between simulated instants (``expected_ms``: the horizon, or without one the last trace
    event, after which the replay drains what is left); ``recorder`` (``gangsim explain``) sees
    each real scheduling attempt of the pods it wants."""
    setup = Setup(trace, policy, seed=seed, config=config, recorder=recorder)
    log, engine, cluster, scheduler = setup.log, setup.engine, setup.cluster, setup.scheduler
    horizon = horizon_ms if horizon_ms is not None else trace.horizon_ms
    until = horizon if horizon is not None else trace.last_event_ms + SAFETY_HORIZON_MS
    total_events = len(trace.events)
    expected = horizon if horizon is not None else trace.last_event_ms

    went_idle = False

    def stop() -> bool:
        nonlocal went_idle
        if progress is not None:
            progress(engine.now, expected, cluster.binds, cluster.pending_pods)
        if check_invariants:
            scheduler.check_invariants()
        went_idle = horizon is None and engine.productive == 0 and scheduler.is_settled()
        return went_idle

    limit = until + 1 if horizon is None else until
    with fewer_collections():
        engine.run(limit, stop=stop)
    # the retries of groups still asleep (FastPath.bulk_retries) that the reference path ran:
    # before the horizon, or through the instant the replay went idle (the reference's next
    # instant, a sleeper's retry, finds it settled, as it stops without a next one)
    idle = went_idle or (horizon is None and engine.peek() is None)
    scheduler.queue.advance_sleepers(engine.now + 1 if idle else limit)
    if horizon is not None:
        end = horizon
        log.info.stopped_by = "horizon"
    elif engine.peek() is None or engine.productive == 0:
        end = engine.now
        log.info.stopped_by = "idle"
    else:
        end = until
        log.info.stopped_by = "safety-horizon"
    engine.now = max(engine.now, end) if end >= engine.now else engine.now
    log.info.horizon_ms = end
    cluster.close()
    log.counters.update(scheduler.counters())
    log.counters["trace_events"] = total_events
    return log
