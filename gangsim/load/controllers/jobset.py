"""``jobset.x-k8s.io/v1alpha2`` JobSet → its child Jobs, one Workload and one PodGroup.

Upstream (kubernetes-sigs/jobset ``pkg/controllers/jobset_controller.go``, constructJob): each
``replicatedJobs[i]`` makes ``replicas`` Jobs named ``<jobset>-<replicatedJob>-<jobIndex>``; the
Job and its pod template carry the labels ``jobset.sigs.k8s.io/jobset-name``,
``replicatedjob-name``, ``replicatedjob-replicas``, ``job-index``, ``job-global-index``,
``global-replicas``, ``job-key`` (sha256 of ``<namespace>/<job name>``) and ``restart-attempt``.
A child Job's pods are then the Job controller's: ``<job>-<index>`` in gangsim.

Grouping: JobSet releases no Workload API integration yet (kubernetes-sigs/jobset#969, PR #1250
open). Its documentation (``site/content/en/docs/workload-aware-scheduling/gang_scheduling.md``)
gang-schedules a JobSet with ONE Workload + ONE PodGroup whose minCount is every pod of every
child Job, referenced from the pod templates by ``schedulingGroup.podGroupName``: gangsim creates
exactly that (``jobset-<name>`` / ``jobset-<name>-0``) unless a pod template already names a
PodGroup (then the user's own objects are used and nothing is created).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from gangsim.api.objects import Job, Source
from gangsim.errors import invalid, unsupported
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
    "dependsOn": "gangsim does not model replicatedJobs[].dependsOn (Jobs created after others are ready or complete)",
}
_JOB_SPEC = {"parallelism", "completions", "completionMode", "template"}
_JOB_SPEC_UNMODELLED = {"suspend": "gangsim does not model suspended Jobs"}


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    forbid_annotations(doc.obj("metadata"), _EXCLUSIVE)
    spec = doc.obj("spec", req=True)
    return expand(ctx, KIND, spec, meta, source)


def expand(ctx: Context, kind: str, spec: Obj, meta: Meta, source: Source, *, labels: dict[str, str] | None = None) -> Expansion:
    """A JobSet spec (also a TrainingRuntime's ``template.spec``, for ``kind`` TrainJob)."""
    spec_keys(ctx, kind, spec, {"replicatedJobs", "startupPolicy", "failurePolicy", "successPolicy"}, _SPEC_UNMODELLED)
    startup = spec.obj("startupPolicy")
    if startup is not None:
        startup.check_keys({"startupPolicyOrder"})
        if startup.enum("startupPolicyOrder", ("AnyOrder", "InOrder")) == "InOrder":
            raise startup.error("startupPolicyOrder", unsupported(startup.fp("startupPolicyOrder"), "gangsim does not model InOrder startup (each replicatedJob's Jobs created once the previous ones are ready): use AnyOrder"))
    for policy in ("failurePolicy", "successPolicy"):
        if policy in spec:
            ctx.ignored(kind, spec.fp(policy))
    owner = Expansion(kind, meta.namespace, meta.name)
    rjobs = list(spec.objs("replicatedJobs"))
    if not rjobs:
        raise spec.error("replicatedJobs", invalid(spec.fp("replicatedJobs"), "[]", "must have at least one item"))
    # 1. read every replicatedJob (counts checked before anything is built)
    shapes: list[tuple[Obj, str, int, int, Obj]] = []
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
        shapes.append((rj, name, replicas, parallelism, jt))
    global_replicas = sum(s[2] for s in shapes)
    # 2. the Jobs, each pod template labelled as the JobSet controller labels it
    jobs: list[tuple[str, Job]] = []
    group_name = pod_group_name(owner.kind, owner.name, 0)
    user_group = False
    first_spec = None
    global_index = 0
    for rj, name, replicas, parallelism, jt in shapes:
        jmeta = jt.obj("metadata")
        forbid_annotations(jmeta, _EXCLUSIVE)
        job_times = inherit_times(meta.times, gangsim_annotations(jmeta, "Job") if jmeta is not None else {})
        template = jt.obj("spec").obj("template", req=True)
        for j in range(replicas):
            job_name = f"{meta.name}-{name}-{j}"
            if len(job_name) > JOB_NAME_MAX or subdomain_errors(job_name):
                raise rj.error("name", invalid(rj.fp("name"), name, f"the child Job name {job_name!r} must be a DNS subdomain of at most {JOB_NAME_MAX} characters"))
            pod_labels = {
                **(labels or {}),
                PREFIX + "jobset-name": meta.name,
                PREFIX + "replicatedjob-name": name,
                PREFIX + "replicatedjob-replicas": str(replicas),
                PREFIX + "job-index": str(j),
                PREFIX + "job-global-index": str(global_index),
                PREFIX + "global-replicas": str(global_replicas),
                PREFIX + "job-key": hashlib.sha256(f"{meta.namespace}/{job_name}".encode()).hexdigest(),
                PREFIX + "restart-attempt": "0",
            }
            global_index += 1
            pod = pod_template(ctx, template, pod_labels, job_times)
            user_group = user_group or bool(pod.scheduling_group)
            first_spec = first_spec or pod
            interval = job_times.get(POD_CREATION_INTERVAL, 0)
            jobs.append((job_name, Job(meta.namespace, job_name, parallelism, pod, source, pod_creation_interval_ms=interval)))
    # 3. Workload + PodGroup first, then the Jobs pointing at it
    if not user_group and total:
        owner.children.extend(gang(ctx, owner, GROUP, "jobset", [(group_name, total)], first_spec, meta, source))
        jobs = [(n, _with_group(job, group_name)) for n, job in jobs]
    owner.children.extend(("Job", meta.namespace, n, job) for n, job in jobs)
    return owner


def _with_group(job: Job, group: str) -> Job:
    return replace(job, template=in_group(job.template, group))
