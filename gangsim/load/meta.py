"""What every document shares: apiVersion/kind, metadata and gangsim's own annotations."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from gangsim.api.devices import GPU_SHARE_ANNOTATION
from gangsim.api.duration import DurationError, parse_duration_ms
from gangsim.api.naming import NAME_ALPHABET
from gangsim.load.limits import check_duration_ms
from gangsim.api.objects import NAMESPACED, object_ref
from gangsim.errors import FieldError, InputError, forbidden, invalid, required, unsupported
from gangsim.load.controllers.kinds import ALIASES as _ALIASES, API_VERSIONS as _CONTROLLER_VERSIONS, CLUSTER_SCOPED as _CLUSTER_SCOPED
from gangsim.load.fields import DNS1123_SUBDOMAIN_MAX, Obj, check_name, known_names, not_supported, shown, subdomain_errors

# Accepted kinds and their apiVersions (the first one is what messages suggest).
API_VERSIONS: dict[str, tuple[str, ...]] = {
    "Node": ("v1",),
    "NodePool": ("gangsim.dev/v1alpha1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    "Workload": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha3"),
    "PodGroup": ("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1alpha2", "scheduling.k8s.io/v1alpha3"),
    "CompositePodGroup": ("scheduling.k8s.io/v1alpha3",),
    "Pod": ("v1",),
    "Job": ("batch/v1",),
    "KubeSchedulerConfiguration": ("kubescheduler.config.k8s.io/v1",),
    "Trace": ("gangsim.dev/v1alpha1",),
    **_CONTROLLER_VERSIONS,  # workloads gangsim.load.controllers expands (JobSet, LeaderWorkerSet…)
}
OBJECT_KINDS = frozenset(API_VERSIONS) - {"KubeSchedulerConfiguration", "Trace"}
# Pod, Job, PodDisruptionBudget, PodGroup, Workload and the namespaced controller kinds
TRACE_NAMESPACED = NAMESPACED | (frozenset(_CONTROLLER_VERSIONS) - _CLUSTER_SCOPED)
_WORKLOADS = frozenset(_CONTROLLER_VERSIONS)

# metadata.generateName: the apiserver's SimpleNameGenerator (apiserver/pkg/storage/names/
# generate.go) cuts the prefix to 63 - 5 characters and appends 5 random characters of
# utilrand's alphabet (apimachinery/pkg/util/rand/rand.go); gangsim numbers them instead.
GENERATE_NAME_KINDS = frozenset({"Pod", "Job"})
GENERATED_SUFFIX_LEN = 5
MAX_GENERATED_PREFIX = 63 - GENERATED_SUFFIX_LEN

ARRIVAL = "gangsim.dev/arrival"
DURATION = "gangsim.dev/duration"
CHECKPOINT_INTERVAL = "gangsim.dev/checkpoint-interval"
REMOVE_AT = "gangsim.dev/remove-at"
RENDEZVOUS_TIMEOUT = "gangsim.dev/rendezvous-timeout"
POD_CREATION_INTERVAL = "gangsim.dev/pod-creation-interval"
GPU_SHARE = GPU_SHARE_ANNOTATION  # a resource name, not a duration: read by the Node decoder
GANGSIM_PREFIX = "gangsim.dev/"
JOB_NAME_MAX = 63  # a Job's name ends up in pod labels (≤63 characters)
# annotation → kinds that read it (INTERFACE table); "template" = a Job's pod template.
ANNOTATION_KINDS: dict[str, frozenset[str]] = {
    ARRIVAL: OBJECT_KINDS,
    DURATION: frozenset({"Pod", "Job", "template"}) | _WORKLOADS,
    CHECKPOINT_INTERVAL: frozenset({"Pod", "Job", "template"}) | _WORKLOADS,
    REMOVE_AT: frozenset({"Node", "NodePool"}),
    RENDEZVOUS_TIMEOUT: frozenset({"Pod", "Job", "PodGroup", "template"}) | _WORKLOADS,
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
    generate_name: str = ""  # metadata.generateName (cut) when no name was written

    @property
    def arrival_ms(self) -> int:
        return self.times.get(ARRIVAL, 0)


def aliased(kind: object, version: object) -> object:
    """The kind gangsim keys a document by: Volcano's ``batch.volcano.sh/v1alpha1`` ``Job`` is ``VolcanoJob``."""
    return _ALIASES.get((version, kind), kind) if isinstance(kind, str) and isinstance(version, str) else kind


def unsupported_kind(field: str, kind: object, kinds: Collection[str]) -> FieldError:
    """``kind: Unsupported value``, listing the kinds Kubernetes and gangsim define; the workload
    kinds (README "Workload kinds") are left out: with them the line would pass 300 characters."""
    return not_supported(field, kind, [k for k in API_VERSIONS if k in kinds and k not in _WORKLOADS])


def check_type(d: Mapping, line: int | None, *, allowed: frozenset[str] | None = None) -> str:
    """The document's kind after checking kind and apiVersion; raises with the field."""
    o = Obj(d, "", line)
    kind = aliased(d.get("kind"), d.get("apiVersion"))
    if kind is None or kind == "":
        raise o.error("kind", required("kind", "every document needs apiVersion and kind"))
    kinds = allowed if allowed is not None else API_VERSIONS
    if not isinstance(kind, str) or kind not in kinds:
        raise o.error("kind", unsupported_kind("kind", kind, kinds))
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
    generate = ""
    if "name" not in meta:
        if not meta.raw("generateName"):
            raise meta.error("name", required(meta.fp("name"), "name or generateName is required"))
        if kind not in GENERATE_NAME_KINDS:
            raise meta.error("generateName", forbidden(meta.fp("generateName"), f"gangsim generates names only for {' and '.join(sorted(GENERATE_NAME_KINDS))}: set metadata.name"))
        generate = check_generate_name(meta, name_max)
        name = ""
    else:
        name = check_name(meta, "name", name_rule, max_len=name_max)
    namespace = ""
    if kind in TRACE_NAMESPACED:
        namespace = check_name(meta, "namespace", "label", req=False) or "default"
    elif "namespace" in meta and warn is not None:
        warn(f"ignored metadata.namespace of cluster-scoped {kind} {name}")
    labels = meta.labels("labels")
    times = gangsim_annotations(meta, kind)
    return Meta(name, namespace, labels, times, meta.line, generate)


def check_generate_name(meta: Obj, name_max: int | None) -> str:
    """``metadata.generateName``: a prefix that, cut to leave room for the suffix (apiserver
    ``SimpleNameGenerator``: 63 - 5 characters) and given a suffix, is a valid name."""
    prefix = meta.str("generateName")
    limit = (name_max or DNS1123_SUBDOMAIN_MAX) - GENERATED_SUFFIX_LEN
    cut_prefix = prefix[: min(limit, MAX_GENERATED_PREFIX)]
    errs = subdomain_errors(cut_prefix + "x", name_max or DNS1123_SUBDOMAIN_MAX)
    if errs:
        raise meta.error("generateName", invalid(meta.fp("generateName"), prefix, errs[0]))
    return cut_prefix


def generated_name(prefix: str, n: int) -> str:
    """The ``n``-th (0-based, in creation order) name generated from ``prefix``: ``prefix`` and five
    characters of the apiserver's alphabet (``utilrand.String``: no vowels, no 0/1/3), here the
    digits of ``n`` in base 27 instead of random ones, so that a replay is deterministic."""
    digits = []
    for _ in range(GENERATED_SUFFIX_LEN):
        n, d = divmod(n, len(NAME_ALPHABET))
        digits.append(NAME_ALPHABET[d])
    return prefix + "".join(reversed(digits))


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
                where = ", ".join(sorted(k for k in kinds if k != "template" and k not in _WORKLOADS))
                if kinds & _WORKLOADS:
                    where += " and the workload kinds (JobSet, LeaderWorkerSet, …)"
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


def controller_job(doc: Obj) -> str:
    """The Job a Pod's controller ``ownerReference`` names (``controller: true``, kind ``Job``,
    apiVersion ``batch/…``): its pods form that Job's gang (a cluster dump's pods; gangsim
    recreates none of them). Other owners are ignored; '' when there is none."""
    meta = doc.obj("metadata")
    if meta is None:
        return ""
    for ref, path, line in meta.items("ownerReferences"):
        if not isinstance(ref, Mapping):
            raise InputError(invalid(path, shown(ref), "must be an object with apiVersion, kind and name"), line=line)
        o = Obj(ref, path, line)
        if o.raw("controller") is True and o.raw("kind") == "Job" and str(o.raw("apiVersion") or "").startswith("batch/"):
            return check_name(o, "name", "subdomain")
    return ""
