"""PATCH events: RFC 7386 JSON merge patches on an object's raw document, and the immutability
rules of SEMANTICS §1 checked between the old and the new decoded object.

Lines: keys a patch sets keep the patch's lines; everything copied from the old document loses
its lines (they point into another file), so errors there fall back to the patch's line.
"""

from __future__ import annotations

from collections.abc import Mapping

from gangsim.api.objects import Pod, PodGroup, PriorityClass, Workload
from gangsim.errors import FieldError, forbidden
from gangsim.load.documents import LDict
from gangsim.load.fields import Obj, dig, immutable, line_of
from gangsim.load.meta import ARRIVAL, REMOVE_AT

PATCH_KEYS = {"apiVersion", "kind", "namespace", "name", "metadata", "spec", "status"}
PRIORITY_CLASS_KEYS = {"value", "globalDefault", "preemptionPolicy", "description"}
_FIXED_ANNOTATIONS = (ARRIVAL, REMOVE_AT)


def patch_document(p: Obj, kind: str) -> dict:
    """The merge patch a ``patch:`` item carries: metadata.labels/annotations, spec, status."""
    extra = PRIORITY_CLASS_KEYS if kind == "PriorityClass" else set()
    p.check_keys(PATCH_KEYS | extra)
    meta = p.obj("metadata")
    if meta is not None:
        for key in meta.d:
            if key not in ("labels", "annotations"):
                raise meta.error(key, forbidden(meta.fp(key), "a patch may change only metadata.labels and metadata.annotations"))
    body = LDict(line=p.line)
    for key, value in p.d.items():
        if key in ("metadata", "spec", "status") or key in extra:
            body[key] = value
            body.lines[key] = line_of(p.d, key, p.line)
    return body


def _strip(value: object) -> object:
    """A copy without line information."""
    if isinstance(value, Mapping):
        return {k: _strip(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def merge_patch(target: object, patch: object) -> object:
    """RFC 7386: objects merge key by key, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch
    out = LDict(line=getattr(patch, "line", None))
    if isinstance(target, Mapping):
        for key, value in target.items():
            out[key] = _strip(value)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
            continue
        out[key] = merge_patch(out.get(key), value)
        line = line_of(patch, key, None)
        if line:
            out.lines[key] = line
    return out


def patch_line(patch: Mapping, path: str, default: int | None) -> int | None:
    """Line of ``path`` (``spec.disruptionMode``) inside the patch, or of its deepest written parent."""
    node: object = patch
    line = default
    for part in path.replace("[", ".[").split("."):
        if not part or part.startswith("[") or not isinstance(node, Mapping) or part not in node:
            break
        line = line_of(node, part, line)
        node = node[part]
    return line


def _first_diff(old: object, new: object, path: str) -> str | None:
    if old == new:
        return None
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in [*new.keys(), *(k for k in old.keys() if k not in new)]:
            found = _first_diff(old.get(key), new.get(key), f"{path}.{key}")
            if found:
                return found
    return path


def check_update(kind: str, old_raw: Mapping, new_raw: Mapping, old: object, new: object) -> FieldError | None:
    """The first change the kind does not allow, as a field error (None: the update is fine)."""
    old_ann = dig(old_raw, "metadata.annotations") or {}
    new_ann = dig(new_raw, "metadata.annotations") or {}
    for key in _FIXED_ANNOTATIONS:
        if old_ann.get(key) != new_ann.get(key):
            return immutable(f"metadata.annotations[{key}]", new_ann.get(key))
    if isinstance(old, Pod):
        return _pod_update(old_raw.get("spec") or {}, new_raw.get("spec") or {})
    if kind == "Job":
        path = _first_diff(dig(old_raw, "spec.template"), dig(new_raw, "spec.template"), "spec.template")
        return immutable(path, dig(new_raw, path)) if path else None
    if isinstance(old, PodGroup) and isinstance(new, PodGroup):
        return _pod_group_update(old, new, new_raw)
    if isinstance(old, Workload) and isinstance(new, Workload):
        return _workload_update(old, new, new_raw)
    if isinstance(old, PriorityClass) and isinstance(new, PriorityClass):
        for attr, key in (("value", "value"), ("preemption_policy", "preemptionPolicy"), ("global_default", "globalDefault")):
            if getattr(old, attr) != getattr(new, attr):
                return immutable(key, new_raw.get(key))
    return None


def _pod_update(old_spec: Mapping, new_spec: Mapping) -> FieldError | None:
    """Pod: removing scheduling gates and adding tolerations are allowed (as the API server does);
    labels and annotations may change. Everything else in the spec is immutable."""
    old_gates = [g.get("name") for g in old_spec.get("schedulingGates") or [] if isinstance(g, Mapping)]
    for gate in new_spec.get("schedulingGates") or []:
        name = gate.get("name") if isinstance(gate, Mapping) else gate
        if name not in old_gates:
            return forbidden("spec.schedulingGates", f"only deletion is allowed, but found new scheduling gate '{name}'")
    old_tolerations = list(old_spec.get("tolerations") or [])
    new_tolerations = list(new_spec.get("tolerations") or [])
    if new_tolerations[: len(old_tolerations)] != old_tolerations:
        return forbidden("spec.tolerations", "existing toleration can not be modified except its tolerationSeconds")
    rest_old = {k: v for k, v in old_spec.items() if k not in ("schedulingGates", "tolerations")}
    rest_new = {k: v for k, v in new_spec.items() if k not in ("schedulingGates", "tolerations")}
    path = _first_diff(rest_old, rest_new, "spec")
    return immutable(path, dig({"spec": new_spec}, path)) if path else None


_POLICY_FIELDS = (
    ("kind", "schedulingPolicy"),
    ("disruption_mode", "disruptionMode"),
    ("priority_class_name", "priorityClassName"),
    ("priority", "priority"),
    ("preemption_policy", "preemptionPolicy"),
    ("topology_keys", "schedulingConstraints"),
)


def _pod_group_update(old: PodGroup, new: PodGroup, new_raw: Mapping) -> FieldError | None:
    """PodGroup: everything is immutable but ``gang.minCount``."""
    for attr, key in _POLICY_FIELDS:
        if getattr(old.policy, attr) != getattr(new.policy, attr):
            return immutable(f"spec.{key}", dig(new_raw, f"spec.{key}"))
    if old.workload_ref != new.workload_ref:
        return immutable("spec.workloadRef", dig(new_raw, "spec.workloadRef"))
    return None


def _workload_update(old: Workload, new: Workload, new_raw: Mapping) -> FieldError | None:
    """Workload: templates can't be added, removed or changed; controllerRef is fixed once set."""
    if old.controller_ref is not None and old.controller_ref != new.controller_ref:
        return immutable("spec.controllerRef", dig(new_raw, "spec.controllerRef"))
    if [t.name for t in old.templates] != [t.name for t in new.templates]:
        return immutable("spec.podGroupTemplates", [t.name for t in new.templates])
    raw_templates = dig(new_raw, "spec.podGroupTemplates") or []
    for i, (a, b) in enumerate(zip(old.templates, new.templates)):
        # like a PodGroup's, a template's policy is immutable but for gang.minCount
        for attr, key in _POLICY_FIELDS:
            if getattr(a.policy, attr) != getattr(b.policy, attr):
                raw = raw_templates[i] if i < len(raw_templates) and isinstance(raw_templates[i], Mapping) else {}
                return immutable(f"spec.podGroupTemplates[{i}].{key}", raw.get(key))
    return None
