"""The scheduler's view of a pod (``PodInfo``), built when the informer first sees the pod: its
resource demand as a vector over the cluster's resources, the keys of its node-static Filter
inputs and its KEP-5598 signature (upstream builds its PodInfo in ``framework.NewPodInfo``)."""

from __future__ import annotations

import numpy as np

from gangsim.api.objects import Pod, PodSpec
from gangsim.scheduler.cache.node_table import usage_delta
from gangsim.scheduler.framework.types import PodInfo, ResourceIndex

MAX_CACHED_SPECS = 65536


def pod_static_key(pod: Pod) -> tuple:
    s = pod.spec
    aff = s.affinity
    return (
        s.tolerations,
        tuple(sorted(s.node_selector.items())),
        aff.node_required if aff else None,
        aff.node_preferred if aff else (),
        s.node_name,
    )


def pod_signature(pod: Pod, demand: np.ndarray) -> tuple:
    """KEP-5598 signature: pods with equal signatures get equal Filter/Score results.
    Pods with pod (anti-)affinity or topology spread constraints are unsignable (empty tuple):
    their Filter codes depend on the pods of other nodes."""
    s = pod.spec
    if (s.affinity is not None and s.affinity.has_pod_affinity) or s.topology_spread:
        return ()
    return (pod_static_key(pod), demand.tobytes(), s.nonzero_milli_cpu, s.nonzero_memory, s.scheduler_name)


class PodInfos:
    """Builds each pod's ``PodInfo``. Job pods share their template's PodSpec, so what derives from
    the spec (demand vector, keys, signature, ``usage_delta``) is computed once per spec object."""

    def __init__(self, resources: ResourceIndex) -> None:
        self.resources = resources
        # id(spec) -> (spec, demand, cols, amounts, static key, signature, usage delta)
        self._spec_cache: dict[int, tuple] = {}
        # (requests, non-zero cpu, memory) -> (demand, cols, amounts, usage delta): specs that
        # differ elsewhere (a trace's Jobs each with their own duration) share their arrays
        self._demands: dict[tuple, tuple] = {}

    def make(self, pod: Pod, uid: int, now: int) -> PodInfo:
        derived = self._spec_cache.get(id(pod.spec))
        if derived is None or derived[0] is not pod.spec:
            demand, cols, amounts, delta = self._demand(pod.spec)
            derived = (pod.spec, demand, cols, amounts, pod_static_key(pod), pod_signature(pod, demand), delta)
            if len(self._spec_cache) > MAX_CACHED_SPECS:
                self._spec_cache.clear()
            self._spec_cache[id(pod.spec)] = derived
        _, demand, cols, amounts, static_key, signature, delta = derived
        return PodInfo(
            uid=uid,
            namespace=pod.namespace,
            name=pod.name,
            spec=pod.spec,
            demand=demand,
            fit_cols=cols,
            fit_amounts=amounts,
            created_ms=now,
            group_key=f"{pod.namespace}/{pod.spec.scheduling_group}" if pod.spec.scheduling_group else "",
            static_key=static_key,
            signature=signature,
            usage_delta=delta,
        )

    def _demand(self, spec: PodSpec) -> tuple:
        """The spec's demand vector, its non-zero columns and their amounts, and its
        ``usage_delta``, computed once per distinct (requests, non-zero cpu, memory)."""
        key = (tuple(spec.requests.items()), spec.nonzero_milli_cpu, spec.nonzero_memory)
        found = self._demands.get(key)
        if found is None:
            demand = self.resources.vector(spec.requests, pod=True)
            cols = np.flatnonzero(demand).astype(np.int64)
            found = (demand, cols, demand[cols], usage_delta(demand, spec.nonzero_milli_cpu, spec.nonzero_memory))
            if len(self._demands) > MAX_CACHED_SPECS:
                self._demands.clear()
            self._demands[key] = found
        return found
