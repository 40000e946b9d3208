"""In-memory fakes of the edges between the simulator and the scheduler, for testing one side
alone (STYLE §8: fake the edges, not the core):

- ``FakeInformer``: the scheduler as the ``Cluster`` sees it (``gangsim.scheduler.informer``);
  records every call, serves the profiles it is given, builds minimal ``PodInfo``s.
- ``FakeClusterAPI``: the simulated world as the ``Scheduler`` sees it
  (``gangsim.scheduler.framework.handle.ClusterAPI``); a settable clock, timers you fire by hand,
  every call recorded with the pod's ``namespace/name``. ``tests/scheduler/harness.py`` builds
  plugin and framework tests on it.
- ``make_cluster`` / ``make_scheduler``: one side wired to the other side's fake.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import CompositePodGroup, Node, Pod, PodDisruptionBudget, PodGroup
from gangsim.eventlog import EventLog
from gangsim.scheduler.framework.handle import Victim
from gangsim.scheduler.framework.types import PodInfo, ResourceIndex
from gangsim.scheduler.profiles import POLICIES
from gangsim.scheduler.scheduler import Scheduler
from gangsim.sim.cluster import Cluster
from gangsim.sim.engine import Engine

_EMPTY = np.zeros(0, dtype=np.int64)


def pod_info(pod: Pod, uid: int, now: int = 0) -> PodInfo:
    """A PodInfo with what the Cluster reads of it (uid, key, spec); no resource vectors."""
    group = f"{pod.namespace}/{pod.spec.scheduling_group}" if pod.spec.scheduling_group else ""
    return PodInfo(uid, pod.namespace, pod.name, pod.spec, _EMPTY, _EMPTY, _EMPTY, now, group_key=group)


class FakeInformer:
    """Records ``(handler, key...)`` tuples in ``calls``; ``reject_waiting_pod`` keeps the
    contract (unreserve through the cluster) when ``cluster`` is set."""

    def __init__(self, profiles: tuple[str, ...] = ("default-scheduler",)) -> None:
        self.profiles = set(profiles)
        self.calls: list[tuple] = []
        self.cluster: Cluster | None = None
        self.now = lambda: self.cluster.now if self.cluster is not None else 0

    def has_profile(self, scheduler_name: str) -> bool:
        return scheduler_name in self.profiles

    def on_node_add(self, node: Node) -> None:
        self.calls.append(("node_add", node.name))

    def on_node_update(self, old: Node, new: Node) -> None:
        self.calls.append(("node_update", new.name))

    def on_node_delete(self, name: str) -> None:
        self.calls.append(("node_delete", name))

    def on_pod_add(self, pod: Pod, uid: int) -> PodInfo:
        self.calls.append(("pod_add", pod.key))
        return pod_info(pod, uid, self.now())

    def on_pod_assigned(self, pod: Pod, uid: int, node: str) -> PodInfo:
        self.calls.append(("pod_assigned", pod.key, node))
        return pod_info(pod, uid, self.now())

    def on_pod_update(self, info: PodInfo, pod: Pod) -> None:
        self.calls.append(("pod_update", info.key))

    def on_pod_delete(self, info: PodInfo) -> None:
        self.calls.append(("pod_delete", info.key))

    def reject_waiting_pod(self, info: PodInfo, message: str) -> None:
        self.calls.append(("reject_waiting_pod", info.key, message))
        if self.cluster is not None:
            self.cluster.unreserved(info)

    def on_podgroup_add(self, pg: PodGroup) -> None:
        self.calls.append(("podgroup_add", pg.key))

    def on_podgroup_update(self, old: PodGroup | None, new: PodGroup) -> None:
        self.calls.append(("podgroup_update", new.key))

    def on_podgroup_delete(self, key: str) -> None:
        self.calls.append(("podgroup_delete", key))

    def on_composite_pod_group_add(self, cpg: CompositePodGroup) -> None:
        self.calls.append(("composite_add", cpg.key))

    def on_composite_pod_group_delete(self, key: str) -> None:
        self.calls.append(("composite_delete", key))

    def on_pdb_add(self, pdb: PodDisruptionBudget) -> None:
        self.calls.append(("pdb_add", pdb.key))

    def on_pdb_delete(self, key: str) -> None:
        self.calls.append(("pdb_delete", key))

    def run_cycles(self) -> None:
        self.calls.append(("run_cycles",))

    def is_settled(self) -> bool:
        return True

    def counters(self) -> dict[str, int]:
        return {}

    def check_invariants(self) -> None:
        pass


@dataclass(eq=False)
class FakeTimer:
    t_ms: int
    handler: Callable[[], None]
    cancelled: bool = False
    fired: bool = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        """Run the handler as the TIMEOUT phase would (a cancelled timer does nothing)."""
        assert not self.fired, "timer fired twice"
        self.fired = True
        if not self.cancelled:
            self.handler()


@dataclass(eq=False)
class FakeClusterAPI:
    """A settable clock; ``call_at`` and ``set_timer`` only record (tests fire timers by hand and
    run cycles themselves); every call is appended to ``calls`` as ``(name, pod key or ref, ...)``."""

    now: int = 0
    calls: list[tuple] = field(default_factory=list)
    wakes: list[tuple[int, Callable[[], None]]] = field(default_factory=list)
    timers: list[FakeTimer] = field(default_factory=list)
    cycles_requested: int = 0
    _uids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def clock(self) -> int:
        return self.now

    def next_uid(self) -> int:
        """Pod uids for pods a test builds itself, unique per cluster."""
        return next(self._uids)

    def of(self, name: str) -> list[tuple]:
        """The recorded calls named ``name``, without the name."""
        return [c[1:] for c in self.calls if c[0] == name]

    def live_timers(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.cancelled and not t.fired]

    def call_at(self, t_ms: int, handler: Callable[[], None]) -> None:
        self.calls.append(("call_at", t_ms))
        self.wakes.append((t_ms, handler))

    def set_timer(self, t_ms: int, handler: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(t_ms, handler)
        self.timers.append(timer)
        return timer

    def request_cycle(self) -> None:
        self.cycles_requested += 1

    def bind(self, pod: PodInfo, node: str) -> None:
        self.calls.append(("bind", pod.key, node))

    def reserved(self, pod: PodInfo, node: str) -> None:
        self.calls.append(("reserved", pod.key, node))

    def unreserved(self, pod: PodInfo) -> None:
        self.calls.append(("unreserved", pod.key))

    def preempt(self, victims: list[Victim], preemptor: str, preemptor_priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        self.calls.append(("preempt", tuple(sorted((v.pod.key, v.node) for v in victims)), preemptor, preemptor_priority, message, preemptor_kind))

    def attempted(self, pod: PodInfo) -> None:
        self.calls.append(("attempted", pod.key))

    def group_attempted(self, key: str, times: int = 1) -> None:
        self.calls.extend([("group_attempted", key)] * times)

    def attempt_finished(self, ref: str, *, bound: bool) -> None:
        self.calls.append(("attempt_finished", ref, bound))

    def scheduling_failed(self, pod: PodInfo, message: str) -> None:
        self.calls.append(("scheduling_failed", pod.key, message))

    def gated(self, pod: PodInfo, message: str) -> None:
        self.calls.append(("gated", pod.key, message))

    def failures_recorded(self, pods: tuple[PodInfo, ...], messages: tuple[str, ...], *, peelable: bool = False) -> None:
        return None  # every attempt is recorded pod by pod in ``calls``

    def failed_again(self, token: object, pods: tuple[PodInfo, ...], messages: tuple[str, ...], **_: object) -> bool:
        return False



def make_cluster(profiles: tuple[str, ...] = ("default-scheduler",)) -> tuple[Engine, EventLog, Cluster, FakeInformer]:
    """A real Cluster (engine, log, kubelets, job model) whose scheduler is a ``FakeInformer``."""
    engine = Engine()
    log = EventLog()
    cluster = Cluster(engine, log)
    informer = FakeInformer(profiles)
    informer.cluster = cluster
    cluster.attach(informer)
    return engine, log, cluster, informer


RESOURCES = ("cpu", "memory", "pods", "nvidia.com/gpu")


def make_scheduler(policy: str = "pod", config: SchedulerConfig | None = None) -> tuple[Scheduler, FakeClusterAPI, EventLog]:
    """A real Scheduler of ``policy`` acting on a ``FakeClusterAPI``."""
    cluster = FakeClusterAPI()
    log = EventLog()
    scheduler = Scheduler(config or SchedulerConfig(), POLICIES[policy], ResourceIndex(RESOURCES), cluster, log)
    return scheduler, cluster, log
