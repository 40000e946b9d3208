"""KEP-5547: the Workload and PodGroup the Job controller creates for a Job (WorkloadWithJob).

Under the ``gang`` and ``permit`` policies (GenericWorkload on) a Job whose ``workload_policy`` is
set (gangsim.load.decode ``_job_workload``: from ``spec.scheduling``, or inferred for an Indexed Job
with parallelism == completions > 1 unless switched off) gets, at its creation and in this order
(KEP-5547 "Object Creation Order"):

1. a ``Workload`` ``<job>-<hash>`` with ``spec.controllerRef`` to the Job and one
   ``PodGroupTemplate`` ``<job>-pgt-0`` (``computeWorkloadName``, ``podGroupTemplateName``);
2. a ``PodGroup`` ``<workload>-<template>-<hash>`` (``computePodGroupName``) with the template's policy;
3. the Job, whose pods name that PodGroup (``spec.schedulingGroup.podGroupName``).

Names follow kubernetes ``pkg/controller/job/job_scheduling_manager.go``. The Workload's hash is
FNV-32a of the Job's UID there; gangsim's objects have no UID, so it hashes ``namespace/name``
(stable across replays). A parallelism change resyncs an inferred or defaulted ``minCount``
(``syncGangMinCount``); deleting the Job deletes both (garbage collection).
"""

from __future__ import annotations

from dataclasses import replace

from gangsim.api.naming import pod_group_name, template_name, workload_name
from gangsim.api.objects import Job, PodGroup, PodGroupTemplate, Workload
from gangsim.api.trace import Op, TraceEvent

def job_workload_events(events: list[TraceEvent], *, infer: bool = True) -> list[TraceEvent]:
    """``events`` with each managed Job's Workload and PodGroup created before it (and deleted
    after it), and its pods pointed at the PodGroup; other events unchanged."""
    out: list[TraceEvent] = []
    groups: dict[str, PodGroup] = {}  # Job key -> its PodGroup
    for ev in events:
        job = ev.obj if ev.kind == "Job" else None
        key = f"{ev.namespace}/{ev.name}"
        if ev.op is Op.CREATE and isinstance(job, Job) and job.workload_managed(infer):
            wl, tpl = workload_name(job), template_name(job)
            group = PodGroup(job.namespace, pod_group_name(wl, tpl), job.workload_policy, workload_ref=(wl, tpl), source=job.source)  # type: ignore[arg-type]
            workload = Workload(job.namespace, wl, (PodGroupTemplate(tpl, job.workload_policy),), ("batch", "Job", job.name), job.source)  # type: ignore[arg-type]
            groups[key] = group
            out.append(_event(ev, Op.CREATE, "Workload", wl, workload))
            out.append(_event(ev, Op.CREATE, "PodGroup", group.name, group))
            out.append(replace(ev, obj=_grouped(job, group)))
        elif ev.op is Op.PATCH and isinstance(job, Job) and key in groups:
            group = groups[key]
            if job.workload_policy is not None and job.workload_policy.min_count != group.policy.min_count:
                group = groups[key] = replace(group, policy=replace(group.policy, min_count=job.workload_policy.min_count))
                out.append(_event(ev, Op.PATCH, "PodGroup", group.name, group))
            out.append(replace(ev, obj=_grouped(job, group)))
        elif ev.op is Op.DELETE and ev.kind == "Job" and key in groups:
            group = groups.pop(key)
            out.append(ev)
            out.append(_event(ev, Op.DELETE, "PodGroup", group.name, None))
            out.append(_event(ev, Op.DELETE, "Workload", group.workload_ref[0], None))  # type: ignore[index]
        else:
            out.append(ev)
    return out


def _grouped(job: Job, group: PodGroup) -> Job:
    return replace(job, template=replace(job.template, scheduling_group=group.name))


def _event(ev: TraceEvent, op: Op, kind: str, name: str, obj: object) -> TraceEvent:
    return TraceEvent(ev.at_ms, op, kind, ev.namespace, name, obj, ev.source, ev.order)  # type: ignore[arg-type]


__all__ = ["job_workload_events"]
