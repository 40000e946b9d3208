"""Small YAML builders for the validate tests (one document each; join with ``docs``)."""

from __future__ import annotations

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '64', memory: 256Gi, nvidia.com/gpu: '8'}}\n"


def docs(*parts: str) -> str:
    return "---\n".join(parts)


def _meta(name: str, *, ns: str | None = "ml", at: str | None = None, labels: str | None = None) -> str:
    out = f"metadata:\n  name: {name}\n"
    if ns:
        out += f"  namespace: {ns}\n"
    if labels:
        out += f"  labels: {labels}\n"
    if at:
        out += f"  annotations: {{gangsim.dev/arrival: {at}}}\n"
    return out


def _lines(extra: str, indent: str) -> str:
    return "".join(f"{indent}{line}\n" for line in extra.strip("\n").split("\n")) if extra else ""


def priority_class(name: str, value: int, extra: str = "") -> str:
    return f"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: {name}}}\nvalue: {value}\n{extra}"


def pg(name: str = "pg", min_count: int = 2, *, at: str | None = None, policy: str | None = None, spec: str = "") -> str:
    policy = policy or f"{{gang: {{minCount: {min_count}}}}}"
    return (
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\n" + _meta(name, at=at)
        + f"spec:\n  schedulingPolicy: {policy}\n" + _lines(spec, "  ")
    )  # fmt: skip


def workload(name: str = "w", templates: str = "- {name: worker, schedulingPolicy: {gang: {minCount: 2}}}", *, at: str | None = None) -> str:
    return "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\n" + _meta(name, at=at) + "spec:\n  podGroupTemplates:\n" + _lines(templates, "  ")


def _pod_spec(group: str | None, gpu: int, spec: str, indent: str) -> str:
    out = ""
    if group:
        out += f"{indent}schedulingGroup: {{podGroupName: {group}}}\n"
    out += f"{indent}containers: [{{name: c, resources: {{limits: {{nvidia.com/gpu: '{gpu}'}}}}}}]\n"
    return out + _lines(spec, indent)


def pod(name: str, group: str | None = "pg", *, at: str | None = None, gpu: int = 1, labels: str | None = None, spec: str = "") -> str:
    return "apiVersion: v1\nkind: Pod\n" + _meta(name, at=at, labels=labels) + "spec:\n" + _pod_spec(group, gpu, spec, "  ")


def job(name: str, parallelism: int = 2, group: str | None = "pg", *, at: str | None = None, gpu: int = 1, spec: str = "", interval: str | None = None, labels: str | None = None) -> str:
    meta = _meta(name, at=at)
    if interval:
        meta = meta.replace("metadata:\n", f"metadata:\n  annotations: {{gangsim.dev/pod-creation-interval: {interval}}}\n") if not at else meta.replace(
            "{gangsim.dev/arrival: ", f"{{gangsim.dev/pod-creation-interval: {interval}, gangsim.dev/arrival: "
        )
    tmeta = f"    metadata: {{labels: {labels}}}\n" if labels else ""
    return (
        "apiVersion: batch/v1\nkind: Job\n" + meta + f"spec:\n  parallelism: {parallelism}\n  template:\n" + tmeta
        + "    spec:\n" + _pod_spec(group, 1 if gpu is None else gpu, spec, "      ")
    )  # fmt: skip


def trace_events(events: str) -> str:
    return "apiVersion: gangsim.dev/v1alpha1\nkind: Trace\nmetadata: {name: t}\nevents:\n" + _lines(events, "")


CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n- schedulerName: batch\n"
