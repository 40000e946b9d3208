"""A real ``Scheduler`` on a fake cluster, for plugin and framework tests (STYLE: fake the
edges, not the core).

- ``FakeCluster`` implements ``gangsim.scheduler.framework.handle.ClusterAPI``: a settable
  ``now``, every call recorded in ``calls`` (``bind``, ``reserved``, ``preempt``, ...), timers you
  fire by hand (``set_timer`` returns a ``FakeTimer``), ``call_at`` recorded, ``request_cycle`` a
  no-op (tests run the cycles themselves with ``Scheduler.run_cycles``).
- ``harness(nodes, assigned, policy=, config=)`` builds the scheduler through its informer
  handlers (``on_node_add``, ``on_pod_assigned``) and returns it with its default framework;
  plugins are then ``fw.plugins["NodeAffinity"]`` and friends.
- ``pod_info`` turns a ``Pod`` into the ``PodInfo`` the scheduler would build; ``rows`` gives
  the node rows of named nodes (all live nodes in node-list order by default).
- ``node`` and ``pod`` write objects with exact labels and raw canonical amounts (millicores,
  bytes), as upstream's ``st.MakeNode``/``st.MakePod`` do: ``pod(containers=[...], init=[...],
  sidecars=[...], overhead={...})`` folds container requests with the loader's own rule
  (``gangsim.load.expand.pod_requests``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import DEFAULT_SCHEDULER, Affinity, Node, Pod, PodSpec, PreemptionPolicy, Taint, Toleration
from gangsim.eventlog import EventLog
from gangsim.load.expand import nonzero, pod_requests
from gangsim.scheduler.framework.handle import Victim
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import PodInfo, ResourceIndex
from gangsim.scheduler.profiles import POLICIES
from gangsim.scheduler.scheduler import Scheduler

# resource columns every harness has, so pods built later never name an unknown resource
RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "example.com/aaa", "example.com/bbb", "hugepages-2Mi")


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
class FakeCluster:
    """The ``ClusterAPI`` the scheduler acts on, recording instead of simulating."""

    now: int = 0
    calls: list[tuple] = field(default_factory=list)
    timers: list[FakeTimer] = field(default_factory=list)
    _uids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def next_uid(self) -> int:
        """Pod uids for the harness's pods, unique per cluster."""
        return next(self._uids)

    def live_timers(self) -> list[FakeTimer]:
        return [t for t in self.timers if not t.cancelled and not t.fired]

    def of(self, kind: str) -> list[tuple]:
        """The recorded calls of one kind, without the kind."""
        return [c[1:] for c in self.calls if c[0] == kind]

    # ---- ClusterAPI ----------------------------------------------------------------------------
    def call_at(self, t_ms: int, handler: Callable[[], None]) -> None:
        self.calls.append(("call_at", t_ms))

    def set_timer(self, t_ms: int, handler: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(t_ms, handler)
        self.timers.append(timer)
        return timer

    def request_cycle(self) -> None:
        pass  # the tests run cycles themselves (``Scheduler.run_cycles``)

    def bind(self, pod: PodInfo, node: str) -> None:
        self.calls.append(("bind", pod.name, node))

    def reserved(self, pod: PodInfo, node: str) -> None:
        self.calls.append(("reserved", pod.name, node))

    def unreserved(self, pod: PodInfo) -> None:
        self.calls.append(("unreserved", pod.name))

    def preempt(self, victims: list[Victim], preemptor: str, preemptor_priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        self.calls.append(("preempt", tuple(sorted((v.pod.name, v.node) for v in victims)), preemptor, preemptor_priority, message, preemptor_kind))

    def attempted(self, pod: PodInfo) -> None:
        self.calls.append(("attempted", pod.name))

    def group_attempted(self, key: str) -> None:
        self.calls.append(("group_attempted", key))

    def attempt_finished(self, ref: str, *, bound: bool) -> None:
        self.calls.append(("attempt_finished", ref, bound))

    def scheduling_failed(self, pod: PodInfo, message: str) -> None:
        self.calls.append(("scheduling_failed", pod.name, message))

    def gated(self, pod: PodInfo, message: str) -> None:
        self.calls.append(("gated", pod.name, message))


def harness(
    nodes: Iterable[Node] = (),
    assigned: Iterable[tuple[Pod, str]] = (),
    *,
    policy: str = "gang",
    config: SchedulerConfig | None = None,
    resources: Iterable[str] = (),
    now: int = 0,
    seed: int | None = None,
) -> tuple[Scheduler, Framework]:
    """A scheduler with ``nodes`` added and ``assigned`` pods bound to the named nodes (in order),
    and its default-scheduler framework. The cluster is ``sched.cluster`` (a ``FakeCluster``)."""
    nodes, assigned = list(nodes), list(assigned)
    names = set(RESOURCES) | set(resources)
    for n in nodes:
        names.update(n.allocatable)
    for p, _ in assigned:
        names.update(p.spec.requests)
    cluster = FakeCluster(now=now)
    rng = np.random.default_rng(seed) if seed is not None else None
    sched = Scheduler(config or SchedulerConfig(), POLICIES[policy], ResourceIndex(names), cluster, EventLog(), rng)
    for n in nodes:
        sched.on_node_add(n)
    for p, node_name in assigned:
        sched.on_pod_assigned(p, cluster.next_uid(), node_name)
    return sched, sched.frameworks[DEFAULT_SCHEDULER]


def pod_info(sched: Scheduler, pod: Pod) -> PodInfo:
    """The PodInfo the scheduler builds for ``pod`` (not added to the scheduler)."""
    return sched.make_pod_info(pod, sched.cluster.next_uid(), sched.cluster.now)  # type: ignore[attr-defined]


def rows(sched: Scheduler, *names: str) -> np.ndarray:
    """Node rows of ``names``; without names every live node in node-list order."""
    if not names:
        return sched.nodes.order.copy()
    return np.array([sched.nodes.row_of[n] for n in names], dtype=np.int64)


def node(name: str, labels: Mapping[str, str] | None = None, *, allocatable: Mapping[str, int] | None = None,
         taints: tuple[Taint, ...] = (), unschedulable: bool = False) -> Node:
    """A node with exactly these labels (no hostname label added) and raw allocatable amounts."""
    alloc = dict(allocatable) if allocatable is not None else {"cpu": 4000, "memory": 16 * 2**30, "pods": 110}
    return Node(name=name, labels=dict(labels or {}), allocatable=alloc, taints=taints, unschedulable=unschedulable)


def pod(name: str = "p", namespace: str = "default", *, containers: list[Mapping[str, int]] | None = None,
        init: list[Mapping[str, int]] = (), sidecars: list[Mapping[str, int]] = (), overhead: Mapping[str, int] | None = None,
        labels: Mapping[str, str] | None = None, node_selector: Mapping[str, str] | None = None, affinity: Affinity | None = None,
        tolerations: tuple[Toleration, ...] = (), priority: int = 0, preemption_policy: str = "PreemptLowerPriority", node_name: str = "", group: str = "",
        gates: tuple[str, ...] = (), scheduler_name: str = DEFAULT_SCHEDULER) -> Pod:
    """A pod whose effective request folds ``containers``, ``init`` containers and ``overhead`` as
    the loader does (``sidecars`` are restartable init containers, listed after ``init``);
    ``containers=None`` is one container without requests."""
    app = [dict(c) for c in containers] if containers is not None else [{}]
    inits = [(dict(c), False) for c in init] + [(dict(c), True) for c in sidecars]
    requests = pod_requests(app, inits, dict(overhead or {}))
    over = {k: v for k, v in (overhead or {}).items() if k in ("cpu", "memory")}
    nz = pod_requests([nonzero(c) for c in app], [(nonzero(c), sidecar) for c, sidecar in inits], over)
    spec = PodSpec(
        requests=requests,
        nonzero_milli_cpu=nz.get("cpu", 0),
        nonzero_memory=nz.get("memory", 0),
        labels=dict(labels or {}),
        node_selector=dict(node_selector or {}),
        affinity=affinity,
        tolerations=tolerations,
        priority=priority,
        preemption_policy=PreemptionPolicy(preemption_policy),
        scheduler_name=scheduler_name,
        node_name=node_name,
        scheduling_group=group,
        scheduling_gates=gates,
    )
    return Pod(namespace=namespace, name=name, spec=spec)
