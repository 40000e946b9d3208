"""kind → controller: the one seam through which ``load.decode`` reaches the controllers."""

from __future__ import annotations

from collections.abc import Callable

from gangsim.api.objects import Source
from gangsim.load.controllers import jobset, lws, pytorchjob, ray, trainjob, volcano
from gangsim.load.controllers.common import Context, Expansion
from gangsim.load.controllers.kinds import API_VERSIONS
from gangsim.load.fields import Obj
from gangsim.load.meta import Meta

Controller = Callable[[Context, Obj, Meta, Source], Expansion]

CONTROLLERS: dict[str, Controller] = {
    "JobSet": jobset.decode,
    "LeaderWorkerSet": lws.decode,
    "PyTorchJob": pytorchjob.decode,
    "RayCluster": ray.decode_cluster,
    "RayJob": ray.decode_job,
    "VolcanoJob": volcano.decode,
    "TrainJob": trainjob.decode,
    "ClusterTrainingRuntime": trainjob.decode_runtime,
    "TrainingRuntime": trainjob.decode_runtime,
}
assert set(CONTROLLERS) <= set(API_VERSIONS)

__all__ = ["CONTROLLERS", "Context", "Controller", "Expansion"]
