"""The job model (INTERFACE "The job model").

A gang (the pods of one PodGroup, or of one Job, or a lone pod) makes progress only while at
least ``threshold`` of its pods run: ``gang.minCount`` for a gang PodGroup, every pod otherwise.
While it makes progress its running pods' GPUs are busy; otherwise they are stranded. A partial
gang that stays partial for the rendezvous timeout (default 30 min, like torch.distributed)
fails its running pods, and their Job recreates them. When a running gang breaks (a member
preempted, failed or its node lost), work since the last checkpoint is lost and the rest wait
for a replacement within the rendezvous timeout.

A pod counts as *running* from its bind until it ends or is marked for preemption
(DisruptionTarget): a member being terminated no longer does useful work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gangsim.api.objects import DEFAULT_RENDEZVOUS_TIMEOUT_MS
from gangsim.eventlog import EventLog, EventReason, GangRecord, GangState
from gangsim.sim.engine import Engine, Phase, Timer

LONE = "Pod"


# ``emptied``: a dict that grew to a gang's size keeps its table when its entries are deleted (CPython
# never shrinks a dict), so a gang, Job or PodGroup that ran and ended would keep ~40 bytes per pod it
# once had in each of its per-pod dicts for the rest of the replay (issue 16: with the queue's tokens,
# NASA-permit's peak RSS over the full log 433 -> 341 MiB). Where such a dict becomes empty it is replaced by a fresh one: the same (empty) mapping,
# and iteration order is insertion order either way.


@dataclass(slots=True, eq=False)
class Gang:
    key: str
    kind: str  # PodGroup | Job | Pod (a lone pod: not reported in the gangs table)
    record: GangRecord | None
    min_count: int | None = None  # gang.minCount; None = every pod is needed
    expected_pods: int | None = None  # Job parallelism
    duration_ms: int | None = None
    checkpoint_ms: int | None = None
    rendezvous_ms: int = DEFAULT_RENDEZVOUS_TIMEOUT_MS
    members: dict[int, object] = field(default_factory=dict)  # uid -> SimPod (alive incarnations)
    running: dict[int, object] = field(default_factory=dict)  # uid -> SimPod running
    running_gpus: int = 0
    running_milli: int = 0  # GPU-milli of the running members (whole GPUs count 1000 each)
    progressing: bool = False
    progress_since_ms: int = 0
    work_done_ms: int = 0
    completion: Timer | None = None
    rendezvous: Timer | None = None
    finished: bool = False
    names: dict[str, int] = field(default_factory=dict)  # distinct pod name -> gpus
    gpus: int = 0  # the sum of ``names``' gpus (kept as they are added: a gang of 128 adds 128 times)
    topology_key: str = ""  # its PodGroup's schedulingConstraints.topology[0].key

    def threshold(self) -> int:
        if self.min_count is not None:
            return self.min_count
        if self.expected_pods is not None:
            return self.expected_pods
        return max(1, len(self.names))


class JobModel:
    """Tracks gangs and tells the cluster when pods must fail or complete."""

    def __init__(
        self,
        engine: Engine,
        log: EventLog,
        *,
        on_busy_delta: Callable[[int, int], None],
        fail_pods: Callable[[list, str], None],
        complete_gang: Callable[["Gang"], None],
        domain_of: Callable[[str, str], str] = lambda node, key: "",
    ) -> None:
        self.engine = engine
        self.log = log
        self.gangs: dict[str, Gang] = {}
        self._busy_delta = on_busy_delta
        self._fail_pods = fail_pods
        self._complete_gang = complete_gang
        self._domain_of = domain_of  # (node, label key) -> the node's value ("" without the label)

    # ---- membership --------------------------------------------------------------------------
    def gang(self, key: str, kind: str, *, submitted_ms: int, priority: int) -> Gang:
        g = self.gangs.get(key)
        if g is None:
            record = None
            if kind != LONE:
                record = GangRecord(gang=key, kind=kind, pods=0, min_count=0, gpus=0, priority=priority, submitted_ms=submitted_ms)
                self.log.gangs.append(record)
            g = Gang(key, kind, record)
            self.gangs[key] = g
        return g

    def add_member(self, g: Gang, uid: int, pod: object, name: str, gpus: int, now: int) -> None:
        g.members[uid] = pod
        if name not in g.names:
            g.names[name] = gpus
            g.gpus += gpus
            if g.record is not None:
                g.record.pods = len(g.names)
                g.record.gpus = g.gpus
                g.record.min_count = g.threshold()
            if g.progressing and len(g.running) < g.threshold():
                # a job that needs all its pods grew: it pauses for the newcomer, nothing is lost
                self._reevaluate(g, pause=True)

    def set_min_count(self, g: Gang, min_count: int | None) -> None:
        g.min_count = min_count
        if g.record is not None:
            g.record.min_count = g.threshold()
        self._reevaluate(g)

    # ---- pod transitions ---------------------------------------------------------------------
    def started(self, g: Gang, uid: int, pod: object, gpus: int, milli: int = 0) -> None:
        """A member was bound and its containers run (``milli``: its GPU-milli, shares included)."""
        g.running[uid] = pod
        g.running_gpus += gpus
        g.running_milli += milli
        if g.progressing:
            self._busy_delta(gpus, milli)
        self._reevaluate(g)

    def stopped(self, g: Gang, uid: int, gpus: int, milli: int = 0, *, reason: str, by_preemption: bool = False) -> int:
        """A running member stopped working (ended, failed, or marked for preemption).

        Returns the GPU·ms of work lost if this broke a progressing gang (0 otherwise).
        """
        if uid not in g.running:
            return 0
        del g.running[uid]
        if not g.running:
            g.running = {}  # (see ``emptied``)
        g.running_gpus -= gpus
        g.running_milli -= milli
        if g.progressing:
            self._busy_delta(-gpus, -milli)
        return self._reevaluate(g, reason=reason, by_preemption=by_preemption)

    def removed(self, g: Gang, uid: int) -> None:
        g.members.pop(uid, None)
        if not g.members:
            g.members = {}  # (see ``emptied``)

    # ---- progress ------------------------------------------------------------------------------
    def _reevaluate(self, g: Gang, *, reason: str = "", by_preemption: bool = False, pause: bool = False) -> int:
        if g.finished:
            return 0
        now = self.engine.now
        running = len(g.running)
        should = running >= g.threshold() and running > 0
        lost = 0
        if should and not g.progressing:
            self._start_progress(g, now)
        elif not should and g.progressing:
            lost = self._stop_progress(g, now, reason=reason, by_preemption=by_preemption, pause=pause)
        if not g.progressing and running > 0:
            if g.rendezvous is None:
                g.rendezvous = self.engine.timer(now + g.rendezvous_ms, Phase.TIMEOUT, self._rendezvous_timeout, g)
        elif g.rendezvous is not None:
            g.rendezvous.cancel()
            g.rendezvous = None
        return lost

    def _start_progress(self, g: Gang, now: int) -> None:
        g.progressing = True
        g.progress_since_ms = now
        self._busy_delta(g.running_gpus, g.running_milli)
        if g.record is not None:
            if g.record.started_ms is None:
                g.record.started_ms = now
                if g.topology_key:  # where the gang first ran, by its own topology key
                    domains = {self._domain_of(self.log.pods.node[p.row], g.topology_key) for p in g.running.values()}  # type: ignore[attr-defined]
                    g.record.domains = len(domains)
                    g.record.domain = domains.pop() if len(domains) == 1 else ""
                self.log.event(now, g.kind, g.key, "", EventReason.GANG_STARTED, f"{len(g.running)} of {g.threshold()} pods running")
            g.record.state = GangState.RUNNING
        if g.duration_ms is not None:
            remaining = max(0, g.duration_ms - g.work_done_ms)
            g.completion = self.engine.timer(now + remaining, Phase.KUBELET, self._complete, g)

    def _stop_progress(self, g: Gang, now: int, *, reason: str, by_preemption: bool, pause: bool = False) -> int:
        g.progressing = False
        self._busy_delta(-g.running_gpus, -g.running_milli)
        g.work_done_ms += now - g.progress_since_ms
        if g.completion is not None:
            g.completion.cancel()
            g.completion = None
        if pause:
            if g.record is not None:
                g.record.state = GangState.STALLED
            return 0
        kept = (g.work_done_ms // g.checkpoint_ms) * g.checkpoint_ms if g.checkpoint_ms else 0
        lost_ms = g.work_done_ms - kept
        g.work_done_ms = kept
        lost_gpu_ms = lost_ms * g.gpus
        if g.record is not None:
            g.record.state = GangState.STALLED
            g.record.broken += 1
            if by_preemption:
                g.record.broken_by_preemption += 1
            g.record.lost_gpu_ms += lost_gpu_ms
            self.log.event(now, g.kind, g.key, "", EventReason.GANG_BROKEN, f"{len(g.running)} of {g.threshold()} pods running ({reason})")
            if lost_ms:
                self.log.event(now, g.kind, g.key, "", EventReason.CHECKPOINT_LOST, f"lost {lost_ms / 1000:g}s of work ({lost_gpu_ms / 1000:g} GPU-s)")
        return lost_gpu_ms

    def _complete(self, g: Gang) -> None:
        now = self.engine.now
        g.completion = None
        g.work_done_ms += now - g.progress_since_ms
        g.progress_since_ms = now
        g.finished = True
        g.progressing = False
        self._busy_delta(-g.running_gpus, -g.running_milli)
        if g.rendezvous is not None:
            g.rendezvous.cancel()
            g.rendezvous = None
        if g.record is not None:
            g.record.finished_ms = now
            g.record.state = GangState.COMPLETED
            self.log.event(now, g.kind, g.key, "", EventReason.GANG_COMPLETED, "")
        self._complete_gang(g)

    def _rendezvous_timeout(self, g: Gang) -> None:
        g.rendezvous = None
        if g.progressing or not g.running:
            return
        now = self.engine.now
        if g.record is not None:
            g.record.restarts += 1
        self.log.event(
            now,
            g.kind if g.kind != LONE else "Pod",
            g.key,
            "",
            EventReason.RENDEZVOUS_TIMEOUT,
            f"{len(g.running)} of {g.threshold()} pods joined within {g.rendezvous_ms / 1000:g}s",
        )
        self._fail_pods(list(g.running.values()), EventReason.RENDEZVOUS_TIMEOUT)
