"""The explanation of one gang or pod as plain data (the ``--format json`` document, README
"gangsim explain"): its spec as the scheduler saw it and the doctor checks, its history from the
event log, the per-plugin detail of one attempt from the recorder, and a verdict in plain words.

Everything is derived from the trace, the replay's ``EventLog`` and the ``AttemptRecorder``; the
order of every list is fixed (time, then name), so the same replay explains the same way.
"""

from __future__ import annotations

from dataclasses import asdict

from gangsim.api.duration import format_duration_ms
from gangsim.api.objects import Job, Pod, PodGroup, PodSpec
from gangsim.api.trace import Op, Trace
from gangsim.errors import UsageError
from gangsim.eventlog import NO_TIME, EventLog, EventReason, GangRecord, PodRecord
from gangsim.explain.record import AttemptRecorder, PodAttempt
from gangsim.report.waiting import waiting_reasons
from gangsim.validate.capacity import capacity, describe_requests, shortfall, trace_nodes

SCHEMA_VERSION = 1
HISTORY_REASONS = frozenset(
    {
        EventReason.GATED, EventReason.SCHEDULED, EventReason.NOMINATED, EventReason.PREEMPTED, EventReason.WAITING_ON_PERMIT,
        EventReason.PERMIT_REJECTED, EventReason.RENDEZVOUS_TIMEOUT, EventReason.GANG_STARTED, EventReason.GANG_BROKEN,
        EventReason.GANG_COMPLETED, EventReason.COMPLETED, EventReason.DELETED, EventReason.NODE_FAILED, EventReason.UNSCHEDULABLE,
        EventReason.SCHEDULER_ERROR, EventReason.DISRUPTION_TARGET, EventReason.RECREATED, EventReason.CANCELLED, EventReason.CHECKPOINT_LOST,
        EventReason.MIN_COUNT_CHANGED, EventReason.REJECTED,
    }
)  # fmt: skip


def _s(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


def _dur(ms: int) -> str:
    return format_duration_ms(ms) if ms else "0s"


def members_of(log: EventLog, kind: str, name: str) -> tuple[GangRecord | None, list[PodRecord]]:
    """The gang record and pod incarnations a ``--gang``/``--pod`` names; a usage error if none."""
    if kind == "gang":
        gang = next((g for g in log.gangs if g.gang == name), None)
        if gang is None:
            known = ", ".join(sorted(g.gang for g in log.gangs)[:10]) or "none"
            raise UsageError(f"--gang {name}: no such gang in this replay (gangs: {known})")
        return gang, [log.pods[i] for i, g in enumerate(log.pods.gang) if g == name]
    pods = [log.pods[i] for i, p in enumerate(log.pods.pod) if p == name]
    if not pods:
        raise UsageError(f"--pod {name}: no such pod in this replay")
    gang = next((g for g in log.gangs if g.gang == pods[0].gang), None) if pods[0].gang else None
    return gang, pods


def _specs(trace: Trace, gang: str, pod_names: set[str]) -> tuple[PodGroup | None, list[tuple[str, PodSpec]]]:
    """The gang's PodGroup (last version) and its members' specs as created (pod or Job name)."""
    group: PodGroup | None = None
    specs: list[tuple[str, PodSpec]] = []
    for ev in trace.events:
        obj = ev.obj
        if isinstance(obj, PodGroup) and obj.key == gang and ev.op is not Op.DELETE:
            group = obj
        elif ev.op is Op.CREATE and isinstance(obj, Pod) and obj.key in pod_names:
            specs.append((obj.key, obj.spec))
        elif ev.op is Op.CREATE and isinstance(obj, Job) and (obj.key == gang or any(n.startswith(obj.key + "-") for n in pod_names)):
            specs.append((obj.key, obj.template))
    return group, specs


def _spec_and_checks(trace: Trace, gang: GangRecord | None, group: PodGroup | None, specs: list[tuple[str, PodSpec]], pods: list[PodRecord]) -> tuple[dict, list[dict]]:
    """The spec as seen and the gang-doctor consistency checks."""
    first = specs[0][1] if specs else None
    policy = group.policy if group else None
    spec = {
        "kind": gang.kind if gang else "Pod",
        "min_count": gang.min_count if gang else 1,
        "podgroup_policy": policy.kind.value if policy else None,
        "disruption_mode": policy.disruption_mode.value if policy else None,
        "priority": gang.priority if gang else (pods[0].priority if pods else 0),
        "priority_class": (policy.priority_class_name if policy else "") or (first.priority_class_name if first else ""),
        "scheduler_name": first.scheduler_name if first else "",
        "workload": "/".join(group.workload_ref) if group and group.workload_ref else "",
        "requests": describe_requests(first) if first else "",
        "pods": len({p.pod for p in pods}),
    }
    checks: list[dict] = []

    def check(name: str, ok: bool, detail: str) -> None:
        checks.append({"check": name, "ok": ok, "detail": detail})

    if first is not None and first.scheduling_group:
        check("podgroup-exists", group is not None, f"PodGroup {gang.gang if gang else first.scheduling_group} {'exists' if group else 'is never created'}")
    if gang is not None:
        check("pods-reach-min-count", spec["pods"] >= gang.min_count, f"{spec['pods']} pods for minCount {gang.min_count}")
    names = sorted({s.scheduler_name for _, s in specs})
    profiles = {p.scheduler_name for p in trace.config.profiles}
    check("one-scheduler-name", len(names) <= 1 and all(n in profiles for n in names), f"schedulerName {', '.join(names) or '-'} (profiles: {', '.join(sorted(profiles))})")
    prios = sorted({s.priority for _, s in specs})
    want = gang.priority if gang else None
    check("priority-matches-group", all(p == want for p in prios) if want is not None else len(prios) <= 1, f"pod priorities {prios}, group {want}")
    policies = sorted({s.preemption_policy.value for _, s in specs} | ({policy.preemption_policy.value} if policy and policy.preemption_policy else set()))
    check("one-preemption-policy", len(policies) <= 1, f"preemptionPolicy {', '.join(policies) or '-'}")
    return spec, checks


def _history(log: EventLog, gang: GangRecord | None, pods: list[PodRecord], rec: AttemptRecorder) -> dict:
    names = {p.pod for p in pods}
    objects = names | ({gang.gang} if gang else set())
    events = [
        {"t_s": t / 1000, "object": o, "reason": r, "node": n, "message": m}
        for t, k, o, n, r, m in zip(log.ev_t_ms, log.ev_kind, log.ev_object, log.ev_node, log.ev_reason, log.ev_message)
        if o in objects and r in HISTORY_REASONS
    ]
    triggered = [v for v in log.victims if v.preemptor in objects]
    suffered = [v for v in log.victims if v.victim_pod in names]

    def victim(v) -> dict:  # noqa: ANN001 - VictimRecord
        return {"t_s": v.t_ms / 1000, "victim": v.victim_pod, "victim_gang": v.victim_gang, "priority": v.victim_priority, "node": v.node,
                "preemptor": v.preemptor, "in_vain": True if v.in_vain is None else bool(v.in_vain), "lost_gpu_s": v.lost_gpu_ms / 1000}  # fmt: skip

    return {
        "arrival_s": _s(gang.submitted_ms if gang else min(p.created_ms for p in pods)),
        "started_s": _s(gang.started_ms if gang else pods[-1].bound_ms),
        "finished_s": _s(gang.finished_ms) if gang else _s(pods[-1].ended_ms),
        "state": str(gang.state) if gang else ("Bound" if pods[-1].bound_ms is not None else "Pending"),
        "attempts": [_attempt_summary(c, atts, _status_at(log, gang, atts[0].t_ms)) for c, atts in _cycles(rec).items()],
        "events": events,
        "victims_triggered": [victim(v) for v in triggered],
        "victims_suffered": [victim(v) for v in suffered],
    }


def _cycles(rec: AttemptRecorder) -> dict[int, list[PodAttempt]]:
    out: dict[int, list[PodAttempt]] = {}
    for a in rec.attempts:
        out.setdefault(a.cycle, []).append(a)
    return out


def _status_at(log: EventLog, gang: GangRecord | None, t_ms: int) -> str:
    """The PodGroup's status after the attempt at ``t_ms``: its condition events are logged on
    change only, so the latest one at or before ``t_ms`` (PlacementFeasible's verdict with
    workload-aware preemption's appended; "Scheduled" once it was)."""
    if gang is None or gang.kind != "PodGroup":
        return ""
    status = ""
    for t, k, o, r, m in zip(log.ev_t_ms, log.ev_kind, log.ev_object, log.ev_reason, log.ev_message):
        if t > t_ms:
            break
        if k == "PodGroup" and o == gang.gang and r in (EventReason.UNSCHEDULABLE, EventReason.SCHEDULER_ERROR, "Scheduled"):
            status = m or r
    return status


def _attempt_summary(cycle: int, atts: list[PodAttempt], group_status: str) -> dict:
    placed = [a for a in atts if a.node]
    failed = [a for a in atts if not a.node]
    return {
        "cycle": cycle,
        "t_s": atts[0].t_ms / 1000,
        "evaluated": len(atts),
        "placed": len(placed),
        "unplaced": len(failed),
        "first_fit_error": failed[0].fit_error if failed else "",
        "group_status": group_status,
    }


def _attempt_detail(atts: list[PodAttempt]) -> dict:
    failed = [a for a in atts if not a.node]
    placed = [a for a in atts if a.node]
    out: dict = {"t_s": atts[0].t_ms / 1000, "cycle": atts[0].cycle, "num_nodes": atts[0].num_nodes, "placed": [{"pod": a.pod, "node": a.node} for a in placed]}
    if failed:
        f = failed[0]
        out["failed_pod"] = f.pod
        out["fit_error"] = f.fit_error
        out["filter"] = {"histogram": f.histogram, "rejected_by_plugin": f.rejected_by}
        out["closest_nodes"] = [{"node": m.node, "plugins": m.plugins, "lacking": {r: {"requested": a, "free": b} for r, (a, b) in m.lacking.items()}} for m in f.closest]
    if placed:
        out["scores"] = [{"pod": a.pod, "node": a.node, "plugins": [asdict(s) for s in a.scores]} for a in placed[:3]]
    return out


def _verdict(trace: Trace, log: EventLog, gang: GangRecord | None, pods: list[PodRecord], specs: list[tuple[str, PodSpec]], history: dict, detail: dict | None) -> tuple[str, str]:
    """(one paragraph, short form) in plain words."""
    victims = history["victims_triggered"]
    in_vain = [v for v in victims if v["in_vain"]]
    paid = ""
    if victims:
        names = ", ".join(sorted({v["victim"] for v in victims})[:6]) + (" …" if len({v["victim"] for v in victims}) > 6 else "")
        vain = ", ".join(sorted({v["victim"] for v in in_vain})[:6]) + (" …" if len(in_vain) > 6 else "")
        paid = f" It preempted {len(victims)} pod(s) ({names}); {len(in_vain)} of them died in vain" + (f" ({vain})" if in_vain else "")
        paid += " (the preemptor was not bound at its next attempt after they were gone)." if in_vain else "."
    suffered = history["victims_suffered"]
    if suffered:
        by = ", ".join(sorted({v["preemptor"] for v in suffered}))
        paid += f" {len(suffered)} of its pods were preempted (by {by})."
    started = history["started_s"]
    if started is not None:
        waited = int((started - history["arrival_s"]) * 1000)
        text = f"Arrived at {_dur(int(history['arrival_s'] * 1000))}, started at {_dur(int(started * 1000))} after waiting {_dur(waited)}; state {history['state']}."
        return text + paid, ""
    short = waiting_reasons(log).get(gang.gang, "") if gang else (pods[-1].waiting_reason if pods else "")
    need = gang.min_count if gang else 1
    if specs and len({describe_requests(s) for _, s in specs}) == 1:
        cap = capacity(trace_nodes(trace), specs[0][1])
        if cap.pods < need:
            text = f"Never started: needs {need} pod(s) of {describe_requests(specs[0][1])}; {shortfall(cap, need)}: it can never start."
            return text + paid, f"can never fit: {cap.pods} of {need} pods fit the empty cluster"
    if not history["attempts"]:
        gate = next((e["message"] for e in reversed(history["events"]) if e["reason"] == EventReason.GATED), "")
        return f"Never attempted: held at PreEnqueue ({gate or short})." + paid, short
    text = f"Still pending after {len(history['attempts'])} attempt(s)."
    if detail is not None and detail.get("fit_error"):
        text += f" At {_dur(int(detail['t_s'] * 1000))} {len(detail['placed'])} of {need} pods found a node; {detail['failed_pod']} did not: {detail['fit_error']}"
        closest = detail.get("closest_nodes") or []
        lacks = [f"{m['node']} lacks " + ", ".join(f"{v['requested'] - v['free']} {r}" for r, v in m["lacking"].items()) for m in closest if m["lacking"]]
        if lacks:
            text += " Closest nodes: " + "; ".join(lacks[:3]) + "."
        holders = _holders(log, [m["node"] for m in closest], int(detail["t_s"] * 1000))
        if holders:
            mine = gang.priority if gang else pods[0].priority
            higher = [h for h in holders if h[1] >= mine]
            text += f" Those nodes run {', '.join(sorted({h[0] for h in holders}))}" + (" (equal or higher priority: preemption cannot help)." if len(higher) == len(holders) else ".")
    return text + paid, short


def _holders(log: EventLog, nodes: list[str], t_ms: int) -> list[tuple[str, int]]:
    """(gang or pod, priority) of the pods bound on ``nodes`` at ``t_ms``."""
    wanted = set(nodes)
    pods = log.pods
    return [
        (pods.gang[i] or pods.pod[i], pods.priority[i])
        for i, (node, bound, ended) in enumerate(zip(pods.node, pods.bound_ms, pods.ended_ms))
        if node in wanted and bound != NO_TIME and bound <= t_ms and (ended == NO_TIME or ended > t_ms)
    ]


def build(trace: Trace, log: EventLog, rec: AttemptRecorder, kind: str, name: str, at_ms: int | None) -> dict:
    """The explanation document (schema version ``SCHEMA_VERSION``)."""
    gang, pods = members_of(log, kind, name)
    names = {p.pod for p in pods}
    group, specs = _specs(trace, gang.gang if gang else "", names)
    spec, checks = _spec_and_checks(trace, gang, group, specs, pods)
    history = _history(log, gang, pods, rec)
    cycles = _cycles(rec)
    chosen = [c for c, atts in cycles.items() if at_ms is None or atts[0].t_ms <= at_ms]
    detail = _attempt_detail(cycles[chosen[-1]]) if chosen else None
    verdict, short = _verdict(trace, log, gang, pods, specs, history, detail)
    return {
        "schema": SCHEMA_VERSION,
        "trace": log.info.trace,
        "policy": log.info.policy,
        "target": {"kind": kind, "name": name, "gang": gang.gang if gang else ""},
        "spec": spec,
        "checks": checks,
        "history": history,
        "attempt": detail,
        "verdict": verdict,
        "waiting_reason": short,
    }
