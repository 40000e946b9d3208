"""The workload kinds gangsim expands, with their apiVersions (data only: ``load.meta`` reads it
to accept them, ``load.controllers`` to dispatch them)."""

from __future__ import annotations

API_VERSIONS: dict[str, tuple[str, ...]] = {
    "JobSet": ("jobset.x-k8s.io/v1alpha2",),
    "LeaderWorkerSet": ("leaderworkerset.x-k8s.io/v1",),
    "PyTorchJob": ("kubeflow.org/v1",),
    "TrainJob": ("trainer.kubeflow.org/v1alpha1",),
    "ClusterTrainingRuntime": ("trainer.kubeflow.org/v1alpha1",),
    "TrainingRuntime": ("trainer.kubeflow.org/v1alpha1",),
    "RayCluster": ("ray.io/v1",),
    "RayJob": ("ray.io/v1",),
    "VolcanoJob": ("batch.volcano.sh/v1alpha1",),
}
# Cluster-scoped ones; every other kind above is namespaced.
CLUSTER_SCOPED = frozenset({"ClusterTrainingRuntime"})
# Volcano's Job is `kind: Job` in its own group: documents say `Job`, gangsim keys it `VolcanoJob`.
ALIASES: dict[tuple[str, str], str] = {("batch.volcano.sh/v1alpha1", "Job"): "VolcanoJob"}
