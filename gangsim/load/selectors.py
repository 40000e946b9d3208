"""Label selectors, node selector terms, affinity, taints and tolerations, with apimachinery's
validation messages (``pkg/apis/core/validation``, ``apimachinery/.../validation``)."""

from __future__ import annotations

from gangsim.api.objects import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    SCHEDULE_ANYWAY,
    Affinity,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from gangsim.api.selectors import LabelSelector, NodeSelectorTerm, Requirement
from gangsim.errors import FieldError, forbidden, invalid, required
from gangsim.load.fields import Obj, check_qualified, not_supported

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TOLERATION_OPERATORS = ("Equal", "Exists")
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _requirement(r: Obj, operators: tuple[str, ...]) -> Requirement:
    r.check_keys({"key", "operator", "values"})
    key = check_qualified(r, "key")
    op = r.str("operator", req=True)
    if op not in operators:
        raise r.error("operator", not_supported(r.fp("operator"), op, operators))
    values = r.strings("values")
    if op in ("In", "NotIn") and not values:
        raise r.error("values", required(r.fp("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
    if op in ("Exists", "DoesNotExist") and values:
        raise r.error("values", forbidden(r.fp("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise r.error("values", required(r.fp("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
        try:
            int(values[0])
        except ValueError:
            raise r.error("values", invalid(f"{r.fp('values')}[0]", values[0], "must be an integer when `operator` is 'Lt' or 'Gt'")) from None
    return Requirement(key, op, values)


def _field_requirement(r: Obj) -> Requirement:
    r.check_keys({"key", "operator", "values"})
    key = r.str("key", req=True)
    if key != "metadata.name":
        raise r.error("key", not_supported(r.fp("key"), key, ["metadata.name"]))
    op = r.str("operator", req=True)
    if op not in ("In", "NotIn"):
        raise r.error("operator", not_supported(r.fp("operator"), op, ["In", "NotIn"]))
    values = r.strings("values")
    if len(values) != 1:
        raise r.error("values", required(r.fp("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
    return Requirement(key, op, values)


def label_selector(o: Obj | None) -> LabelSelector | None:
    if o is None:
        return None
    o.check_keys({"matchLabels", "matchExpressions"})
    labels = o.labels("matchLabels")
    exprs = tuple(_requirement(r, LABEL_OPERATORS) for r in o.objs("matchExpressions"))
    return LabelSelector(tuple(labels.items()), exprs)


def node_selector_term(t: Obj) -> NodeSelectorTerm:
    t.check_keys({"matchExpressions", "matchFields"})
    exprs = tuple(_requirement(r, NODE_OPERATORS) for r in t.objs("matchExpressions"))
    fields = tuple(_field_requirement(r) for r in t.objs("matchFields"))
    return NodeSelectorTerm(exprs, fields)


def _weight(o: Obj) -> int:
    weight = o.int("weight")
    if weight is None or not 1 <= weight <= 100:
        raise o.error("weight", invalid(o.fp("weight"), weight if weight is not None else 0, "must be in the range 1-100"))
    return weight


def _pod_affinity_term(t: Obj) -> PodAffinityTerm:
    t.check_keys({"labelSelector", "namespaces", "namespaceSelector", "topologyKey"}, {
        "matchLabelKeys": "gangsim does not model matchLabelKeys in pod affinity",
        "mismatchLabelKeys": "gangsim does not model mismatchLabelKeys in pod affinity",
    })  # fmt: skip
    if not t.raw("topologyKey"):
        raise t.error("topologyKey", required(t.fp("topologyKey"), "can not be empty"))
    topology_key = check_qualified(t, "topologyKey")
    return PodAffinityTerm(
        label_selector(t.obj("labelSelector")),
        t.strings("namespaces"),
        label_selector(t.obj("namespaceSelector")),
        topology_key,
    )


def _pod_affinity(o: Obj | None) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    if o is None:
        return (), ()
    o.check_keys({_REQUIRED, _PREFERRED})
    req = tuple(_pod_affinity_term(t) for t in o.objs(_REQUIRED))
    pref = []
    for p in o.objs(_PREFERRED):
        p.check_keys({"weight", "podAffinityTerm"})
        pref.append(WeightedPodAffinityTerm(_weight(p), _pod_affinity_term(p.obj("podAffinityTerm", req=True))))
    return req, tuple(pref)


def affinity(o: Obj | None) -> Affinity | None:
    if o is None:
        return None
    o.check_keys({"nodeAffinity", "podAffinity", "podAntiAffinity"})
    node_required = None
    node_preferred: list[PreferredSchedulingTerm] = []
    na = o.obj("nodeAffinity")
    if na is not None:
        na.check_keys({_REQUIRED, _PREFERRED})
        req = na.obj(_REQUIRED)
        if req is not None:
            req.check_keys({"nodeSelectorTerms"})
            node_required = tuple(node_selector_term(t) for t in req.objs("nodeSelectorTerms"))
            if not node_required:
                raise req.error("nodeSelectorTerms", required(req.fp("nodeSelectorTerms"), "must have at least one node selector term"))
        for p in na.objs(_PREFERRED):
            p.check_keys({"weight", "preference"})
            node_preferred.append(PreferredSchedulingTerm(_weight(p), node_selector_term(p.obj("preference", req=True))))
    pa_req, pa_pref = _pod_affinity(o.obj("podAffinity"))
    anti_req, anti_pref = _pod_affinity(o.obj("podAntiAffinity"))
    result = Affinity(node_required, tuple(node_preferred), pa_req, pa_pref, anti_req, anti_pref)
    return None if result == Affinity() else result


def tolerations(spec: Obj) -> tuple[Toleration, ...]:
    out = []
    for t in spec.objs("tolerations"):
        t.check_keys({"key", "operator", "value", "effect", "tolerationSeconds"})
        key = check_qualified(t, "key", req=False)
        op = t.str("operator", "Equal")
        if op not in TOLERATION_OPERATORS:
            raise t.error("operator", not_supported(t.fp("operator"), op, TOLERATION_OPERATORS))
        value = t.str("value")
        if op == "Equal" and not key:
            raise t.error("operator", invalid(t.fp("operator"), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
        if op == "Exists" and value:
            raise t.error("operator", invalid(t.fp("operator"), op, "value must be empty when `operator` is 'Exists'"))
        effect = t.enum("effect", TAINT_EFFECTS)
        if "tolerationSeconds" in t:
            t.int("tolerationSeconds")
            if effect != "NoExecute":
                raise t.error("effect", invalid(t.fp("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        out.append(Toleration(key, op, value, effect))
    return tuple(out)


def taints(spec: Obj) -> tuple[Taint, ...]:
    out: list[Taint] = []
    seen: set[tuple[str, str]] = set()
    for t in spec.objs("taints"):
        t.check_keys({"key", "value", "effect", "timeAdded"})
        key = check_qualified(t, "key")
        value = t.str("value")
        effect = t.str("effect")
        if not effect:
            raise t.error("effect", required(t.fp("effect")))
        if effect not in TAINT_EFFECTS:
            raise t.error("effect", not_supported(t.fp("effect"), effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            raise t.error("key", invalid(t.path, f"{key}:{effect}", "taints must be unique by key and effect pair"))
        seen.add((key, effect))
        out.append(Taint(key, value, effect))
    return tuple(out)



_NOT_POSITIVE = "must be greater than zero"  # validation.go isNotPositiveErrorMsg
SPREAD_ACTIONS = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
INCLUSION_POLICIES = (HONOR, IGNORE)


def topology_spread(spec: Obj) -> tuple[TopologySpreadConstraint, ...]:
    """``spec.topologySpreadConstraints`` with ``validateTopologySpreadConstraints``'s rules and
    messages (``pkg/apis/core/validation/validation.go``): maxSkew > 0, topologyKey required and
    qualified, whenUnsatisfiable and the node inclusion policies from their enums, one constraint
    per {topologyKey, whenUnsatisfiable}, minDomains > 0 and only with DoNotSchedule,
    matchLabelKeys only with a labelSelector and not naming one of its keys."""
    out: list[TopologySpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for c in spec.objs("topologySpreadConstraints"):
        c.check_keys({"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "matchLabelKeys", "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy"})
        max_skew = c.int("maxSkew", 0)
        if max_skew is None or max_skew <= 0:
            raise c.error("maxSkew", invalid(c.fp("maxSkew"), max_skew, _NOT_POSITIVE))
        if not c.raw("topologyKey"):
            raise c.error("topologyKey", required(c.fp("topologyKey"), "can not be empty"))
        key = check_qualified(c, "topologyKey")
        action = c.str("whenUnsatisfiable")
        if action not in SPREAD_ACTIONS:
            raise c.error("whenUnsatisfiable", not_supported(c.fp("whenUnsatisfiable"), action, SPREAD_ACTIONS))
        if (key, action) in seen:
            # field.Duplicate(path, "{key, action}"): rendered with the value quoted, no detail
            raise c.error("topologyKey", FieldError(c.fp("{topologyKey, whenUnsatisfiable}"), f'"{{{key}, {action}}}"', "Duplicate value"))
        seen.add((key, action))
        min_domains = c.int("minDomains")
        if min_domains is not None:
            if min_domains <= 0:
                raise c.error("minDomains", invalid(c.fp("minDomains"), min_domains, _NOT_POSITIVE))
            if action != DO_NOT_SCHEDULE:
                raise c.error("minDomains", invalid(c.fp("minDomains"), min_domains, f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, not {action}"))
        policies = [c.enum(name, INCLUSION_POLICIES, default) for name, default in (("nodeAffinityPolicy", HONOR), ("nodeTaintsPolicy", IGNORE))]
        selector = label_selector(c.obj("labelSelector"))
        keys = c.strings("matchLabelKeys")
        if keys and selector is None:
            raise c.error("matchLabelKeys", forbidden(c.fp("matchLabelKeys"), "must not be specified when labelSelector is not set"))
        if selector is not None:
            in_selector = {k for k, _ in selector.match_labels} | {r.key for r in selector.match_expressions}
            for i, k in enumerate(keys):
                if k in in_selector:
                    raise c.error("matchLabelKeys", invalid(f"{c.fp('matchLabelKeys')}[{i}]", k, "exists in both matchLabelKeys and labelSelector"))
        out.append(TopologySpreadConstraint(max_skew, key, action, selector, keys, min_domains or 1, policies[0], policies[1]))
    return tuple(out)
