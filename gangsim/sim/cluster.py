"""The simulated cluster around the scheduler: its object store, kubelets and controllers.

Trace events reach the object store through the API server's handlers (``sim.apiserver``); the
cluster keeps the pods' lifecycle, runs the Job controller (pods ``<job>-<index>``,
recreated after failures), implements the scheduler's ``ClusterAPI`` (bind, Permit
reservations, preemption), keeps the GPU accounting that feeds the timeline, and decides whether
each preemption was in vain. Everything it learns goes into the ``EventLog``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from gangsim.api.devices import format_ids, gpu_milli, requested_milli
from gangsim.api.objects import Node, Pod, PodDisruptionBudget, PodGroup, PolicyKind
from gangsim.api.trace import TraceEvent
from gangsim.eventlog import EndReason, EventLog, EventReason, GangState, VictimRecord
from gangsim.scheduler.framework.handle import Timer, Victim
from gangsim.scheduler.framework.types import PodInfo
from gangsim.scheduler.informer import Informer
from gangsim.sim.apiserver import APIServer
from gangsim.sim.engine import Engine, Phase
from gangsim.sim.in_vain import InVainTracker
from gangsim.sim.jobcontroller import JobController
from gangsim.sim.jobs import LONE, Gang, JobModel
from gangsim.sim.kubelet import Kubelets
from gangsim.sim.pods import ENDED, PENDING, RUNNING, TERMINATING, WAITING, FailureRun, SimPod

# enum members the per-pod paths read, as module names: read through its class, a member costs
# ~100 ns on Python 3.11 (EnumType's __getattr__ hook), a module name ~10 ns
WAITING_ON_PERMIT = EventReason.WAITING_ON_PERMIT
END_PREEMPTED = EndReason.PREEMPTED
END_COMPLETED = EndReason.COMPLETED
END_CANCELLED = EndReason.CANCELLED
SAMPLE = Phase.SAMPLE
SCHEDULE = Phase.SCHEDULE


class Cluster:
    def __init__(self, engine: Engine, log: EventLog) -> None:
        self.engine = engine
        self.log = log
        self.clock: Callable[[], int] = partial(getattr, engine, "now")  # ``ClusterAPI.clock``: no Python frame per read
        self.scheduler: Informer  # set by ``attach``
        self.kubelets = Kubelets()
        self.nodes: dict[str, Node] = {}
        self.pods: dict[str, SimPod] = {}  # live pods by "ns/name"
        self.by_uid: dict[int, SimPod] = {}
        self.pod_groups: dict[str, PodGroup] = {}
        self.pdbs: dict[str, PodDisruptionBudget] = {}
        self.jobs_model = JobModel(engine, log, on_busy_delta=self._busy_delta, fail_pods=self._fail_pods, complete_gang=self._complete_gang, domain_of=self._domain_of)
        self.job_controller = JobController(
            engine, log, create_pod=self.create_pod, end_pod=self.end_pod, sample=self._sample, pod_running=lambda sp: sp.state == RUNNING
        )
        self._uid = 0
        self.gpus_allocated = 0
        self.gpus_busy = 0
        # the same in GPU-milli, shared GPUs included (1000 per whole GPU)
        self.milli_allocated = 0
        self.milli_busy = 0
        self.shares: dict[str, int] = {}  # declared share resource -> units per GPU (first node's)
        self.pending_pods = 0
        self.binds = 0  # pods bound so far (the progress bar's count)
        self.pending_gpu_pods = 0
        self._cycle_requested_at = -1
        self._sample_at = -1  # the instant whose timeline sample is due (``_sample``)
        self.in_vain = InVainTracker()
        # ClusterAPI: a scheduling attempt of a pod or PodGroup started / ended (in-vain decisions)
        self.attempt_started = self.in_vain.attempt_started
        self.attempt_finished = self.in_vain.attempt_finished
        self.api = APIServer(self)  # trace events: the object store and its watchers

    def attach(self, scheduler: Informer) -> None:
        self.scheduler = scheduler

    # ---- ClusterAPI ---------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.engine.now

    def call_at(self, t_ms: int, handler: Callable[[], None]) -> None:
        self.engine.at(t_ms, Phase.QUEUE, lambda _p: handler(), productive=False)

    def set_timer(self, t_ms: int, handler: Callable[[], None]) -> Timer:
        return self.engine.timer(t_ms, Phase.TIMEOUT, lambda _p: handler())

    def request_cycle(self) -> None:
        now = self.engine.now
        if self._cycle_requested_at == now:
            return
        self._cycle_requested_at = now
        self.engine.at(now, SCHEDULE, self._run_scheduler, productive=False)

    def _run_scheduler(self, _payload: object = None) -> None:
        self._cycle_requested_at = -1
        self.scheduler.run_cycles()

    def attempted(self, info: PodInfo) -> None:
        if (sp := self.by_uid.get(info.uid)) is not None:
            self.log.pods.scheduling_attempts[sp.row] += 1
        self.attempt_started(info.key)

    def gated(self, info: PodInfo, message: str) -> None:
        """The pod's waiting reason is ``message`` (PreEnqueue's; ``scheduling_failed``: its last failure's)."""
        if (sp := self.by_uid.get(info.uid)) is not None:
            self.log.pods.waiting_reason[sp.row] = message

    def group_attempted(self, key: str, times: int = 1) -> None:
        g = self.jobs_model.gangs.get(key)
        if g is not None and g.record is not None:
            g.record.schedule_attempts += times
        self.attempt_started(key)  # (once: it marks the open decisions of ``key`` attempted)

    def scheduling_failed(self, info: PodInfo, message: str) -> None:
        self.gated(info, message)
        self.attempt_finished(info.key, bound=False)

    def failures_recorded(self, infos: tuple[PodInfo, ...], messages: tuple[str, ...], *, peelable: bool = False) -> FailureRun:
        """Each of ``infos`` was just attempted and failed with its ``messages[i]`` (``attempted``, a FailedScheduling
        event, ``scheduling_failed``): the run ``failed_again`` counts repeats in (``FailureStreak.peelable``)."""
        rows = tuple(sp.row if (sp := self.by_uid.get(i.uid)) is not None else -1 for i in infos)
        streak = self.log.open_streak(self.now, "Pod", EventReason.FAILED_SCHEDULING, tuple(i.key for i in infos), messages, rows, peelable=peelable)
        return FailureRun(infos, streak)

    def failed_again(self, run: FailureRun | None, infos: tuple[PodInfo, ...], messages: tuple[str, ...], *, times: int = 1, at_ms: int | None = None, last_ms: int | None = None, max_gap_ms: int = 0, also: tuple[str, ...] = (), record: bool = True, renew: bool = False) -> bool:
        """Record ``times`` attempts (``EventLog.fail_again``: from ``at_ms``, default now) of ``infos`` failing each again with its message of ``run``, when nothing else
        happened to them since (the streak is live; of a peelable one, the pods still in it) and no preemption waits on their attempts (nor ``also``'s): what
        ``attempted``, the aggregated event and ``scheduling_failed`` would record for each, in O(1). False (nothing recorded) otherwise; ``record=False``: only say.
        ``renew`` (``FastPath.renewed_failures``): one attempt now with other ``messages`` is recorded too where ``EventLog.fail_anew`` can."""
        if run is None or not run.streak.live:
            return False
        streak, k = run.streak, run.streak.start
        # (``is`` first, for a streak nobody left (start 0): a run checked right after it was
        # opened holds the very tuples, and comparing a 256-pod gang's tuples element by element
        # is what a stuck gang's retries pay)
        if ((k or run.infos is not infos) and run.infos[k:] != infos) or not self.in_vain.idle_for(streak.objs[k:], also):
            return False
        if (k or streak.messages is not messages) and streak.messages[k:] != messages:
            return renew and record and times == 1 and at_ms is None and self.log.fail_anew(streak, self.now, messages)
        if record:
            self.log.fail_again(streak, self.now if at_ms is None else at_ms, times=times, last_ms=last_ms, max_gap_ms=max_gap_ms)
        return True

    def bind(self, info: PodInfo, node: str) -> None:
        sp = self.by_uid[info.uid]
        was_waiting = sp.state == WAITING
        sp.state = RUNNING
        self.kubelets.occupy(node, sp.uid, sp, info.devices)
        if not was_waiting:
            self._hold(sp, node)
        self.log.pods.bind(sp.row, self.now, node, format_ids(self.kubelets.devices_of(sp.uid)), sp.milli)
        self.pending_pods -= 1
        self.binds += 1
        gpus = sp.gpus
        if gpus:
            self.pending_gpu_pods -= 1
        self.jobs_model.started(sp.gang, sp.uid, sp, gpus, sp.milli)
        self.attempt_finished(info.key, bound=True)
        if sp.gang.kind == "PodGroup":
            self.attempt_finished(sp.gang.key, bound=True)
        if self.job_controller.parked:
            self.job_controller.start_parked()
        self._sample()

    def reserved(self, info: PodInfo, node: str) -> None:
        sp = self.by_uid[info.uid]
        sp.state = WAITING
        self.kubelets.occupy(node, sp.uid, sp, info.devices)
        self._hold(sp, node)
        self.log.event(self.now, "Pod", info.key, node, WAITING_ON_PERMIT, "")
        self._sample()

    def unreserved(self, info: PodInfo) -> None:
        sp = self.by_uid.get(info.uid)
        if sp is None or sp.state != WAITING:
            return
        sp.state = PENDING
        self.kubelets.release(sp.uid)
        self._unhold(sp)
        self._sample()

    def preempt(self, victims: list[Victim], preemptor: str, preemptor_priority: int, message: str, *, preemptor_kind: str = "pod") -> None:
        """Mark victims (DisruptionTarget) and delete them after their grace period."""
        now = self.now
        pods = self.log.pods
        records: list[VictimRecord] = []
        marked: list[tuple[int, VictimRecord]] = []
        for victim in victims:
            info, node = victim.pod, victim.node
            sp = self.by_uid.get(info.uid)
            if sp is None or sp.state in (ENDED, TERMINATING):
                continue
            if sp.state == WAITING:
                # rejected at Permit rather than deleted: its reservation is released at once
                rec = VictimRecord(now, sp.key, pods.attempt[sp.row], pods.gang[sp.row], victim.priority, node, preemptor, preemptor_priority, sp.gpus, 0, None, now)
                self.log.victims.append(rec)
                records.append(rec)
                self.log.event(now, "Pod", sp.key, node, EventReason.PREEMPTED, f"Rejected at Permit: preempted by {preemptor_kind} {preemptor} on node {node}")
                continue
            info.terminating = True
            lost = 0
            if sp.state == RUNNING:
                lost = self.jobs_model.stopped(sp.gang, sp.uid, sp.gpus, sp.milli, reason=f"preempted by {preemptor}", by_preemption=True)
            sp.state = TERMINATING
            if sp.gang.record is not None:
                sp.gang.record.preemptions += 1
            rec = VictimRecord(
                t_ms=now,
                victim_pod=sp.key,
                victim_attempt=pods.attempt[sp.row],
                victim_gang=pods.gang[sp.row],
                victim_priority=victim.priority,
                node=node,
                preemptor=preemptor,
                preemptor_priority=preemptor_priority,
                gpus=sp.gpus,
                lost_gpu_ms=lost,
            )
            self.log.victims.append(rec)
            records.append(rec)
            marked.append((info.uid, rec))
            self.log.event(now, "Pod", sp.key, node, EventReason.PREEMPTED, f"Preempted by {preemptor_kind} {preemptor} on node {node}")
            grace = info.spec.termination_grace_ms
            self.engine.at(now + grace, Phase.KUBELET, self._victim_gone, sp)
        if records:
            self.in_vain.decided(preemptor, records, marked)
            self._sample()

    def _victim_gone(self, sp: SimPod) -> None:
        if sp.state == ENDED:
            return
        self.end_pod(sp, END_PREEMPTED)

    # ---- accounting ---------------------------------------------------------------------------
    def _busy_delta(self, delta: int, milli: int) -> None:
        self.gpus_busy += delta
        self.milli_busy += milli

    def _hold(self, sp: SimPod, node: str) -> None:
        """``sp`` now holds its GPUs on ``node`` (reserved or bound)."""
        n = self.nodes[node]
        sp.milli, shared = gpu_milli(sp.pod.spec.requests, n.allocatable, n.gpu_share)
        self.log.shared_gpu = self.log.shared_gpu or shared
        self.gpus_allocated += sp.gpus
        self.milli_allocated += sp.milli

    def _unhold(self, sp: SimPod) -> None:
        self.gpus_allocated -= sp.gpus
        self.milli_allocated -= sp.milli

    def _sample(self) -> None:
        """The GPU state may have changed: the timeline samples it once, when the instant ends
        (``Phase.SAMPLE``, after every other phase). The timeline keeps one row per instant, and
        a later sample at an instant replaces the earlier one (``EventLog.timeline``), so the
        row is the state after the last change either way; a pod bound or ended costs no sample."""
        now = self.engine.now
        if self._sample_at != now:
            self._sample_at = now
            self.engine.at(now, SAMPLE, self._take_sample, productive=False)

    def _take_sample(self, _payload: object = None) -> None:
        t_ms, self._sample_at = self._sample_at, -1
        self.log.timeline(
            t_ms,
            self.kubelets.gpus_total,
            self.gpus_allocated,
            self.gpus_busy,
            self.pending_pods,
            self.pending_gpu_pods,
            self.milli_allocated,
            self.milli_busy,
        )

    # ---- trace events (``sim.apiserver``) ------------------------------------------------------
    def apply(self, ev: TraceEvent) -> None:
        if self.api.apply(ev):
            self._sample()

    def next_uid(self) -> int:
        self._uid += 1
        return self._uid

    def _domain_of(self, node: str, key: str) -> str:
        n = self.nodes.get(node)
        return n.labels.get(key, "") if n is not None else ""

    def configure_group_gang(self, g: Gang, pg: PodGroup) -> None:
        g.topology_key = pg.policy.topology_keys[0] if pg.policy.topology_keys else ""
        if g.record is not None:
            g.record.topology_key = g.topology_key
        if pg.rendezvous_timeout_ms is not None:
            g.rendezvous_ms = pg.rendezvous_timeout_ms
        if g.record is not None:
            g.record.priority = pg.priority
        self.jobs_model.set_min_count(g, pg.policy.min_count if pg.policy.kind is PolicyKind.GANG else None)

    # ---- pod lifecycle ------------------------------------------------------------------------
    def gang_for_group(self, key: str, *, submitted_ms: int) -> Gang:
        pg = self.pod_groups.get(key)
        return self.jobs_model.gang(key, "PodGroup", submitted_ms=submitted_ms, priority=pg.priority if pg else 0)

    def gang_of(self, pod: Pod, uid: int) -> Gang:
        spec = pod.spec
        if spec.scheduling_group:
            key = f"{pod.namespace}/{spec.scheduling_group}"
            fresh = key not in self.jobs_model.gangs
            g = self.gang_for_group(key, submitted_ms=self.now)
            if fresh and key in self.pod_groups:
                self.configure_group_gang(g, self.pod_groups[key])
            if g.record is not None and not g.members and g.record.started_ms is None:
                g.record.submitted_ms = max(g.record.submitted_ms, self.now)
            return g
        if pod.job and not self.job_controller.is_waves(f"{pod.namespace}/{pod.job}"):
            key = f"{pod.namespace}/{pod.job}"
            fresh = key not in self.jobs_model.gangs
            g = self.jobs_model.gang(key, "Job", submitted_ms=self.now, priority=spec.priority)
            if fresh:
                g.expected_pods = self.job_controller.gang_expected_pods(key)
            return g
        g = self.jobs_model.gang(f"{pod.key}#{uid}", LONE, submitted_ms=self.now, priority=spec.priority)
        g.expected_pods = 1
        return g

    def create_pod(self, pod: Pod) -> SimPod | None:
        key = pod.key  # built once (``Pod.key`` builds it at each use)
        if key in self.pods:
            return None  # validated at load; a Job index collision would land here
        uid = self.next_uid()
        spec = pod.spec
        now = self.now
        if self.scheduler.has_profile(spec.scheduler_name) or spec.node_name:
            gang = self.gang_of(pod, uid)
        else:
            # no scheduler profile serves it: never scheduled, counted by no gang (INTERFACE rule 7)
            gang = self.jobs_model.gang(f"{key}#{uid}", LONE, submitted_ms=now, priority=spec.priority)
            gang.expected_pods = 1
        gpus = spec.gpus  # (a property: read once)
        requests = spec.requests
        if spec.duration_ms is not None:
            gang.duration_ms = max(gang.duration_ms or 0, spec.duration_ms)
        if spec.checkpoint_interval_ms is not None:
            gang.checkpoint_ms = spec.checkpoint_interval_ms
        group = self.pod_groups.get(gang.key) if gang.kind == "PodGroup" else None
        if spec.rendezvous_timeout_ms is not None and (group is None or group.rendezvous_timeout_ms is None):
            gang.rendezvous_ms = spec.rendezvous_timeout_ms
        # attempt: > 0 when recreated by its Job controller, or by name again
        row, attempt = self.log.pods.created(
            key, gang.key if gang.kind != LONE else "", pod.namespace, gpus, spec.priority, now,
            requests.get("cpu", 0), requests.get("memory", 0), requested_milli(requests, self.shares),
        )  # fmt: skip
        sp = SimPod(uid, pod, key, row, gang, job_key=f"{pod.namespace}/{pod.job}" if pod.job else "", gpus=gpus)
        self.pods[key] = sp
        self.by_uid[uid] = sp
        self.jobs_model.add_member(gang, uid, sp, pod.name, gpus, now)
        if attempt > 0:
            self.log.event(now, "Pod", key, "", EventReason.RECREATED, f"attempt {attempt}")
        self.pending_pods += 1
        if gpus:
            self.pending_gpu_pods += 1
        if spec.node_name:
            self._admit_direct(sp)
        else:
            sp.info = self.scheduler.on_pod_add(pod, uid)
        self._sample()
        return sp

    def _admit_direct(self, sp: SimPod) -> None:
        """A pod created with ``spec.nodeName`` skips the scheduler; the kubelet admits it if it fits."""
        name = sp.pod.spec.node_name
        known = name in self.nodes
        if known and self.kubelets.fits(name, sp.pod.spec.requests):
            sp.info = self.scheduler.on_pod_assigned(sp.pod, sp.uid, name)
            self.log.event(self.now, "Pod", sp.key, name, EventReason.SCHEDULED, f"Assigned {sp.key} to {name} by spec.nodeName")
            self.bind(sp.info, name)
            return
        reason = "node not found" if not known else "insufficient resources"
        self.log.event(self.now, "Pod", sp.key, name, EventReason.REJECTED, f"kubelet admission on {name}: {reason}")
        self.end_pod(sp, EndReason.REJECTED, recreate=False, logged=True)

    def end_pod(self, sp: SimPod, reason: str, *, recreate: bool = True, logged: bool = False) -> None:
        """The pod ends (``reason``); ``logged``: the caller already recorded its event."""
        if sp.state == ENDED:
            return
        now = self.now
        state = sp.state
        uid, gang = sp.uid, sp.gang  # (read once: every pod ends here)
        if state == RUNNING:
            self.jobs_model.stopped(gang, uid, sp.gpus, sp.milli, reason=f"{sp.key} {reason}")
        if state in (RUNNING, TERMINATING, WAITING):
            self._unhold(sp)
            self.kubelets.release(uid)
        if state in (PENDING, WAITING):
            self.pending_pods -= 1
            if sp.gpus:
                self.pending_gpu_pods -= 1
        sp.state = ENDED
        if sp.info is not None:
            self.scheduler.on_pod_delete(sp.info)
        log = self.log
        log.pods.end(sp.row, now, reason)
        self.pods.pop(sp.key, None)
        self.by_uid.pop(uid, None)
        self.jobs_model.removed(gang, uid)
        self.in_vain.victim_ended(uid, now)
        if state in (PENDING, WAITING):
            self.in_vain.preemptor_gone(sp.key)
        if not logged and reason != END_PREEMPTED and (gang.kind == LONE or reason not in (END_COMPLETED, END_CANCELLED)):
            log.event(now, "Pod", sp.key, log.pods.node[sp.row], reason, "")
        if sp.job_key:
            self.job_controller.pod_ended(sp.job_key, sp, sp.pod.index, reason, recreate)  # type: ignore[arg-type]
        self._sample()

    def _fail_pods(self, sps: list, reason: str) -> None:
        for sp in sps:
            self.end_pod(sp, reason)

    def _complete_gang(self, g: Gang) -> None:
        for sp in list(g.members.values()):
            if sp.job_key:
                self.job_controller.gang_completed(sp.job_key)
        for sp in list(g.members.values()):
            if sp.state == RUNNING:
                self.end_pod(sp, END_COMPLETED)
            else:
                self.end_pod(sp, END_CANCELLED, recreate=False)

    # ---- end of run -----------------------------------------------------------------------------
    def close(self) -> None:
        """Settle the gang states at the horizon."""
        for g in self.jobs_model.gangs.values():
            if g.record is None:
                continue
            if g.record.state == GangState.RUNNING and not g.progressing:
                g.record.state = GangState.STALLED
        if self._sample_at >= 0:  # (the replay stopped inside an instant: never, but its sample is due)
            self._take_sample()
        self.in_vain.finish()
        self.log.settle_all()
