"""Who a dumped pod belongs to, for ``gangsim import kubectl`` (gangsim.load.importers.kubectl).

A dump holds pods as they are now; gangsim recreates none of them, but groups them as their
controller would, so the job model treats them as one distributed job:

- **Job owner**: a pod whose controller ``ownerReference`` is a Job present in the dump keeps
  that reference (the loader then counts the pods of one Job as one gang, kind ``Job``). A Job
  whose ``completions`` differ from its ``parallelism`` runs independent pods (no gang): its pods
  stay bare. JobSet pods are pods of the JobSet's child Jobs: one gang per child Job.
- **LeaderWorkerSet**: pods labelled ``leaderworkerset.sigs.k8s.io/name`` and ``…/group-index``
  (the LWS controller's label names) form one gang per group: a PodGroup ``<lws>-<group-index>``
  with ``gang.minCount`` = the ``leaderworkerset.sigs.k8s.io/size`` annotation (else the pods found).
- **v1.35 Workload** (``scheduling.k8s.io/v1alpha1``: ``spec.podGroups[]`` and the pods'
  ``spec.workloadRef``): each (workload, podGroup, podGroupReplicaKey) the pods name becomes a
  PodGroup ``<workload>-<podGroup>[-<replicaKey>]`` with that podGroup's policy, and the pods name
  it in ``spec.schedulingGroup`` — what the ``permit`` policy (v1.35 GangScheduling) schedules.

Pods that already name a PodGroup (``spec.schedulingGroup``) are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangsim.errors import InputError
from gangsim.load.documents import Document
from gangsim.load.fields import line_of
from gangsim.load.limits import MAX_PODS_PER_JOB, check_count

LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_SIZE = "leaderworkerset.sigs.k8s.io/size"
WORKLOAD_V1ALPHA1 = "scheduling.k8s.io/v1alpha1"


def _meta(d: Mapping) -> Mapping:
    meta = d.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _ns(d: Mapping) -> str:
    return _meta(d).get("namespace") or "default"


def _controller_job(d: Mapping) -> str:
    for ref in _meta(d).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller") is True and ref.get("kind") == "Job" and str(ref.get("apiVersion", "")).startswith("batch/"):
            return str(ref.get("name") or "")
    return ""


def _gang_jobs(jobs: list[Document]) -> set[tuple[str, str]]:
    """(namespace, name) of the dumped Jobs whose pods form a gang (completions unset or == parallelism)."""
    out: set[tuple[str, str]] = set()
    for doc in jobs:
        spec = doc.data.get("spec") if isinstance(doc.data.get("spec"), Mapping) else {}
        parallelism = spec.get("parallelism", 1)
        completions = spec.get("completions")
        if completions is None or completions == parallelism:
            out.add((_ns(doc.data), str(_meta(doc.data).get("name"))))
    return out


def _v1alpha1_workloads(workloads: list[Document]) -> dict[tuple[str, str], dict[str, dict]]:
    """(namespace, workload) -> podGroup name -> its policy, of the v1alpha1 Workloads."""
    out: dict[tuple[str, str], dict[str, dict]] = {}
    for doc in workloads:
        d = doc.data
        spec = d.get("spec") if isinstance(d.get("spec"), Mapping) else {}
        groups: dict[str, dict] = {}
        for g in spec.get("podGroups") or []:
            if not isinstance(g, Mapping) or not isinstance(g.get("policy"), Mapping):
                raise InputError("spec.podGroups[]: Invalid value: each needs a name and a policy (basic or gang)", file=doc.file, line=doc.line, obj=f"Workload {_ns(d)}/{_meta(d).get('name')}")
            groups[str(g.get("name"))] = dict(g["policy"])
        out[(_ns(d), str(_meta(d).get("name")))] = groups
    return out


class Grouper:
    """Rewrites converted pods (``group``) and returns the PodGroups they now name (``pod_groups``)."""

    def __init__(self, jobs: list[Document], workloads_v1alpha1: list[Document], notes: list[str]) -> None:
        self.gang_jobs = _gang_jobs(jobs)
        self.workloads = _v1alpha1_workloads(workloads_v1alpha1)
        self.notes = notes
        self._groups: dict[tuple[str, str], dict] = {}  # (namespace, PodGroup) -> PodGroup object
        self._lws_count: dict[tuple[str, str], int] = {}
        self._unowned: dict[str, int] = {}

    def group(self, doc: Document, pod: dict) -> None:
        """``pod`` (converted from the dumped ``doc``) with its owner or group."""
        raw = doc.data
        spec = pod["spec"]
        if spec.get("schedulingGroup"):
            return
        ns = pod["metadata"]["namespace"]
        ref = (raw.get("spec") or {}).get("workloadRef")
        if isinstance(ref, Mapping):
            self._workload_pod(ns, ref, pod)
            return
        labels = pod["metadata"].get("labels") or {}
        if LWS_NAME in labels and LWS_GROUP_INDEX in labels:
            self._lws_pod(ns, labels, doc, pod)
            return
        job = _controller_job(raw)
        if job and (ns, job) in self.gang_jobs:
            pod["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "controller": True}]
        elif job:
            self._unowned[job] = self._unowned.get(job, 0) + 1

    def _named(self, ns: str, name: str, policy: dict) -> str:
        self._groups.setdefault((ns, name), {
            "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": {"schedulingPolicy": policy},
        })  # fmt: skip
        return name

    def _workload_pod(self, ns: str, ref: Mapping, pod: dict) -> None:
        wl, group, key = str(ref.get("name") or ""), str(ref.get("podGroup") or ""), str(ref.get("podGroupReplicaKey") or "")
        policy = self.workloads.get((ns, wl), {}).get(group)
        if policy is None:
            self.notes.append(f"warning: Pod {ns}/{pod['metadata']['name']}: spec.workloadRef names podGroup {group!r} of Workload {ns}/{wl}, not in the dump: imported without a group")
            return
        name = "-".join(p for p in (wl, group, key) if p)
        pod["spec"]["schedulingGroup"] = {"podGroupName": self._named(ns, name, policy)}

    def _lws_pod(self, ns: str, labels: Mapping, doc: Document, pod: dict) -> None:
        name = f"{labels[LWS_NAME]}-{labels[LWS_GROUP_INDEX]}"
        size = (_meta(doc.data).get("annotations") or {}).get(LWS_SIZE)
        self._lws_count[(ns, name)] = self._lws_count.get((ns, name), 0) + 1
        minimum = None
        if size is not None:
            field = f"metadata.annotations[{LWS_SIZE}]"
            try:
                minimum = check_count(int(size) if isinstance(size, str) and size.isdigit() else size, field, MAX_PODS_PER_JOB) or None
            except InputError as exc:
                line = line_of(_meta(doc.data).get("annotations"), LWS_SIZE, doc.line)
                raise exc.located(file=doc.file, line=line, obj=f"Pod {ns}/{pod['metadata']['name']}") from None
        self._named(ns, name, {"gang": {"minCount": minimum or 0}})
        pod["spec"]["schedulingGroup"] = {"podGroupName": name}

    def pod_groups(self) -> list[dict]:
        """The PodGroups the grouped pods name (an LWS group without a size: minCount = its pods)."""
        for job, n in sorted(self._unowned.items()):
            self.notes.append(f"{n} pod{'s' if n > 1 else ''} of Job {job} imported as bare pods: the Job is not in the dump, or runs completions in waves")
        out = []
        for key, pg in self._groups.items():
            gang = pg["spec"]["schedulingPolicy"].get("gang")
            if isinstance(gang, dict) and gang.get("minCount") == 0:
                gang["minCount"] = self._lws_count.get(key, 1)
            out.append(pg)
        return out


__all__ = ["LWS_GROUP_INDEX", "LWS_NAME", "LWS_SIZE", "WORKLOAD_V1ALPHA1", "Grouper"]
