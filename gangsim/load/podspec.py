"""Pod specs (of Pods and of Job templates) → ``api.PodSpec``.

An explicit allow-list of spec keys: fields gangsim models, harmless fields it ignores, and
fields that would change scheduling but are not modelled (errors naming the field). Anything
else is an unknown field — most likely a typo such as ``nodeSelecter`` — and also an error.
"""

from __future__ import annotations

from gangsim.api.objects import DEFAULT_TERMINATION_GRACE_MS, DEFAULT_SCHEDULER, PodSpec
from gangsim.api.quantity import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, is_extended_resource, parse_quantity
from gangsim.errors import FieldError, invalid, required, unsupported
from gangsim.load.expand import nonzero, pod_requests
from gangsim.load.fields import Obj, check_name, check_qualified, duplicate, fail, shown
from gangsim.load.limits import MAX_INT64, check_quantity_int64
from gangsim.load.meta import CHECKPOINT_INTERVAL, DURATION, RENDEZVOUS_TIMEOUT
from gangsim.load.priority import Priorities
from gangsim.load.selectors import affinity, tolerations, topology_spread

_MODELLED = {
    "containers", "initContainers", "overhead", "nodeSelector", "affinity", "tolerations", "priorityClassName",
    "priority", "preemptionPolicy", "schedulerName", "nodeName", "schedulingGroup", "schedulingGates",
    "terminationGracePeriodSeconds", "volumes", "topologySpreadConstraints",
}  # fmt: skip
_HARMLESS = {
    "restartPolicy", "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "securityContext",
    "dnsPolicy", "dnsConfig", "hostname", "hostnameOverride", "subdomain", "hostAliases", "imagePullSecrets",
    "enableServiceLinks", "shareProcessNamespace", "hostPID", "hostIPC", "activeDeadlineSeconds", "readinessGates",
    "setHostnameAsFQDN", "os", "hostUsers", "ephemeralContainers",
}  # fmt: skip
_UNMODELLED = {
    "resourceClaims": "gangsim does not model dynamic resource allocation (resource claims)",
    "runtimeClassName": "gangsim does not model RuntimeClasses: give the pod overhead explicitly in spec.overhead",
    "hostNetwork": "gangsim does not model host networking (host ports)",
    "resources": "gangsim does not model pod-level resources: set container requests",
    "workloadRef": "spec.workloadRef was removed in v1.36: use spec.schedulingGroup.podGroupName",
}
_CONTAINER_KEYS = {
    "name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
    "restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
    "securityContext", "stdin", "stdinOnce", "tty",
}  # fmt: skip
_UNMODELLED_VOLUMES = {
    "persistentVolumeClaim": "gangsim does not model persistent volumes",
    "ephemeral": "gangsim does not model ephemeral volumes",
    "csi": "gangsim does not model CSI volumes",
}
_CONTAINER_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)


def check_resource_name(name: object, path: str, line: int | None, *, node: bool) -> str:
    """cpu, memory, ephemeral-storage, hugepages-*, (nodes: pods) or a domain-prefixed extended resource."""
    if not isinstance(name, str) or not name:
        raise fail(invalid(path, shown(name), "must be a resource name"), line)
    if name in _CONTAINER_RESOURCES or name.startswith("hugepages-") or (node and name == PODS):
        return name
    if "/" not in name or not is_extended_resource(name):
        detail = "must be a standard resource for containers" if name == PODS else "must be a standard resource type or fully qualified"
        raise fail(invalid(path, name, detail), line)
    return name


def resource_map(o: Obj, key: str, *, node: bool) -> dict[str, int]:
    """A ``ResourceList`` (``requests``, ``allocatable``…) → canonical ints, each checked
    (string or number, fits int64) by ``limits.check_quantity_int64``."""
    raw = o.mapping(key)
    sub = Obj(raw, o.fp(key), o.ln(key))
    out: dict[str, int] = {}
    for name, value in raw.items():
        path = f"{sub.path}[{name}]"
        line = sub.ln(name)
        check_resource_name(name, path, line, node=node)
        out[name] = check_quantity_int64(name, value, path, line=line)
    return out


def _container(c: Obj, init: bool) -> tuple[dict[str, int], bool]:
    """(effective request, is_sidecar): requests default from limits, per resource."""
    c.check_keys(_CONTAINER_KEYS)
    for port in c.objs("ports"):
        if port.raw("hostPort"):
            raise port.error("hostPort", unsupported(port.fp("hostPort"), "gangsim does not model host ports (NodePorts)"))
    sidecar = init and c.raw("restartPolicy") == "Always"
    res = c.obj("resources")
    if res is None:
        return {}, sidecar
    res.check_keys({"requests", "limits"}, {"claims": "gangsim does not model dynamic resource allocation (resource claims)"})
    requests = resource_map(res, "requests", node=False)
    limits = resource_map(res, "limits", node=False)
    raw_req, raw_lim = res.mapping("requests"), res.mapping("limits")
    req_obj = Obj(raw_req, res.fp("requests"), res.ln("requests"))
    for name, limit in limits.items():
        if name not in requests:
            requests[name] = limit  # API defaulting: a missing request takes the limit
            continue
        have = parse_quantity(raw_req[name])
        cap = parse_quantity(raw_lim[name])
        path = f"{req_obj.path}[{name}]"
        if is_extended_resource(name) and have != cap:
            raise req_obj.error(name, invalid(path, shown(raw_req[name]), f"must be equal to {name} limit of {raw_lim[name]}"))
        if have > cap:
            raise req_obj.error(name, invalid(path, shown(raw_req[name]), f"must be less than or equal to {name} limit of {raw_lim[name]}"))
    return requests, sidecar


def _check_volumes(spec: Obj) -> None:
    for vol in spec.objs("volumes"):
        for key, why in _UNMODELLED_VOLUMES.items():
            if key in vol:
                raise vol.error(key, unsupported(vol.fp(key), why))


def decode_pod_spec(spec: Obj, *, labels: dict[str, str], times: dict[str, int], priorities: Priorities) -> PodSpec:
    """One pod spec; ``times`` holds the parsed gangsim.dev annotations that apply to it."""
    spec.check_keys(_MODELLED | _HARMLESS, _UNMODELLED)
    _check_volumes(spec)
    if not spec.length("containers"):
        raise spec.error("containers", required(spec.fp("containers")))
    app = [_container(c, False)[0] for c in spec.objs("containers")]
    init = [_container(c, True) for c in spec.objs("initContainers")]
    overhead = resource_map(spec, "overhead", node=False)
    requests = pod_requests(app, init, overhead)
    for name, amount in requests.items():
        if amount > MAX_INT64:  # each request fits, their sum does not
            detail = f"the pod's total {name} request must be no more than {MAX_INT64} (int64)"
            raise spec.error("containers", FieldError(spec.fp("containers"), detail))
    nz = pod_requests([nonzero(c) for c in app], [(nonzero(c), s) for c, s in init], {k: v for k, v in overhead.items() if k in (CPU, MEMORY)})

    class_name, priority, pc = priorities.resolve(spec, what="pod")
    grace = spec.int("terminationGracePeriodSeconds", lo=0)
    return PodSpec(
        requests=requests,
        nonzero_milli_cpu=nz.get(CPU, 0),
        nonzero_memory=nz.get(MEMORY, 0),
        labels=labels,
        node_selector=spec.labels("nodeSelector"),
        affinity=affinity(spec.obj("affinity")),
        tolerations=tolerations(spec),
        topology_spread=topology_spread(spec),
        priority_class_name=class_name,
        priority=priority or 0,
        preemption_policy=priorities.preemption_policy(spec, pc),
        scheduler_name=spec.str("schedulerName", DEFAULT_SCHEDULER),
        node_name=check_name(spec, "nodeName", "subdomain", req=False),
        scheduling_group=scheduling_group_name(spec),
        scheduling_gates=_gates(spec),
        termination_grace_ms=DEFAULT_TERMINATION_GRACE_MS if grace is None else grace * 1000,
        **per_pod_times(times),
    )


def scheduling_group_name(spec: Obj) -> str:
    """``spec.schedulingGroup.podGroupName`` ("" without one)."""
    group = spec.obj("schedulingGroup")
    if group is None:
        return ""
    group.check_keys({"podGroupName"})
    return check_name(group, "podGroupName", "subdomain", req=False)


def per_pod_times(times: dict[str, int]) -> dict[str, int | None]:
    """The PodSpec fields the gangsim.dev annotations set."""
    return {
        "duration_ms": times.get(DURATION),
        "checkpoint_interval_ms": times.get(CHECKPOINT_INTERVAL),
        "rendezvous_timeout_ms": times.get(RENDEZVOUS_TIMEOUT),
    }


def _gates(spec: Obj) -> tuple[str, ...]:
    names: list[str] = []
    for gate in spec.objs("schedulingGates"):
        gate.check_keys({"name"})
        name = check_qualified(gate, "name")
        if name in names:
            raise gate.error("name", duplicate(gate.fp("name"), name))
        names.append(name)
    return tuple(names)

