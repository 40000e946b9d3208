"""``jobset.x-k8s.io/v1alpha2`` JobSet → its child Jobs, one Workload and one PodGroup.

Upstream (kubernetes-sigs/jobset ``pkg/controllers/jobset_controller.go``, constructJob): each
``replicatedJobs[i]`` makes ``replicas`` Jobs named ``<jobset>-<replicatedJob>-<jobIndex>``; the
Job and its pod template carry the labels ``jobset.sigs.k8s.io/jobset-name``,
``replicatedjob-name``, ``replicatedjob-replicas``, ``job-index``, ``job-global-index``,
``global-replicas``, ``group-name`` / ``group-replicas`` / ``job-group-index`` (``groupName``,
default ``default``), ``job-key`` (sha256 of ``<namespace>/<job name>``) and ``restart-attempt``.
A child Job's pods are then the Job controller's: ``<job>-<index>`` in gangsim.

Grouping: JobSet releases no Workload API integration yet (kubernetes-sigs/jobset#969, PR #1250
open). Its documentation (``site/content/en/docs/workload-aware-scheduling/gang_scheduling.md``)
gang-schedules a JobSet with ONE Workload + ONE PodGroup whose minCount is every pod of every
child Job, referenced from the pod templates by ``schedulingGroup.podGroupName``: gangsim creates
exactly that (``jobset-<name>`` / ``jobset-<name>-0``) unless a pod template already names a
PodGroup (then the user's own objects are used and nothing is created).

``startupPolicy: InOrder`` (``jobset_controller.go``, inOrderStartupPolicy): a replicatedJob's Jobs
are created once every pod of the previous replicatedJob's Jobs runs (``ControlledJob.start_after``,
run by ``sim.workloads``). Then gangsim makes one PodGroup per replicatedJob
(``jobset-<name>-<i>``): a single group would wait forever for pods not created yet.
``failurePolicy`` / ``successPolicy`` are ignored (warned): gangsim's Job controller recreates a
failed pod in place and its Jobs never fail, so there is no Job failure to restart the JobSet on.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from gangsim.api.objects import ControlledJob, Source
from gangsim.errors import invalid
from gangsim.load.controllers.common import (
    Context, Expansion, check_total, count, forbid_annotations, gang, in_group, pod_group_name, pod_template, spec_keys,
)  # fmt: skip
from gangsim.load.fields import Obj, duplicate, subdomain_errors
from gangsim.load.meta import JOB_NAME_MAX, POD_CREATION_INTERVAL, Meta, gangsim_annotations
from gangsim.load.expand import inherit_times

KIND = "JobSet"
GROUP = "jobset.x-k8s.io"
PREFIX = "jobset.sigs.k8s.io/"
_EXCLUSIVE = {
    "alpha.jobset.sigs.k8s.io/exclusive-topology": "gangsim does not model JobSet exclusive placement (the pod affinities the webhook injects)",
    "alpha.jobset.sigs.k8s.io/node-selector": "gangsim does not model JobSet exclusive placement by node selector",
}
_SPEC_UNMODELLED = {
    "suspend": "gangsim does not model suspended JobSets",
    "dependsOn": "gangsim does not model replicatedJobs[].dependsOn (use startupPolicy InOrder for Jobs created once the earlier ones run)",
}
_JOB_SPEC = {"parallelism", "completions", "completionMode", "template"}
_JOB_SPEC_UNMODELLED = {"suspend": "gangsim does not model suspended Jobs"}


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    forbid_annotations(doc.obj("metadata"), _EXCLUSIVE)
    spec = doc.obj("spec", req=True)
    return expand(ctx, KIND, spec, meta, source)


def expand(ctx: Context, kind: str, spec: Obj, meta: Meta, source: Source) -> Expansion:
    """A JobSet spec (also a TrainingRuntime's ``template.spec``, for ``kind`` TrainJob)."""
    spec_keys(ctx, kind, spec, {"replicatedJobs", "startupPolicy", "failurePolicy", "successPolicy"}, _SPEC_UNMODELLED)
    startup = spec.obj("startupPolicy")
    in_order = False
    if startup is not None:
        startup.check_keys({"startupPolicyOrder"})
        in_order = startup.enum("startupPolicyOrder", ("AnyOrder", "InOrder")) == "InOrder"
    for policy in ("failurePolicy", "successPolicy"):
        if policy in spec:
            ctx.ignored(kind, spec.fp(policy))
    owner = Expansion(kind, meta.namespace, meta.name)
    rjobs = list(spec.objs("replicatedJobs"))
    if not rjobs:
        raise spec.error("replicatedJobs", invalid(spec.fp("replicatedJobs"), "[]", "must have at least one item"))
    # 1. read every replicatedJob (counts checked before anything is built)
    shapes: list[tuple[Obj, str, int, int, Obj, str]] = []
    names: set[str] = set()
    total = 0
    for rj in rjobs:
        spec_keys(ctx, kind, rj, {"name", "replicas", "template", "groupName"}, _SPEC_UNMODELLED)
        name = rj.str("name", req=True)
        if name in names:
            raise rj.error("name", duplicate(rj.fp("name"), name))
        names.add(name)
        replicas = count(rj, "replicas", 1)
        jt = rj.obj("template", req=True)
        jt.check_keys({"metadata", "spec"})
        jspec = jt.obj("spec", req=True)
        spec_keys(ctx, kind, jspec, _JOB_SPEC, _JOB_SPEC_UNMODELLED)
        parallelism = count(jspec, "parallelism", 1)
        completions = count(jspec, "completions", parallelism)
        if completions != parallelism:
            ctx.warn(f"{owner.ref}: {jspec.fp('completions')} ({completions}) differs from parallelism ({parallelism}); gangsim runs parallelism pods per Job")
        total += replicas * parallelism
        check_total(rj, "replicas", total)
        shapes.append((rj, name, replicas, parallelism, jt, rj.str("groupName", "default")))
    global_replicas = sum(s[2] for s in shapes)
    group_replicas: dict[str, int] = {}
    for shape in shapes:
        group_replicas[shape[5]] = group_replicas.get(shape[5], 0) + shape[2]
    group_index = dict.fromkeys(group_replicas, 0)
    # 2. the Jobs, each pod template labelled as the JobSet controller labels it
    jobs: list[list[ControlledJob]] = []  # per replicatedJob
    user_group = False
    first_spec = None
    global_index = 0
    for rj, name, replicas, parallelism, jt, group in shapes:
        jmeta = jt.obj("metadata")
        forbid_annotations(jmeta, _EXCLUSIVE)
        job_times = inherit_times(meta.times, gangsim_annotations(jmeta, "Job") if jmeta is not None else {})
        template = jt.obj("spec").obj("template", req=True)
        after = tuple(job.key for job in jobs[-1]) if in_order and jobs else ()
        jobs.append([])
        for j in range(replicas):
            job_name = f"{meta.name}-{name}-{j}"
            if len(job_name) > JOB_NAME_MAX or subdomain_errors(job_name):
                raise rj.error("name", invalid(rj.fp("name"), name, f"the child Job name {job_name!r} must be a DNS subdomain of at most {JOB_NAME_MAX} characters"))
            pod_labels = {
                PREFIX + "jobset-name": meta.name,
                PREFIX + "replicatedjob-name": name,
                PREFIX + "replicatedjob-replicas": str(replicas),
                PREFIX + "job-index": str(j),
                PREFIX + "job-global-index": str(global_index),
                PREFIX + "global-replicas": str(global_replicas),
                PREFIX + "group-name": group,
                PREFIX + "group-replicas": str(group_replicas[group]),
                PREFIX + "job-group-index": str(group_index[group]),
                PREFIX + "job-key": hashlib.sha256(f"{meta.namespace}/{job_name}".encode()).hexdigest(),
                PREFIX + "restart-attempt": "0",
            }
            global_index += 1
            group_index[group] += 1
            pod = pod_template(ctx, template, pod_labels, job_times)
            user_group = user_group or bool(pod.scheduling_group)
            first_spec = first_spec or pod
            interval = job_times.get(POD_CREATION_INTERVAL, 0)
            jobs[-1].append(ControlledJob(meta.namespace, job_name, parallelism, pod, source, pod_creation_interval_ms=interval, owner=owner.ref, start_after=after))
    # 3. Workload + PodGroup(s) first, then the Jobs pointing at them. InOrder: one PodGroup per
    # replicatedJob (one for the whole JobSet would wait forever for pods created only once the
    # earlier replicatedJobs run); AnyOrder: one for the whole JobSet, as JobSet's guide does.
    if not user_group and total:
        if in_order:
            groups = [(pod_group_name(owner.kind, owner.name, i), sum(job.parallelism for job in rjobs)) for i, rjobs in enumerate(jobs)]
        else:
            groups = [(pod_group_name(owner.kind, owner.name, 0), total)]
        owner.children.extend(gang(ctx, owner, GROUP, "jobset", [g for g in groups if g[1]], first_spec, meta, source))
        jobs = [[_with_group(job, groups[i if in_order else 0][0]) for job in rjobs] for i, rjobs in enumerate(jobs)]
    owner.children.extend(("Job", meta.namespace, job.name, job) for rjobs in jobs for job in rjobs)
    return owner


def _with_group(job: ControlledJob, group: str) -> ControlledJob:
    return replace(job, template=in_group(job.template, group))
