"""Raw object documents → api objects, one decoder per kind.

``Decoder.decode`` checks kind and apiVersion, decodes metadata and the gangsim annotations, then
the kind's fields. Every problem is an ``InputError`` located at file, line and object.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import orjson

from gangsim.api.devices import GPU
from gangsim.api.objects import DEFAULT_NODE_PODS, Job, Node, NodePool, Pod, PodDisruptionBudget, PodGroupPolicy, PodSpec, PolicyKind, Source, object_ref
from gangsim.api.quantity import PODS, is_extended_resource
from gangsim.errors import InputError, forbidden, invalid, required
from gangsim.load.controllers.registry import CONTROLLERS, Context
from gangsim.load.expand import HOSTNAME_LABEL, inherit_times
from gangsim.load.fields import Obj, Shown, check_name, check_qualified, duplicate, shown
from gangsim.load.limits import MAX_INT32, MAX_NODES_PER_POOL, MAX_PODS_PER_JOB, check_count, check_seconds_ms
from gangsim.load.composite import decode_composite_pod_group, decode_workload
from gangsim.load.groups import decode_pod_group, decode_policy
from gangsim.load.meta import GANGSIM_PREFIX, GPU_SHARE, JOB_NAME_MAX, OBJECT_KINDS, POD_CREATION_INTERVAL, Meta, check_type, controller_job, decode_meta, gangsim_annotations, raw_ref
from gangsim.load.podspec import decode_pod_spec, per_pod_times, resource_map, scheduling_group_name
from gangsim.load.priority import Priorities, decode_priority_class
from gangsim.load.selectors import label_selector, taints
from gangsim.load.shared import SHARED_KINDS, Shared

_TOP = {"apiVersion", "kind", "metadata", "spec", "status"}
_NODE_SPEC_HARMLESS = {"providerID", "podCIDR", "podCIDRs", "externalID", "configSource", "doNotUseExternalID"}
_JOB_SPEC_HARMLESS = {
    "backoffLimit", "backoffLimitPerIndex", "maxFailedIndexes", "activeDeadlineSeconds", "ttlSecondsAfterFinished",
    "selector", "manualSelector", "podFailurePolicy", "podReplacementPolicy", "successPolicy", "managedBy",
}  # fmt: skip
_PERCENT = re.compile(r"^[0-9]+%$")
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Said once per trace (folded over every object): what gangsim does with admission controls it does not model.
SUSPENDED = "spec.suspend: true"
KUEUE_QUEUE = f"label {KUEUE_QUEUE_LABEL}"
_FOLDED = {
    SUSPENDED: "gangsim has no Kueue or other admission model: replayed as admitted (unsuspended) at creation",
    KUEUE_QUEUE: "gangsim has no Kueue model (no queues, quotas or admission order): replayed as admitted at creation",
}


@dataclass(slots=True)
class Decoded:
    kind: str
    namespace: str
    name: str
    obj: object  # Node | NodePool | Pod | Job | PriorityClass | PodDisruptionBudget | PodGroup | Workload
    meta: Meta


class Warnings:
    """Harmless things the loader ignored; repeated ones are folded into one line."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._seen: set[str] = set()
        self._status: dict[str, list[str]] = {}
        self._folded: dict[str, list[str]] = {}
        self._ignored: dict[str, list[str]] = {}

    def add(self, message: str) -> None:
        if message not in self._seen:
            self._seen.add(message)
            self._lines.append(message)

    def ignored_status(self, ref: str) -> None:
        kind = ref.split(" ", 1)[0]
        self._status.setdefault(kind, []).append(ref)

    def fold(self, topic: str, ref: str) -> None:
        """``topic`` (a key of ``_FOLDED``) seen on ``ref``: one line for the whole trace."""
        self._folded.setdefault(topic, []).append(ref)

    def notices(self) -> list[str]:
        """The folded lines: what gangsim does instead of a feature it does not model (shown by every command)."""
        out = []
        for topic, refs in self._folded.items():
            where = refs[0] if len(refs) == 1 else f"{len(refs)} objects (e.g. {refs[0]})"
            out.append(f"{where}: {topic}: {_FOLDED[topic]}")
        return out

    def ignored_field(self, kind: str, path: str) -> None:
        """A field of a workload kind that cannot change scheduling: one warning per kind."""
        fields = self._ignored.setdefault(kind, [])
        if path not in fields:
            fields.append(path)

    def size(self) -> int:
        """How many things were noted so far (grows with every note, also a repeated one)."""
        return len(self._lines) + len(self._seen) + sum(map(len, self._status.values())) + sum(map(len, self._folded.values())) + sum(map(len, self._ignored.values()))

    def result(self) -> list[str]:
        out = list(self._lines) + self.notices()
        for kind, fields in self._ignored.items():
            out.append(f"{kind}: ignored fields that do not change scheduling: {', '.join(fields)}")
        for kind, refs in self._status.items():
            if len(refs) == 1:
                out.append(f"ignored status of {refs[0]}")
            else:
                out.append(f"ignored status of {len(refs)} {kind}s (e.g. {refs[0]}): gangsim replays objects, not their recorded state")
        return out


class Decoder:
    """``share_identical`` (the streaming loader's): a JSON Pod, Job or PodGroup document identical
    to an earlier one but for its names (``metadata.name``, the PodGroup its pods name) is not
    decoded again (``gangsim.load.shared``: scheduler_perf shapes write 50,000 such pods, gang
    traces a PodGroup and a Job per gang): the earlier one's object is reused with these names
    and source, after the names themselves are checked. Only documents whose decoding warned about
    nothing are shared, and never YAML ones (their lines differ); ``False`` (the reference path)
    decodes every document."""

    def __init__(self, priorities: Priorities, warnings: Warnings, *, share_identical: bool = False) -> None:
        self.priorities = priorities
        self.warnings = warnings
        self._specs: dict[bytes, PodSpec] = {}
        self._shared = Shared(warnings.size) if share_identical else None
        self._decoders: dict[str, Callable[[Obj, Meta, Source], object]] = {
            "Node": self._node,
            "NodePool": self._node_pool,
            "Pod": self._pod,
            "Job": self._job,
            "PriorityClass": lambda doc, meta, src: decode_priority_class(doc, meta, src),
            "PodDisruptionBudget": self._pdb,
            "PodGroup": lambda doc, meta, src: decode_pod_group(doc, meta, self.priorities, src),
            "CompositePodGroup": lambda doc, meta, src: decode_composite_pod_group(doc, meta, self.priorities, src),
            "Workload": lambda doc, meta, src: decode_workload(doc, meta, self.priorities, src),
        }
        # workload controllers (gangsim.load.controllers): JobSet, LeaderWorkerSet, … → Expansion
        self.controllers = Context(priorities, warnings.add, warnings.ignored_field, self._pod_spec)
        for kind, controller in CONTROLLERS.items():
            self._decoders[kind] = lambda doc, meta, src, c=controller: c(self.controllers, doc, meta, src)

    def decode(self, raw: Mapping, source: Source, *, status_warning: bool = True) -> Decoded:
        """Decode one object document; errors are located at ``source`` and the object."""
        if self._shared is not None and type(raw) is dict and (kind := raw.get("kind")) in SHARED_KINDS:
            return self._shared.decode(raw, kind, source, lambda: self._decode(raw, source, status_warning))  # type: ignore[return-value]
        return self._decode(raw, source, status_warning)

    def _decode(self, raw: Mapping, source: Source, status_warning: bool) -> Decoded:
        kind = ""
        try:
            kind = check_type(raw, source.line, allowed=OBJECT_KINDS)
            doc = Obj(raw, "", source.line)
            rule, max_len = ("subdomain", JOB_NAME_MAX) if kind == "Job" else ("subdomain", None)
            meta = decode_meta(doc, kind, name_rule=rule, name_max=max_len, warn=self.warnings.add)
            obj = self._decoders[kind](doc, meta, source)
        except InputError as exc:
            raise exc.located(file=source.file, line=source.line, obj=raw_ref(kind, raw) if kind else None) from None
        if status_warning and kind == "Pod" and raw.get("status"):
            self.warnings.ignored_status(raw_ref(kind, raw))
        return Decoded(kind, meta.namespace, meta.name, obj, meta)

    # --- nodes ---------------------------------------------------------------------------------

    def _node_body(self, spec: Obj | None, status: Obj | None, owner: Obj, name: str, labels: dict[str, str], source: Source, share: tuple[str, Obj | None] = ("", None)) -> Node:
        node_taints: tuple = ()
        unschedulable = False
        if spec is not None:
            spec.check_keys({"taints", "unschedulable"} | _NODE_SPEC_HARMLESS)
            node_taints = taints(spec)
            unschedulable = spec.bool("unschedulable")
        if status is not None and "allocatable" in status:
            allocatable = resource_map(status, "allocatable", node=True)
        elif status is not None and "capacity" in status:
            allocatable = resource_map(status, "capacity", node=True)
        else:
            where = status or owner
            path = status.fp("allocatable") if status else owner.fp("status.allocatable")
            raise where.error("allocatable" if status else "status", required(path, "a node needs a size: set status.allocatable (or status.capacity)"))
        allocatable.setdefault(PODS, DEFAULT_NODE_PODS)
        labels = dict(labels)
        labels.setdefault(HOSTNAME_LABEL, name)
        if share[0]:
            _check_gpu_share(share[1], share[0], allocatable)  # type: ignore[arg-type]
        return Node(name, labels, allocatable, node_taints, unschedulable, None, source, share[0])

    def _node(self, doc: Obj, meta: Meta, source: Source) -> Node:
        doc.check_keys(_TOP)
        return self._node_body(doc.obj("spec"), doc.obj("status"), doc, meta.name, meta.labels, source, _gpu_share_of(doc))

    def _node_pool(self, doc: Obj, meta: Meta, source: Source) -> NodePool:
        doc.check_keys(_TOP)
        spec = doc.obj("spec", req=True)
        spec.check_keys({"count", "template", "topology"})
        if spec.raw("count") is None:
            raise spec.error("count", required(spec.fp("count")))
        count = _count(spec, "count", MAX_NODES_PER_POOL)
        template = spec.obj("template", req=True)
        template.check_keys({"metadata", "spec", "status"})
        labels: dict[str, str] = {}
        tmeta = template.obj("metadata")
        if tmeta is not None:
            tmeta.check_keys({"labels", "annotations"})
            labels = tmeta.labels("labels")
            for key in tmeta.mapping("annotations"):
                if key.startswith(GANGSIM_PREFIX):
                    ann = tmeta.obj("annotations")
                    raise ann.error(key, forbidden(f"{ann.path}[{key}]", f"{key} is not read on a NodePool's template: set it on the NodePool"))
        node = self._node_body(template.obj("spec"), template.obj("status"), template, meta.name, labels, source, _gpu_share_of(doc))
        return NodePool(meta.name, count, node, source, _pool_topology(spec, labels))

    # --- workloads -----------------------------------------------------------------------------

    def _pod(self, doc: Obj, meta: Meta, source: Source) -> Pod:
        doc.check_keys(_TOP)
        if KUEUE_QUEUE_LABEL in meta.labels:
            self.warnings.fold(KUEUE_QUEUE, _ref("Pod", meta, source))
        spec = self._pod_spec(doc.obj("spec", req=True), meta.labels, meta.times)
        return Pod(meta.namespace, meta.name, spec, job=controller_job(doc), source=source)

    def _pod_spec(self, spec_obj: Obj, labels: dict[str, str], times: dict[str, int]) -> PodSpec:
        """Recorded and imported traces repeat identical specs that differ only in their PodGroup
        and their durations: decode each distinct (spec, labels) once, then set those two."""
        raw = spec_obj.d
        shape = {k: v for k, v in raw.items() if k != "schedulingGroup"} if "schedulingGroup" in raw else raw
        try:
            key = orjson.dumps((shape, labels), option=orjson.OPT_SORT_KEYS, default=str)
        except TypeError:  # a value orjson cannot encode (an integer beyond 64 bits): the decoder names it
            return decode_pod_spec(spec_obj, labels=labels, times=times, priorities=self.priorities)
        spec = self._specs.get(key)
        if spec is None:
            spec = decode_pod_spec(spec_obj, labels=labels, times=times, priorities=self.priorities)
            self._specs[key] = spec
            return spec
        group = scheduling_group_name(spec_obj)
        own = per_pod_times(times)
        if group != spec.scheduling_group or any(getattr(spec, k) != v for k, v in own.items()):
            spec = replace(spec, scheduling_group=group, **own)
        return spec

    def _job(self, doc: Obj, meta: Meta, source: Source) -> Job:
        doc.check_keys(_TOP)
        spec = doc.obj("spec", req=True)
        spec.check_keys({"parallelism", "completions", "completionMode", "template", "suspend", "scheduling"} | _JOB_SPEC_HARMLESS)
        parallelism = 1 if spec.raw("parallelism") is None else _count(spec, "parallelism", MAX_PODS_PER_JOB)
        completions = None if spec.raw("completions") is None else _count(spec, "completions", MAX_PODS_PER_JOB)
        indexed = spec.enum("completionMode", ("NonIndexed", "Indexed")) == "Indexed"
        if indexed and completions is None:
            # batch validation (ValidateJobSpec): Indexed needs completions
            raise spec.error("completions", required(spec.fp("completions"), "when completion mode is Indexed"))
        backoff = None if spec.raw("backoffLimit") is None else check_count(spec.raw("backoffLimit"), spec.fp("backoffLimit"), MAX_INT32, line=spec.ln("backoffLimit"))
        deadline = None
        if spec.raw("activeDeadlineSeconds") is not None:
            deadline = check_seconds_ms(spec.raw("activeDeadlineSeconds"), spec.fp("activeDeadlineSeconds"), line=spec.ln("activeDeadlineSeconds"))
        ref = _ref("Job", meta, source)
        if spec.bool("suspend"):
            self.warnings.fold(SUSPENDED, ref)
        if KUEUE_QUEUE_LABEL in meta.labels:
            self.warnings.fold(KUEUE_QUEUE, ref)
        template = spec.obj("template", req=True)
        template.check_keys({"metadata", "spec"})
        labels: dict[str, str] = {}
        times: dict[str, int] = {}
        tmeta = template.obj("metadata")
        if tmeta is not None:
            labels = tmeta.labels("labels")
            times = gangsim_annotations(tmeta, "template")
        pod_spec = self._pod_spec(template.obj("spec", req=True), labels, inherit_times(meta.times, times))
        policy, explicit = self._job_workload(spec, parallelism, completions, indexed, pod_spec)
        if completions is not None and completions != parallelism and (pod_spec.scheduling_group or explicit):
            # gangsim's PodGroup gang is one distributed job that ends together: no waves in it
            self.warnings.add(
                f"{ref}: spec.completions ({completions}) differs from spec.parallelism ({parallelism}) while its pods form a "
                "PodGroup gang: gangsim runs parallelism pods as one gang and ignores completions"
            )
            completions = None
        return Job(
            meta.namespace, meta.name, parallelism, pod_spec, source,
            pod_creation_interval_ms=meta.times.get(POD_CREATION_INTERVAL, 0),
            completions=completions, indexed=indexed, backoff_limit=backoff, active_deadline_ms=deadline,
            workload_policy=policy, workload_explicit=explicit,
        )  # fmt: skip

    def _job_workload(self, spec: Obj, parallelism: int, completions: int | None, indexed: bool, pod_spec: PodSpec) -> tuple[PodGroupPolicy | None, bool]:
        """KEP-5547: the PodGroup policy the Job controller compiles, and whether ``spec.scheduling``
        asked for it. ``spec.scheduling``: its policy, an omitted ``gang.minCount`` defaulted to
        parallelism (at least 1; ``defaultMinCountForJob``). Without it, the v1.36 controller's
        inference (``shouldManageWorkloadForJob``, ``buildPodGroupTemplates``): a gang of minCount
        parallelism for an Indexed Job with parallelism > 1 and completions == parallelism whose pod
        template names no PodGroup."""
        sched = spec.obj("scheduling")
        if sched is not None:
            if pod_spec.scheduling_group:
                raise spec.error("scheduling", invalid(spec.fp("scheduling"), Shown({}), "may not be set together with spec.template.spec.schedulingGroup"))
            sched.check_keys({"schedulingPolicy", "schedulingConstraints", "disruptionMode"}, {"resourceClaims": "gangsim does not model dynamic resource allocation (resource claims)"})
            data = {**sched.d, **_template_priority(pod_spec)}
            gang = (sched.d.get("schedulingPolicy") or {}).get("gang") if isinstance(sched.d.get("schedulingPolicy"), Mapping) else None
            if isinstance(gang, Mapping) and gang.get("minCount") is None:
                data["schedulingPolicy"] = {"gang": {**gang, "minCount": max(1, parallelism)}}
            policy = decode_policy(Obj(data, sched.path, sched.line), self.priorities)
            if policy.kind is PolicyKind.GANG and policy.min_count > parallelism and parallelism > 0:
                raise sched.error("schedulingPolicy", invalid(sched.fp("schedulingPolicy.gang.minCount"), policy.min_count, f"must be less than or equal to spec.parallelism ({parallelism})"))
            return policy, True
        if not pod_spec.scheduling_group and indexed and parallelism > 1 and completions == parallelism:
            data = {"schedulingPolicy": {"gang": {"minCount": parallelism}}, **_template_priority(pod_spec)}
            return decode_policy(Obj(data, spec.fp("template"), spec.line), self.priorities), False
        return None, False

    def _pdb(self, doc: Obj, meta: Meta, source: Source) -> PodDisruptionBudget:
        doc.check_keys(_TOP)
        spec = doc.obj("spec", req=True)
        spec.check_keys({"selector", "minAvailable", "maxUnavailable", "unhealthyPodEvictionPolicy"})
        selector = label_selector(spec.obj("selector"))
        min_available = _int_or_percent(spec, "minAvailable")
        max_unavailable = _int_or_percent(spec, "maxUnavailable")
        if min_available is not None and max_unavailable is not None:
            both = Shown({"minAvailable": min_available, "maxUnavailable": max_unavailable})
            raise spec.error("maxUnavailable", invalid(spec.path, both, "minAvailable and maxUnavailable cannot be both set"))
        if min_available is None and max_unavailable is None:
            raise spec.error("minAvailable", required(spec.fp("minAvailable"), "one of minAvailable or maxUnavailable is required"))
        return PodDisruptionBudget(meta.namespace, meta.name, selector, min_available, max_unavailable, source)


def _ref(kind: str, meta: Meta, source: Source) -> str:
    """How a message names the object being decoded: a ``generateName`` object has no name yet
    (it is named in creation order after decoding), so it is ``<prefix>*`` at its file and line."""
    if meta.name:
        return object_ref(kind, meta.namespace, meta.name)
    return f"{object_ref(kind, meta.namespace, meta.generate_name + '*')} at {source.where()}"


def _template_priority(pod_spec: PodSpec) -> dict[str, object]:
    """The pod template's priority for the Job's PodGroup (the controller's workloadbuilder
    ``DefaultConfig.PriorityClassName`` is the template's): the scheduler requires a group's pods
    to share its priority (``validatePodGroup``), so a group without it would never schedule."""
    if pod_spec.priority_class_name:
        return {"priorityClassName": pod_spec.priority_class_name}
    return {"priority": pod_spec.priority} if pod_spec.priority else {}


def _gpu_share_of(doc: Obj) -> tuple[str, Obj | None]:
    """The ``gangsim.dev/gpu-share`` annotation of a Node or NodePool: a resource name (``api.devices``)."""
    meta = doc.obj("metadata")
    annotations = meta.mapping("annotations") if meta is not None else {}
    if GPU_SHARE not in annotations:
        return "", None
    ann = Obj(annotations, meta.fp("annotations"), meta.ln("annotations"))  # type: ignore[union-attr]
    value = annotations[GPU_SHARE]
    path = f"{ann.path}[{GPU_SHARE}]"
    if not isinstance(value, str) or not value or "/" not in value or not is_extended_resource(value):
        raise ann.error(GPU_SHARE, invalid(path, shown(value), "must name an extended resource (e.g. alibaba.com/gpu-milli) that is shared per GPU"))
    if value == GPU:
        raise ann.error(GPU_SHARE, invalid(path, value, f"the share must be another resource than {GPU} (the devices)"))
    return value, ann


def _check_gpu_share(ann: Obj, share: str, allocatable: Mapping[str, int]) -> None:
    """A declared share splits evenly over the node's GPUs."""
    gpus, units = allocatable.get(GPU, 0), allocatable.get(share, 0)
    path = f"{ann.path}[{GPU_SHARE}]"
    if gpus <= 0 or units <= 0 or units % gpus:
        detail = f"allocatable {share} ({units}) must be a multiple of {GPU} ({gpus}), both positive"
        raise ann.error(GPU_SHARE, invalid(path, share, detail))


def _count(o: Obj, key: str, maximum: int) -> int:
    """A count field (``parallelism``, ``count``): an integer in [0, maximum], checked before anything is expanded."""
    return check_count(o.raw(key), o.fp(key), maximum, line=o.ln(key))


def _int_or_percent(o: Obj, key: str) -> int | str | None:
    value = o.raw(key)
    if value is None:
        return None
    if isinstance(value, str):
        if not _PERCENT.match(value):
            raise o.error(key, invalid(o.fp(key), value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"))
        if int(value[:-1]) > 100:
            raise o.error(key, invalid(o.fp(key), value, "must not be greater than 100%"))
        return value
    return o.int(key, lo=0)


def _pool_topology(spec: Obj, labels: dict[str, str]) -> tuple[tuple[str, int], ...]:
    """``spec.topology: [{key: block, nodes: 32}, {key: rack, nodes: 8}]`` (outermost first):
    qualified label keys, not in the template's labels nor repeated, ``nodes`` ≥ 1."""
    out: list[tuple[str, int]] = []
    for level in spec.objs("topology"):
        level.check_keys({"key", "nodes"})
        key = check_qualified(level, "key")
        if key in labels or key in dict(out):
            raise level.error("key", duplicate(level.fp("key"), key, "must not repeat a label of the template or another level"))
        if level.raw("nodes") is None:
            raise level.error("nodes", required(level.fp("nodes")))
        out.append((key, _count(level, "nodes", MAX_NODES_PER_POOL) or 1))
    return tuple(out)
