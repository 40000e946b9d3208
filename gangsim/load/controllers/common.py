"""What every workload controller shares: the expansion it returns, its pod templates, the
Workload + PodGroup it creates, and how it treats fields it does not model.

Fields: a controller lists the fields it models and the fields that would change scheduling but
are not modelled (an error naming the field, exit 2). Any other field of the object's spec cannot
change where or when its pods are placed (networking, TTLs, rollout strategies, …): it is ignored
and reported in ONE warning per kind (``Warnings.ignored_field``). Pod templates are decoded as a
Job's are (``load.podspec``: strict).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace

from gangsim.api.objects import (
    DisruptionMode, OwnedPods, PodGroup, PodGroupPolicy, PodGroupTemplate, PodSpec, PolicyKind, Source, Workload, object_ref,
)  # fmt: skip
from gangsim.errors import invalid, unsupported
from gangsim.load.expand import inherit_times
from gangsim.load.fields import Obj
from gangsim.load.limits import MAX_PODS_PER_JOB, check_count
from gangsim.load.meta import RENDEZVOUS_TIMEOUT, Meta, gangsim_annotations
from gangsim.load.priority import Priorities

Child = tuple[str, str, str, object]  # (kind, namespace, name, api object)


@dataclass(slots=True)
class Expansion:
    """What a controller creates for one object, in creation order: its Workload, its PodGroups,
    then the Jobs / pods that reference them (a pod created before its PodGroup would wait at
    PreEnqueue). A TrainingRuntime expands to nothing: it is a template for TrainJobs."""

    kind: str
    namespace: str
    name: str
    children: list[Child] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return object_ref(self.kind, self.namespace, self.name)


@dataclass(slots=True)
class Context:
    """What a controller reads besides its object."""

    priorities: Priorities
    warn: Callable[[str], None]
    ignored: Callable[[str, str], None]  # (kind, field path): one warning per kind
    pod_spec: Callable[[Obj, dict[str, str], dict[str, int]], PodSpec]  # the decoder's (cached) pod spec decoding
    runtimes: dict[tuple[str, str, str], tuple[Obj, Meta, Source]] = field(default_factory=dict)


def spec_keys(ctx: Context, kind: str, o: Obj, modelled: Collection[str], unmodelled: Mapping[str, str]) -> None:
    """``unmodelled`` fields are errors when set; fields outside ``modelled`` are ignored (warned once per kind)."""
    for key, value in o.d.items():
        if key in modelled or value is None:
            continue
        if key in unmodelled:
            if value is not False and value != [] and value != {}:
                raise o.error(key, unsupported(o.fp(key), unmodelled[key]))
            continue
        ctx.ignored(kind, o.fp(key))


def forbid_annotations(o: Obj | None, keys: Mapping[str, str]) -> None:
    """Annotations that change scheduling in a way gangsim does not model (exclusive placement…)."""
    if o is None:
        return
    annotations = o.mapping("annotations")
    for key, why in keys.items():
        if key in annotations:
            ann = Obj(annotations, o.fp("annotations"), o.ln("annotations"))
            raise ann.error(key, unsupported(f"{ann.path}[{key}]", why))


def count(o: Obj, key: str, default: int, maximum: int = MAX_PODS_PER_JOB) -> int:
    """A replica count (``replicas``, ``size``, ``parallelism``), through ``limits.check_count``."""
    if o.raw(key) is None:
        return default
    return check_count(o.raw(key), o.fp(key), maximum, line=o.ln(key))


def check_total(o: Obj, key: str, total: int) -> None:
    """The pods one object would create, checked before any is built."""
    if total > MAX_PODS_PER_JOB:
        raise o.error(key, invalid(o.fp(key), total, f"would create {total} pods: must be no more than {MAX_PODS_PER_JOB} per object"))


def template_times(t: Obj, inherited: Mapping[str, int]) -> dict[str, int]:
    """The gangsim.dev annotations of a pod template over those of its owners."""
    tmeta = t.obj("metadata")
    own = gangsim_annotations(tmeta, "template") if tmeta is not None else {}
    return inherit_times(inherited, own)


def pod_template(ctx: Context, t: Obj, labels: Mapping[str, str], times: Mapping[str, int]) -> PodSpec:
    """A ``PodTemplateSpec``: its labels plus the controller's, its annotations over ``times``."""
    t.check_keys({"metadata", "spec"})
    tmeta = t.obj("metadata")
    own = tmeta.labels("labels") if tmeta is not None else {}
    # decoded once per template (the decoder caches by spec and labels), then given each pod's labels
    spec = ctx.pod_spec(t.obj("spec", req=True), own, template_times(t, times))
    return replace(spec, labels={**own, **labels}) if labels else spec


def in_group(spec: PodSpec, group: str | None) -> PodSpec:
    """The pod spec with ``schedulingGroup.podGroupName`` set (what the integration writes), unless
    the template names one itself or there is no group."""
    if group is None or spec.scheduling_group:
        return spec
    return replace(spec, scheduling_group=group)


def gang(ctx: Context, owner: Expansion, group_api: str, template: str, groups: list[tuple[str, int]], spec: PodSpec, meta: Meta, source: Source) -> list[Child]:
    """One Workload (``<kind>-<name>``, one gang PodGroupTemplate) and one PodGroup per
    ``(name, minCount)``, at the priority of ``spec`` (the pods'), as a Workload API integration
    would create them. Names: ``workload_name`` / ``pod_group_name`` below."""
    policy = PodGroupPolicy(
        kind=PolicyKind.GANG,
        min_count=1,
        disruption_mode=DisruptionMode.SINGLE,
        priority_class_name=spec.priority_class_name,
        priority=spec.priority,
        preemption_policy=spec.preemption_policy,
    )
    workload = workload_name(owner.kind, owner.name)
    out: list[Child] = []
    biggest = max((m for _, m in groups), default=1)
    wl = Workload(owner.namespace, workload, (PodGroupTemplate(template, replace(policy, min_count=biggest)),), (group_api, owner.kind, owner.name), source)
    out.append(("Workload", owner.namespace, workload, wl))
    for name, min_count in groups:
        pg = PodGroup(owner.namespace, name, replace(policy, min_count=min_count), (workload, template), meta.times.get(RENDEZVOUS_TIMEOUT), source)
        out.append(("PodGroup", owner.namespace, name, pg))
    return out


def workload_name(kind: str, name: str) -> str:
    """``jobset-train``: kinds apart (as Kueue names its Workloads ``<kind>-<name>-<hash>``)."""
    return f"{kind.lower()}-{name}"


def pod_group_name(kind: str, name: str, index: int) -> str:
    return f"{workload_name(kind, name)}-{index}"


def owned_pods(owner: Expansion, name: str, members: list[tuple[str, PodSpec]], source: Source, *, recreate_together: bool = False) -> Child:
    """Pods the controller creates itself, run by gangsim's Job controller under ``name``."""
    job = OwnedPods(owner.namespace, name, len(members), members[0][1], source, members=tuple(members), owner=owner.ref, recreate_together=recreate_together)
    return ("Job", owner.namespace, name, job)


def min_available(o: Obj, key: str, total: int) -> int:
    """A gang size (``minAvailable``) in [1, total]; absent: every pod."""
    if o.raw(key) is None:
        return total
    value = check_count(o.raw(key), o.fp(key), MAX_PODS_PER_JOB, line=o.ln(key))
    if value < 1 or value > total:
        raise o.error(key, invalid(o.fp(key), value, f"must be between 1 and the number of pods ({total})"))
    return value


def group_priority(ctx: Context, o: Obj, key: str, spec: PodSpec) -> PodSpec:
    """``spec`` at the PriorityClass ``o.key`` names (a controller's PodGroup class), if set."""
    name = o.str(key)
    if not name:
        return spec
    pc = ctx.priorities.classes.get(name)
    if pc is None:  # the message of load.priority.Priorities.resolve
        raise o.error(key, invalid(o.fp(key), name, f"no PriorityClass with name {name} was found"))
    return replace(spec, priority_class_name=name, priority=pc.value)
