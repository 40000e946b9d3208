"""``trainer.kubeflow.org/v1alpha1`` TrainJob → the JobSet its runtime describes, one PodGroup.

Upstream (kubeflow/trainer ``pkg/runtime/framework/plugins/jobset``): a TrainJob names a
ClusterTrainingRuntime (the default ``runtimeRef.kind``) or a TrainingRuntime of its namespace;
the controller builds a JobSet named after the TrainJob from the runtime's ``template``. The
replicatedJob labelled ``trainer.kubeflow.org/trainjob-ancestor-step: trainer`` (the ``node``
Job) runs ``numNodes`` pods (``spec.trainer.numNodes``, else the runtime's ``mlPolicy.numNodes``,
else 1) and its ``node`` container takes ``spec.trainer.resourcesPerNode``. Pods are then the
JobSet's: ``<trainjob>-node-0-<index>``.

Grouping: one Workload (``trainjob-<name>``) + one gang PodGroup of every pod, as the trainer's
coscheduling/volcano ``podGroupPolicy`` does (minMember = all pods) and as its Workload API
proposal (kubeflow/trainer#3015, not released) does for the trainer step. The runtime must come
before the TrainJob in the trace (document order); it creates nothing itself.
"""

from __future__ import annotations

import copy

from gangsim.api.objects import Source
from gangsim.errors import InputError, invalid
from gangsim.load.controllers import jobset
from gangsim.load.controllers.common import Context, Expansion, count, spec_keys
from gangsim.load.fields import Obj, dig
from gangsim.load.meta import Meta

KIND = "TrainJob"
RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_CONTAINER = "node"
_UNMODELLED = {
    "suspend": "gangsim does not model suspended TrainJobs",
    "runtimePatches": "gangsim does not model runtime patches",
    "podTemplateOverrides": "gangsim does not model pod template overrides",
}


def decode_runtime(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    """A (Cluster)TrainingRuntime: kept for the TrainJobs that name it; it creates nothing."""
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    kind = doc.str("kind")
    spec_keys(ctx, kind, spec, {"mlPolicy", "template"}, {})
    template = spec.obj("template", req=True)
    template.check_keys({"metadata", "spec"})
    template.obj("spec", req=True)
    ml = spec.obj("mlPolicy")
    if ml is not None:
        count(ml, "numNodes", 1)
    ctx.runtimes[(kind, meta.namespace, meta.name)] = (doc, meta, source)
    return Expansion(kind, meta.namespace, meta.name)


def decode(ctx: Context, doc: Obj, meta: Meta, source: Source) -> Expansion:
    doc.check_keys({"apiVersion", "kind", "metadata", "spec", "status"})
    spec = doc.obj("spec", req=True)
    spec_keys(ctx, KIND, spec, {"runtimeRef", "trainer"}, _UNMODELLED)
    ref = spec.obj("runtimeRef", req=True)
    ref.check_keys({"name", "apiGroup", "kind"})
    kind = ref.enum("kind", RUNTIME_KINDS, "ClusterTrainingRuntime")
    name = ref.str("name", req=True)
    found = ctx.runtimes.get((kind, meta.namespace if kind == "TrainingRuntime" else "", name))
    if found is None:
        where = f" in namespace {meta.namespace}" if kind == "TrainingRuntime" else ""
        raise ref.error("name", invalid(ref.fp("name"), name, f"no {kind} {name}{where} earlier in the trace (a TrainJob's runtime must come before it)"))
    runtime, rmeta, rsource = found
    trainer = spec.obj("trainer")
    nodes = count(runtime.obj("spec").obj("mlPolicy") or Obj({}), "numNodes", 1)
    resources = None
    if trainer is not None:
        spec_keys(ctx, KIND, trainer, {"numNodes", "resourcesPerNode"}, {})
        nodes = count(trainer, "numNodes", nodes)
        resources = trainer.raw("resourcesPerNode")
    template = copy.deepcopy(runtime.d["spec"]["template"])
    for rj in template["spec"].get("replicatedJobs") or []:
        if (dig(rj, "template.metadata.labels") or {}).get(ANCESTOR) == "trainer":
            _override(rj, nodes, resources)
    js_spec = Obj(template["spec"], "spec.template.spec", getattr(template["spec"], "line", None))
    try:
        return jobset.expand(ctx, KIND, js_spec, meta, source)
    except InputError as exc:
        raise exc.located(file=rsource.file, obj=f"{kind} {name} (for TrainJob {meta.namespace}/{meta.name})") from None


def _override(rj: dict, nodes: int, resources: object) -> None:
    """What the trainer writes into its replicatedJob: numNodes pods, the node container's resources."""
    jspec = rj.setdefault("template", {}).setdefault("spec", {})
    jspec["parallelism"] = nodes
    jspec["completions"] = nodes
    if resources is None:
        return
    for c in dig(jspec, "template.spec.containers") or []:
        if isinstance(c, dict) and c.get("name") == TRAINER_CONTAINER:
            c["resources"] = resources
