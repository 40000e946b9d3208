"""A real ``Scheduler`` on a fake cluster, for plugin and framework tests (STYLE: fake the
edges, not the core).

- the cluster is ``fakes.FakeClusterAPI`` (``tests/fakes.py``): a settable ``now``, every call
  recorded in ``calls`` with pod keys (``bind``, ``reserved``, ``preempt``, ...), timers you fire
  by hand; tests run the cycles themselves with ``Scheduler.run_cycles``.
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

from collections.abc import Iterable, Mapping
from dataclasses import replace

import numpy as np

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import DEFAULT_SCHEDULER, Affinity, Node, Pod, Taint, Toleration
from gangsim.eventlog import EventLog
from gangsim.load.expand import nonzero, pod_requests
from gangsim.scheduler.framework.runtime import Framework
from gangsim.scheduler.framework.types import PodInfo, ResourceIndex
from gangsim.scheduler.profiles import POLICIES
from gangsim.scheduler.scheduler import Scheduler

from builders import make_spec
from fakes import FakeClusterAPI

# resource columns every harness has, so pods built later never name an unknown resource
RESOURCES = ("cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "example.com/aaa", "example.com/bbb", "hugepages-2Mi")


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
    and its default-scheduler framework. The cluster is ``sched.cluster`` (a ``FakeClusterAPI``)."""
    nodes, assigned = list(nodes), list(assigned)
    names = set(RESOURCES) | set(resources)
    for n in nodes:
        names.update(n.allocatable)
    for p, _ in assigned:
        names.update(p.spec.requests)
    cluster = FakeClusterAPI(now=now)
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
    spec = make_spec(labels=labels, node_selector=node_selector, affinity=affinity, tolerations=tolerations, priority=priority,
                     preemption_policy=preemption_policy, node_name=node_name, group=group, gates=gates, scheduler_name=scheduler_name)
    spec = replace(spec, requests=requests, nonzero_milli_cpu=nz.get("cpu", 0), nonzero_memory=nz.get("memory", 0))
    return Pod(namespace=namespace, name=name, spec=spec)
