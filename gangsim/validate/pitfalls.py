"""Warnings: the gang-scheduling pitfalls of EXAMPLES.md §5 and SEMANTICS.md §1.5 / §8.7 that can be
seen in the loaded trace without running the scheduler (codes in ``findings.WARNING_CODES``).

``Pitfalls`` indexes the trace's bare Pods and Jobs (``_Member``) by the PodGroup they name
(``_Group``), then runs one check per pitfall. Objects that failed to load (``load_errors.Broken``)
are not warned about again. The scheduler's §1.5 messages are repeated below (``MSG_*``);
``tests/validate`` keeps them equal to ``gangsim.scheduler.schedule_podgroup``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gangsim.api.duration import format_duration_ms
from gangsim.api.objects import (
    Job,
    OwnedPods,
    Pod,
    PodAffinityTerm,
    PodGroup,
    PodGroupPolicy,
    PodSpec,
    PolicyKind,
    PreemptionPolicy,
    Source,
    Workload,
    object_ref,
)
from gangsim.api.quantity import format_amount
from gangsim.api.trace import Op, Trace
from gangsim.errors import go_quote
from gangsim.validate.capacity import check as check_capacity
from gangsim.validate.findings import Findings
from gangsim.validate.load_errors import Broken

# Gangs above this many pods get the start-up SLO note (EXAMPLES §5.9).
LARGE_GANG_PODS = 256

# SEMANTICS §1.5, KEP-5710 short forms (equal to gangsim.scheduler.schedule_podgroup.MSG_*).
MSG_SCHEDULER_NAME = "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: {} ({}) and {} ({})"
MSG_PRIORITY = "all pods in a pod group hierarchy should have the same priority as the root pod group's priority, got {} ({}) and {} ({})"
MSG_PREEMPTION_POLICY = "all pods in a pod group hierarchy should have the same preemption policy as the root pod group's preemption policy, got {} ({}) and {} ({})"

# SEMANTICS §8.2/§8.7: the cycle orders a group's pods by priority, then creation; upstream's advice
# (a higher priority for the depended-on pods) collides with §1.5 (pod priority == group priority).
_ORDER_ADVICE = (
    "the group's single greedy pass may miss a placement that exists; let the depended-on (hardest to place) pods go first: "
    "the cycle orders pods by priority, then creation time, and pod priorities must equal the PodGroup's, so create them first"
)


@dataclass(slots=True)
class _Member:
    """A bare Pod, or a Job standing for its pods (``<job>-<i>``)."""

    kind: str  # "Pod" | "Job"
    namespace: str
    name: str
    spec: PodSpec
    created_ms: int
    source: Source
    count: int = 1  # pods it creates (Job: the largest parallelism of its versions)
    step_ms: int = 0  # Job: gangsim.dev/pod-creation-interval
    gates: tuple[str, ...] = ()  # Pod: scheduling gates after the last patch
    deleted: bool = False
    no_gang: bool = False  # Job: its pods are no gang of their own making (a KEP-5547 PodGroup, completions waves)
    names: tuple[str, ...] = ()  # pods a workload controller names itself (api.OwnedPods) with this spec

    @property
    def ref(self) -> str:
        if self.names:  # a controller's pods with one template: the first of them
            more = f" (and {len(self.names) - 1} like it)" if len(self.names) > 1 else ""
            return object_ref("Pod", self.namespace, self.names[0]) + more
        return object_ref(self.kind, self.namespace, self.name)

    @property
    def group(self) -> str:
        return f"{self.namespace}/{self.spec.scheduling_group}" if self.spec.scheduling_group else ""

    def pod_names(self) -> list[str]:
        if self.names:
            return list(self.names)
        return [self.name] if self.kind == "Pod" else [f"{self.name}-{i}" for i in range(self.count)]

    @property
    def first_pod(self) -> str:
        return self.name if self.kind == "Pod" else f"{self.name}-0"


@dataclass(slots=True)
class _Group:
    pg: PodGroup
    created_ms: int
    min_count: int  # the smallest gang.minCount of its versions (basic: 1)
    members: list[_Member] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return object_ref("PodGroup", self.pg.namespace, self.pg.name)

    @property
    def is_gang(self) -> bool:
        return self.pg.policy.kind is PolicyKind.GANG


def _prio(value: int, class_name: str) -> str:
    return f"{value} (class {class_name})" if class_name else str(value)


def _more(n: int) -> str:
    return f" (and {n} more pod{'s' if n != 1 else ''} like it)" if n else ""


def _shape(spec: PodSpec) -> tuple:
    aff = spec.affinity
    return (
        tuple(sorted(spec.requests.items())),
        tuple(sorted(spec.node_selector.items())),
        aff.node_required if aff else None,
        spec.tolerations,
    )


def _describe_shape(spec: PodSpec) -> str:
    text = ", ".join(f"{k}: {format_amount(k, v)}" for k, v in sorted(spec.requests.items()) if k != "pods") or "no requests"
    if spec.node_selector:
        text += "; nodeSelector " + ", ".join(f"{k}={v}" for k, v in sorted(spec.node_selector.items()))
    if spec.affinity and spec.affinity.node_required:
        text += "; node affinity"
    if spec.tolerations:
        text += "; tolerations"
    return text


def _show(value: object) -> str:
    if isinstance(value, PreemptionPolicy):
        return value.value
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    return str(value)


def _term_reaches(term: PodAffinityTerm, namespace: str) -> bool:
    """Whether a pod affinity term can select pods in ``namespace`` (namespace labels are unknown)."""
    if term.label_selector is None:
        return False  # a nil selector selects nothing
    if term.namespace_selector is not None:
        return True
    return not term.namespaces or namespace in term.namespaces


class Pitfalls:
    """The pitfall checks of one loaded trace; ``run`` adds their warnings to ``findings``."""

    def __init__(self, trace: Trace, broken: Broken, findings: Findings) -> None:
        self.trace = trace
        self.broken = broken
        self.findings = findings
        self.members: list[_Member] = []
        self.groups: dict[str, _Group] = {}
        self.workloads: dict[str, tuple[Workload, int]] = {}
        self.node_deletes: list[tuple[str, int]] = []
        self._index()

    def _index(self) -> None:
        pods: dict[str, _Member] = {}
        jobs: dict[str, _Member] = {}
        for ev in self.trace.events:
            obj = ev.obj
            if ev.op is Op.CREATE:
                if isinstance(obj, Pod):
                    m = _Member("Pod", obj.namespace, obj.name, obj.spec, ev.at_ms, obj.source, gates=obj.spec.scheduling_gates)
                    pods[obj.key] = m
                    self.members.append(m)
                elif isinstance(obj, OwnedPods):
                    # one member per distinct template (a LeaderWorkerSet's leader and workers differ)
                    for spec in obj.pod_specs():
                        names = tuple(obj.pod_name(i) for i in range(obj.parallelism) if obj.pod_spec(i) is spec)
                        m = _Member("Job", obj.namespace, obj.name, spec, ev.at_ms, obj.source, len(names), gates=spec.scheduling_gates, names=names)
                        self.members.append(m)
                elif isinstance(obj, Job):
                    m = _Member(
                        "Job", obj.namespace, obj.name, obj.template, ev.at_ms, obj.source, obj.parallelism,
                        obj.pod_creation_interval_ms, gates=obj.template.scheduling_gates,
                        no_gang=obj.waves or obj.workload_managed(self.trace.job_workloads),
                    )  # fmt: skip
                    jobs[obj.key] = m
                    self.members.append(m)
                elif isinstance(obj, PodGroup) and obj.key not in self.groups:
                    self.groups[obj.key] = _Group(obj, ev.at_ms, obj.policy.effective_min_count)
                elif isinstance(obj, Workload) and obj.key not in self.workloads:
                    self.workloads[obj.key] = (obj, ev.at_ms)
            elif ev.op is Op.PATCH:
                if isinstance(obj, Pod) and obj.key in pods:
                    pods[obj.key].gates = obj.spec.scheduling_gates
                elif isinstance(obj, Job) and obj.key in jobs:
                    jobs[obj.key].count = max(jobs[obj.key].count, obj.parallelism)
                elif isinstance(obj, PodGroup) and obj.key in self.groups:
                    g = self.groups[obj.key]
                    g.min_count = min(g.min_count, obj.policy.effective_min_count)
            elif ev.op is Op.DELETE:
                key = f"{ev.namespace}/{ev.name}"
                if ev.kind == "Node":
                    self.node_deletes.append((ev.name, ev.at_ms))
                elif ev.kind == "Pod" and key in pods:
                    pods[key].deleted = True
        for m in self.members:
            if m.group in self.groups:
                self.groups[m.group].members.append(m)

    def warn(self, code: str, source: Source | None, obj: str, message: str) -> None:
        self.findings.warn(code, source, obj, message)

    def run(self) -> None:
        self.group_references()
        self.priorities()
        self.scheduler_names()
        self.group_sizes()
        self.shapes()
        self.workload_refs()
        self.monotonic_condition()
        self.jobs_without_group()
        self.gated()
        check_capacity(self)

    # -- helpers --------------------------------------------------------------------------------

    def _by_group(self) -> dict[str, list[_Member]]:
        """Members by the group they name (whether or not it exists), in creation order."""
        out: dict[str, list[_Member]] = {}
        for m in self.members:
            if m.group:
                out.setdefault(m.group, []).append(m)
        return out

    def _folded(self, items: list[tuple[_Member, object]]) -> list[tuple[_Member, object, int]]:
        """Jobs one by one; bare pods folded into their first one plus a count."""
        out: list[tuple[_Member, object, int]] = []
        pods = [(m, x) for m, x in items if m.kind == "Pod"]
        if pods:
            out.append((pods[0][0], pods[0][1], len(pods) - 1))
        out.extend((m, x, 0) for m, x in items if m.kind == "Job")
        out.sort(key=lambda t: (t[0].created_ms, t[0].source.file, t[0].source.line or 0))
        return out

    # -- 1. PreEnqueue: the PodGroup comes later, or never -----------------------------------------

    def group_references(self) -> None:
        for key, members in self._by_group().items():
            if self.broken.covers("PodGroup", *key.split("/", 1)):
                continue
            g = self.groups.get(key)
            if g is None:
                for m, _, more in self._folded([(m, None) for m in members]):
                    if m.kind == "Pod":
                        msg = f"references PodGroup {key}, which the trace never creates{_more(more)}: it waits at PreEnqueue forever; create the PodGroup or drop spec.schedulingGroup"
                    else:
                        msg = f"its pods reference PodGroup {key}, which the trace never creates: they wait at PreEnqueue forever; create the PodGroup or drop spec.template.spec.schedulingGroup"
                    self.warn("podgroup-missing", m.source, m.ref, msg)
                continue
            early = [(m, g.created_ms - m.created_ms) for m in members if m.created_ms < g.created_ms]
            pods = sorted((x for x in early if x[0].kind == "Pod"), key=lambda x: -x[1])
            for m, lead, more in self._folded([x for x in early if x[0].kind == "Job"] + pods):
                advice = "create the PodGroup (after its Workload) before the pods"
                if m.kind == "Pod":
                    msg = f"created {format_duration_ms(lead)} before its PodGroup {key}{_more(more)}: it waits at PreEnqueue until then; {advice}"
                else:
                    n_early = sum(1 for i in range(m.count) if m.created_ms + i * m.step_ms < g.created_ms)
                    which = f" ({n_early} of {m.count} pods)" if n_early < m.count else ""
                    msg = f"its pods are created up to {format_duration_ms(lead)} before their PodGroup {key}{which}: they wait at PreEnqueue until then; {advice}"
                self.warn("pod-before-podgroup", m.source, m.ref, msg)

    # -- 2. §1.5: priority and preemption policy must match the group's ---------------------------

    def priorities(self) -> None:
        for key, g in self.groups.items():
            pg = g.pg
            bad_prio = [(m, None) for m in g.members if m.spec.priority != pg.priority]
            for m, _, more in self._folded(bad_prio):
                pods = "its pods' priority" if m.kind == "Job" else "priority"
                self.warn(
                    "priority-mismatch",
                    m.source,
                    m.ref,
                    f"{pods} {_prio(m.spec.priority, m.spec.priority_class_name)} differs from PodGroup {key}'s priority "
                    f"{_prio(pg.priority, pg.policy.priority_class_name)}{_more(more)}: every cycle of the group fails with SchedulerError: "
                    f"{MSG_PRIORITY.format(m.spec.priority, go_quote(m.first_pod), pg.priority, go_quote(key))}; give pods and PodGroup the same priority value",
                )
            group_policy = pg.policy.preemption_policy
            if group_policy is None:
                continue
            bad_policy = [(m, None) for m in g.members if m.spec.preemption_policy is not group_policy and m.spec.priority == pg.priority]
            for m, _, more in self._folded(bad_policy):
                mine = m.spec.preemption_policy.value
                self.warn(
                    "preemption-policy-mismatch",
                    m.source,
                    m.ref,
                    f"preemptionPolicy {mine} differs from PodGroup {key}'s {group_policy.value}{_more(more)}: every cycle of the group fails "
                    f"with SchedulerError: {MSG_PREEMPTION_POLICY.format(mine, go_quote(m.first_pod), group_policy.value, go_quote(key))}; "
                    "use the same preemptionPolicy (or PriorityClass) for pods and PodGroup",
                )

    # -- 3./4. scheduler names -----------------------------------------------------------------

    def scheduler_names(self) -> None:
        for key, members in self._by_group().items():
            names: dict[str, _Member] = {}
            for m in members:
                names.setdefault(m.spec.scheduler_name, m)
            if len(names) < 2:
                continue
            (a, ma), (b, mb) = list(names.items())[:2]
            g = self.groups.get(key)
            self.warn(
                "mixed-scheduler-name",
                g.pg.source if g else ma.source,
                g.ref if g else f"PodGroup {key}",
                f'its pods use schedulerName "{a}" ({ma.ref}) and "{b}" ({mb.ref}): every cycle of the group fails with SchedulerError: '
                f"{MSG_SCHEDULER_NAME.format(go_quote(b), go_quote(mb.first_pod), go_quote(a), go_quote(ma.first_pod))}; use one scheduler for the whole group",
            )
        profiles = [p.scheduler_name for p in self.trace.config.profiles]
        listed = ", ".join(f'"{p}"' for p in profiles)
        unknown: dict[str, list[tuple[_Member, object]]] = {}
        for m in self.members:
            if m.spec.scheduler_name not in profiles:
                unknown.setdefault(m.spec.scheduler_name, []).append((m, None))
        for name, items in unknown.items():
            for m, _, more in self._folded(items):
                who = "the pod is never scheduled and counts" if m.kind == "Pod" else "its pods are never scheduled and count"
                self.warn(
                    "unknown-scheduler",
                    m.source,
                    m.ref,
                    f'schedulerName "{name}"{_more(more)} has no profile in the KubeSchedulerConfiguration (profiles: {listed}): '
                    f"{who} for no gang; add a profile or fix the name",
                )

    # -- 7./8./9. gang sizes --------------------------------------------------------------------

    def group_sizes(self) -> None:
        for key, g in self.groups.items():
            if key in self.broken.groups_with_broken_members:
                continue
            # INTERFACE rule 7: a pod whose schedulerName has no profile counts for no gang
            profiles = {p.scheduler_name for p in self.trace.config.profiles}
            pods = {n for m in g.members if m.spec.scheduler_name in profiles for n in m.pod_names()}
            jobs = [m for m in g.members if m.kind == "Job"]
            if not g.members:
                self.warn(
                    "podgroup-unused",
                    g.pg.source,
                    g.ref,
                    f"no Pod or Job references this PodGroup (spec.schedulingGroup.podGroupName: {g.pg.name}): check the name for a typo",
                )
                continue
            if not g.is_gang:
                continue
            flagged = False
            # only a Job that is the group's sole member can keep it below minCount on its own
            # (several Jobs, e.g. an SWF job split into full pods and a remainder, add up)
            for job in jobs if len(g.members) == 1 else ():
                if job.count < g.min_count:
                    flagged = True
                    self.warn(
                        "parallelism-below-min-count",
                        job.source,
                        job.ref,
                        f"parallelism {job.count} is below gang.minCount {g.min_count} of its PodGroup {key}: the gang can never start; "
                        "set parallelism to at least minCount (or lower minCount)",
                    )
            if len(pods) < g.min_count and not (flagged and len(g.members) == 1):
                self.warn(
                    "min-count-unreachable",
                    g.pg.source,
                    g.ref,
                    f"gang.minCount {g.min_count} but only {len(pods)} pod{'s' if len(pods) != 1 else ''} ever reference this PodGroup: "
                    "the gang can never start; lower minCount or create more pods",
                )
            if g.min_count > LARGE_GANG_PODS:
                spread = max((m.created_ms + (m.count - 1) * m.step_ms for m in g.members), default=0) - min(m.created_ms for m in g.members)
                over = f" (its pods are created over {format_duration_ms(spread)})" if spread else ""
                self.warn(
                    "large-gang",
                    g.pg.source,
                    g.ref,
                    f"a gang of {g.min_count} pods starts only once all of them are created, observed and placed{over}: "
                    f"pod start-up SLOs need re-defining for gangs over {LARGE_GANG_PODS} pods",
                )

    # -- 5. §8.7: heterogeneous groups and intra-group pod (anti-)affinity ------------------------

    def shapes(self) -> None:
        for key, g in self.groups.items():
            if not g.is_gang or len({n for m in g.members for n in m.pod_names()}) < 2:
                continue
            shapes: dict[tuple, _Member] = {}
            for m in g.members:
                shapes.setdefault(_shape(m.spec), m)
            if len(shapes) > 1:
                a, b = list(shapes.values())[:2]
                self.warn(
                    "heterogeneous-group",
                    g.pg.source,
                    g.ref,
                    f"its pods differ in requests or node constraints ({len(shapes)} shapes, e.g. {a.ref}: {_describe_shape(a.spec)} / "
                    f"{b.ref}: {_describe_shape(b.spec)}): {_ORDER_ADVICE}",
                )
            hit = self._intra_affinity(g)
            if hit is not None:
                m, what, other = hit
                target = "its own sibling pods" if other is m else f"pods of the same group ({other.ref})"
                self.warn("intra-group-affinity", g.pg.source, g.ref, f"{m.ref} has {what} to {target}: {_ORDER_ADVICE}")

    @staticmethod
    def _intra_affinity(g: _Group) -> tuple[_Member, str, _Member] | None:
        for m in g.members:
            aff = m.spec.affinity
            if aff is None or not aff.has_pod_affinity:
                continue
            kinds = (
                ("required pod affinity", aff.pod_affinity_required),
                ("required pod anti-affinity", aff.pod_anti_affinity_required),
                ("preferred pod affinity", tuple(w.term for w in aff.pod_affinity_preferred)),
                ("preferred pod anti-affinity", tuple(w.term for w in aff.pod_anti_affinity_preferred)),
            )
            for what, terms in kinds:
                for term in terms:
                    if not _term_reaches(term, m.namespace):
                        continue
                    for other in g.members:
                        if other is m and m.count < 2:
                            continue  # a lone pod matching itself is no intra-group dependency
                        if term.label_selector.matches(other.spec.labels):
                            return m, what, other
        return None

    # -- Workload ↔ PodGroup (§1.2/1.3, EXAMPLES §4) ---------------------------------------------

    def workload_refs(self) -> None:
        used: set[tuple[str, str]] = set()
        for key, g in self.groups.items():
            if g.pg.workload_ref is None:
                continue
            wname, tname = g.pg.workload_ref
            wkey = f"{g.pg.namespace}/{wname}"
            used.add((wkey, tname))
            if self.broken.covers("Workload", g.pg.namespace, wname):
                continue
            found = self.workloads.get(wkey)
            if found is None:
                self.warn(
                    "workload-missing",
                    g.pg.source,
                    g.ref,
                    f"spec.workloadRef names Workload {wkey}, which the trace never creates: create it first (Workload → PodGroup → Pods)",
                )
                continue
            workload, created_ms = found
            template = next((t for t in workload.pod_group_templates if t.name == tname), None)
            if template is None:
                have = ", ".join(f'"{t.name}"' for t in workload.pod_group_templates)
                self.warn(
                    "workload-template-missing",
                    g.pg.source,
                    g.ref,
                    f'spec.workloadRef names template "{tname}", which Workload {wkey} does not have (templates: {have}); templates cannot be added later',
                )
                continue
            if created_ms > g.created_ms:
                self.warn(
                    "podgroup-before-workload",
                    g.pg.source,
                    g.ref,
                    f"created {format_duration_ms(created_ms - g.created_ms)} before its Workload {wkey}: create Workload → PodGroup → Pods in that order",
                )
            diff = self._policy_diff(g.pg, template.policy)
            if diff:
                self.warn(
                    "podgroup-template-mismatch",
                    g.pg.source,
                    g.ref,
                    f'{diff} in template "{tname}" of Workload {wkey}: a PodGroup copies its template\'s policy; keep them equal',
                )
        for wkey, (workload, _) in self.workloads.items():
            for t in workload.pod_group_templates:
                if (wkey, t.name) not in used:
                    self.warn(
                        "workload-template-unused",
                        workload.source,
                        object_ref("Workload", workload.namespace, workload.name),
                        f'podGroupTemplate "{t.name}" is referenced by no PodGroup (spec.workloadRef.templateName): '
                        "create its PodGroup or remove the template (templates cannot be removed later)",
                    )

    @staticmethod
    def _policy_diff(pg: PodGroup, tp: PodGroupPolicy) -> str:
        p = pg.policy
        checks = (
            ("schedulingPolicy", p.kind.value, tp.kind.value),
            ("gang.minCount", p.min_count if p.kind is PolicyKind.GANG else None, tp.min_count if tp.kind is PolicyKind.GANG else None),
            ("disruptionMode", p.disruption_mode.value, tp.disruption_mode.value),
            ("priority", p.priority or 0, tp.priority or 0),
            ("preemptionPolicy", p.preemption_policy, tp.preemption_policy),
            ("schedulingConstraints", p.topology_keys, tp.topology_keys),
        )
        for name, mine, theirs in checks:
            if mine != theirs:
                return f"{name} is {_show(mine)} here but {_show(theirs)}"
        return ""

    # -- 6. PodGroupInitiallyScheduled is monotonic (§1.4) ----------------------------------------

    def monotonic_condition(self) -> None:
        groups = [g for g in self.groups.values() if g.members]
        if not groups:
            return
        reasons: list[str] = []
        at_risk: _Group | None = None
        if self.node_deletes:
            name, at_ms = self.node_deletes[0]
            n = len(self.node_deletes)
            when = f"Node {name} is deleted at {format_duration_ms(at_ms)}"
            reasons.append(when if n == 1 else f"{n} node deletions, the first: {when}")
            at_risk = groups[0]
        # Preemptors: pods that may preempt (a group member preempts with its group's priority and policy),
        # highest priority first; the lowest-priority group is the likeliest victim (§1.5: the victim's
        # priority is its PodGroup's).
        preemptors: list[tuple[int, int, _Member, _Group | None]] = []
        for i, m in enumerate(self.members):
            own = self.groups.get(m.group)
            priority = own.pg.priority if own else m.spec.priority
            policy = (own.pg.policy.preemption_policy if own else None) or m.spec.preemption_policy
            if policy is PreemptionPolicy.PREEMPT_LOWER_PRIORITY:
                preemptors.append((-priority, i, m, own))
        preemptors.sort(key=lambda t: (t[0], t[1]))
        # If the lowest-priority group has no preemptor outside itself, no other group has one either.
        g = min(groups, key=lambda g: (g.pg.priority, g.created_ms))
        best = next(((-neg, m) for neg, _, m, own in preemptors if own is not g), None)
        if best is not None and best[0] > g.pg.priority:
            reasons.append(f"{g.ref} (priority {g.pg.priority}) can be preempted by {best[1].ref} (priority {best[0]})")
            at_risk = at_risk or g
        if at_risk is None:
            return
        self.warn(
            "initially-scheduled-monotonic",
            at_risk.pg.source,
            at_risk.ref,
            f"members of scheduled PodGroups can be evicted here ({'; '.join(reasons)}): PodGroupInitiallyScheduled stays True "
            "after evictions, so it is no health check; watch the member pods instead (gangsim: the gangs and victims tables)",
        )

    # -- Jobs that are no gang; pods that stay gated ---------------------------------------------

    def jobs_without_group(self) -> None:
        for m in self.members:
            # a Job the Job controller gives a PodGroup (KEP-5547), or whose pods each run alone (completions waves), is left alone
            if m.kind == "Job" and not m.group and m.count > 1 and not m.no_gang:
                self.warn(
                    "job-without-podgroup",
                    m.source,
                    m.ref,
                    f"parallelism {m.count} but no PodGroup: its pods are scheduled one by one under every policy, and partial jobs hold "
                    f"GPUs idle until the rendezvous timeout; add a PodGroup with gang.minCount: {m.count} and set "
                    "spec.template.spec.schedulingGroup.podGroupName",
                )

    def gated(self) -> None:
        items = [(m, None) for m in self.members if m.gates and not m.deleted]
        by_gates: dict[tuple[str, ...], list[tuple[_Member, object]]] = {}
        for m, x in items:
            by_gates.setdefault(m.gates, []).append((m, x))
        for gates, group in by_gates.items():
            shown_gates = "[" + ", ".join(f'"{g}"' for g in gates) + "]"
            for m, _, more in self._folded(group):
                if m.kind == "Pod":
                    msg = (
                        f"spec.schedulingGates {shown_gates} are never removed by a later patch{_more(more)}: the pod is never scheduled; "
                        "patch the gates away (spec.schedulingGates: null) when it may be scheduled"
                    )
                else:
                    msg = (
                        f"its pods carry spec.template.spec.schedulingGates {shown_gates} and nothing in the trace removes them: "
                        "they are never scheduled; drop the gates from the template"
                    )
                self.warn("scheduling-gated", m.source, m.ref, msg)


__all__ = ["LARGE_GANG_PODS", "MSG_PREEMPTION_POLICY", "MSG_PRIORITY", "MSG_SCHEDULER_NAME", "Pitfalls"]
