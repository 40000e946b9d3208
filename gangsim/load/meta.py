"""What every document shares: apiVersion/kind, metadata and gangsim's own annotations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gangsim.api.devices import GPU_SHARE_ANNOTATION
from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.load.limits import check_duration_ms
from gangsim.api.objects import NAMESPACED, object_ref
from gangsim.errors import forbidden, invalid, required, unsupported
from gangsim.load.fields import Obj, check_name, known_names, not_supported, shown

# Accepted kinds and their apiVersions (the first one is what messages suggest).
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Node": ("v1",),
    "NodePool": ("gangsim.dev/v1alpha1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "Workload": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha2"),
    "PodGroup": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha2"),
    "Pod": ("v1",),
    "Job": ("batch/v1",),
    "KubeSchedulerConfiguration": ("kubescheduler.config.k8s.io/v1",),
    "Trace": ("gangsim.dev/v1alpha1",),
}
OBJECT_KINDS = frozenset(API_VERSIONS) - {"KubeSchedulerConfiguration", "Trace"}
TRACE_NAMESPACED = NAMESPACED  # Pod, Job, PodDisruptionBudget, PodGroup, Workload

ARRIVAL = "gangsim.dev/arrival"
DURATION = "gangsim.dev/duration"
CHECKPOINT_INTERVAL = "gangsim.dev/checkpoint-interval"
REMOVE_AT = "gangsim.dev/remove-at"
RENDEZVOUS_TIMEOUT = "gangsim.dev/rendezvous-timeout"
POD_CREATION_INTERVAL = "gangsim.dev/pod-creation-interval"
GPU_SHARE = GPU_SHARE_ANNOTATION  # a resource name, not a duration: read by the Node decoder
GANGSIM_PREFIX = "gangsim.dev/"
# annotation → kinds that read it (INTERFACE table); "template" = a Job's pod template.
ANNOTATION_KINDS: dict[str, frozenset[str]] = {
    ARRIVAL: OBJECT_KINDS,
    DURATION: frozenset({"Pod", "Job", "template"}),
    CHECKPOINT_INTERVAL: frozenset({"Pod", "Job", "template"}),
    REMOVE_AT: frozenset({"Node", "NodePool"}),
    RENDEZVOUS_TIMEOUT: frozenset({"Pod", "Job", "PodGroup", "template"}),
    POD_CREATION_INTERVAL: frozenset({"Job"}),
    GPU_SHARE: frozenset({"Node", "NodePool"}),
}


@dataclass(slots=True)
class Meta:
    name: str
    namespace: str
    labels: dict[str, str]
    # gangsim.dev/* annotations, parsed to ms; other annotations are ignored.
    times: dict[str, int] = field(default_factory=dict)
    line: int | None = None

    @property
    def arrival_ms(self) -> int:
        return self.times.get(ARRIVAL, 0)


def check_type(d: Mapping, line: int | None, *, allowed: frozenset[str] | None = None) -> str:
    """The document's kind after checking kind and apiVersion; raises with the field."""
    o = Obj(d, "", line)
    kind = d.get("kind")
    if kind is None or kind == "":
        raise o.error("kind", required("kind", "every document needs apiVersion and kind"))
    kinds = allowed if allowed is not None else API_VERSIONS
    if not isinstance(kind, str) or kind not in kinds:
        listed = [k for k in API_VERSIONS if k in kinds]
        raise o.error("kind", not_supported("kind", kind, listed))
    version = d.get("apiVersion")
    if version is None or version == "":
        raise o.error("apiVersion", required("apiVersion", f"{kind} is {API_VERSIONS[kind][0]}"))
    if version not in API_VERSIONS[kind]:
        raise o.error("apiVersion", not_supported("apiVersion", version, API_VERSIONS[kind]))
    return kind


def raw_ref(kind: str, d: Mapping) -> str:
    """How an error names a raw object before (or while) it is decoded: ``Pod ml/x`` or ``Pod``."""
    key = raw_key(kind, d)
    return kind if key is None else object_ref(*key)


def raw_key(kind: str, d: Mapping) -> tuple[str, str, str] | None:
    """``(kind, namespace, name)`` of a raw object as the loader keys it (namespace defaulted); None without a name."""
    meta = d.get("metadata")
    if not isinstance(meta, Mapping):
        return None
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = meta.get("namespace") if kind in TRACE_NAMESPACED else ""
    if kind in TRACE_NAMESPACED and not (isinstance(namespace, str) and namespace):
        namespace = "default"
    return kind, namespace, name


def decode_meta(doc: Obj, kind: str, *, name_rule: str = "subdomain", name_max: int | None = None, warn=None) -> Meta:
    """``metadata``: name (required), namespace (default ``default``), labels, gangsim annotations."""
    meta = doc.obj("metadata", req=True)
    if "name" not in meta:
        if meta.raw("generateName"):
            raise meta.error("generateName", forbidden(meta.fp("generateName"), "gangsim needs fixed names: set metadata.name"))
        raise meta.error("name", required(meta.fp("name"), "name or generateName is required"))
    name = check_name(meta, "name", name_rule, max_len=name_max)
    namespace = ""
    if kind in TRACE_NAMESPACED:
        namespace = check_name(meta, "namespace", "label", req=False) or "default"
    elif "namespace" in meta and warn is not None:
        warn(f"ignored metadata.namespace of cluster-scoped {kind} {name}")
    labels = meta.labels("labels")
    times = gangsim_annotations(meta, kind)
    return Meta(name, namespace, labels, times, meta.line)


def gangsim_annotations(meta: Obj, kind: str) -> dict[str, int]:
    """Parse the ``gangsim.dev/*`` annotations ``kind`` reads; unknown or misplaced ones are errors."""
    annotations = meta.mapping("annotations")
    if not annotations:
        return {}
    ann = Obj(annotations, meta.fp("annotations"), meta.ln("annotations"))
    out: dict[str, int] = {}
    for key, value in annotations.items():
        if not key.startswith(GANGSIM_PREFIX):
            continue
        path = f"{ann.path}[{key}]"
        kinds = ANNOTATION_KINDS.get(key)
        if kinds is None:
            raise ann.error(key, unsupported(path, f"unknown gangsim annotation ({known_names(key, ANNOTATION_KINDS)})"))
        if kind not in kinds:
            if kind == "template":
                detail = f"{key} is not read on a Job's pod template: set it on the Job"
            else:
                where = ", ".join(sorted(k for k in kinds if k != "template"))
                detail = f"{key} is not read on {kind} (only on {where})"
            raise ann.error(key, forbidden(path, detail))
        if key == GPU_SHARE:
            continue
        try:
            ms = parse_duration_ms(value)
        except DurationError as exc:
            raise ann.error(key, invalid(path, shown(value), str(exc))) from None
        out[key] = check_duration_ms(ms, path, line=ann.ln(key), raw=value)
    return out
