"""The recorded log of a replay: the only thing reports read.

The simulator appends facts as they happen; ``gangsim.report`` turns them into Polars tables.
Nothing here points back into scheduler or simulator state.

Memory (issue 16 item 4): a busy trace records millions of events and pod incarnations, so the two
large tables are kept as columns without a Python object per row (``gangsim.columns``): integers in
``array('q')``, strings with few distinct values (kinds, reasons, nodes, namespaces, device lists,
event texts) as ``Coded`` columns, pod names as ``Strings`` (UTF-8 bytes), gang keys and waiting
reasons as references to strings the simulator holds anyway. A ``Scheduled`` event's message is
recorded as its template (:data:`ASSIGNED`), rendered from the event's own object and node when
read. Gangs and victims (one per gang or preemption) stay records.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from zlib import crc32

from gangsim.aggregation import COMBINED_PREFIX, SIMILAR_EVENTS_INTERVAL_MS, SIMILAR_EVENTS_MAX, Aggregation, FailureStreak  # noqa: F401 - the constants: read from here too
from gangsim.columns import Coded, Strings


class EventReason(StrEnum):
    # Kubernetes Event reasons for pods
    SCHEDULED = "Scheduled"
    FAILED_SCHEDULING = "FailedScheduling"
    PREEMPTED = "Preempted"
    NOMINATED = "Nominated"
    # PodGroup condition reasons (kind PodGroup)
    UNSCHEDULABLE = "Unschedulable"
    SCHEDULER_ERROR = "SchedulerError"
    DISRUPTION_TARGET = "PreemptionByScheduler"
    # gangsim's job and lifecycle reasons
    CREATED = "Created"
    DELETED = "Deleted"
    GATED = "Gated"
    WAITING_ON_PERMIT = "WaitingOnPermit"
    PERMIT_REJECTED = "PermitRejected"
    COMPLETED = "Completed"
    CANCELLED = "Cancelled"
    RENDEZVOUS_TIMEOUT = "RendezvousTimeout"
    NODE_FAILED = "NodeFailed"
    GANG_STARTED = "GangStarted"
    GANG_BROKEN = "GangBroken"
    GANG_COMPLETED = "GangCompleted"
    CHECKPOINT_LOST = "CheckpointLost"
    RECREATED = "Recreated"
    NODE_ADDED = "NodeAdded"
    NODE_UPDATED = "NodeUpdated"
    MIN_COUNT_CHANGED = "MinCountChanged"
    REJECTED = "Rejected"
    # Job condition reasons (kind Job): pkg/controller/job/job_controller.go, syncJob
    BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
    DEADLINE_EXCEEDED = "DeadlineExceeded"


_SCHEDULED = EventReason.SCHEDULED  # (read per event: a module name, not ~100 ns through the enum class)


class EndReason(StrEnum):
    """``pods.end_reason``."""

    COMPLETED = "Completed"
    PREEMPTED = "Preempted"
    RENDEZVOUS_TIMEOUT = "RendezvousTimeout"
    NODE_FAILED = "NodeFailed"
    DELETED = "Deleted"
    CANCELLED = "Cancelled"  # the rest of its gang finished the work
    REJECTED = "Rejected"  # kubelet admission: a pod with spec.nodeName that does not fit


class GangState(StrEnum):
    PENDING = "Pending"  # never made progress
    RUNNING = "Running"  # making progress at the horizon
    STALLED = "Stalled"  # has made progress before, not now
    COMPLETED = "Completed"
    DELETED = "Deleted"
    FAILED = "Failed"  # its Job failed (backoffLimit, activeDeadlineSeconds)


# reasons whose word-for-word repeats for the same object are recorded once
_AGGREGATED = frozenset({EventReason.FAILED_SCHEDULING, EventReason.GATED, EventReason.UNSCHEDULABLE, EventReason.SCHEDULER_ERROR})

# ``PodLog._latest``'s slots: a pod name's CRC-32 (its low 31 bits) above its row (below 2**32)
_TAG_SHIFT = 32
_HASH_MASK = (1 << 31) - 1
_ROW_MASK = (1 << _TAG_SHIFT) - 1
NO_TIME = -(1 << 63)  # an int64 time column's "never" (``None`` in a PodRecord, null in a table)


# Event message templates: a part that is a field name (``OBJECT``, ``NODE``) is that event's
# value; the others are literal text. Template 0 is the recorded text itself.
OBJECT, NODE = "object", "node"
# the Scheduled event of a bound pod: "Successfully assigned %v/%v to %v" (namespace, name, node;
# kubernetes pkg/scheduler/schedule_one.go, bindingCycle)
ASSIGNED = 1
MESSAGE_TEMPLATES: dict[int, tuple[str, ...]] = {ASSIGNED: ("Successfully assigned ", OBJECT, " to ", NODE)}


def render_message(template: int, text: str, obj: str, node: str) -> str:
    """The message of an event recorded with ``template`` (0: ``text`` as recorded)."""
    if not template:
        return text
    fields = {OBJECT: obj, NODE: node}
    return "".join(fields.get(part, part) for part in MESSAGE_TEMPLATES[template])


@dataclass(slots=True)
class PodRecord:
    """One row of the pods table: what :meth:`PodLog.add` takes and what reading a row gives (a
    copy: changing it changes nothing in the log)."""

    pod: str
    attempt: int
    gang: str
    namespace: str
    gpus: int
    priority: int
    created_ms: int
    milli_cpu: int = 0  # requests (containers summed as the loader does), for checks from reports
    memory_bytes: int = 0
    bound_ms: int | None = None
    node: str = ""
    ended_ms: int | None = None
    end_reason: str = ""
    scheduling_attempts: int = 0
    waiting_reason: str = ""  # last failure / gate message while pending
    devices: str = ""  # GPU ids it got on its node, "0,1" (``api.devices``)
    gpu_milli: int = 0  # GPU-milli it held there (1000 per whole GPU; a shared GPU its share)
    gpu_milli_requested: int = 0  # the same asked for (a share at the first declaring node's size)


def _time(ms: int | None) -> int:
    return NO_TIME if ms is None else ms


def _optional(ms: int) -> int | None:
    return None if ms == NO_TIME else ms


def _plain(value: str) -> str:
    """A reason as the plain string it stands for (a StrEnum member's value)."""
    return value.value if isinstance(value, Enum) else value


EMPTY = ("",)  # the known values of the columns a new row leaves empty


class PodLog:
    """The pods table as columns, one row per pod incarnation in creation order (see the module
    docstring). ``add`` appends a row and returns its index; the simulator then writes the columns
    at that index (``bind``, ``end``, ``scheduling_attempts[row] += 1`` …). Reading a row
    (``log.pods[i]``, iteration) gives a :class:`PodRecord` copy; times never set are
    :data:`NO_TIME` in the columns and ``None`` in the record."""

    __slots__ = (
        "attempt", "bound_ms", "created_ms", "devices", "end_reason", "ended_ms", "gang", "gpu_milli",
        "gpu_milli_requested", "gpus", "memory_bytes", "milli_cpu", "namespace", "node", "pod",
        "priority", "scheduling_attempts", "waiting_reason", "_latest",
    )  # fmt: skip

    def __init__(self) -> None:
        self.pod = Strings()
        self.attempt = array("q")
        self.gang: list[str] = []
        self.namespace = Coded()
        self.gpus = array("q")
        self.priority = array("q")
        self.created_ms = array("q")
        self.milli_cpu = array("q")
        self.memory_bytes = array("q")
        self.bound_ms = array("q")
        self.node = Coded(EMPTY)  # ("": code 0, appended as such by ``_append``)
        self.ended_ms = array("q")
        self.end_reason = Coded(EMPTY)  # ("": code 0, appended as such by ``_append``)
        self.scheduling_attempts = array("q")
        self.waiting_reason: list[str] = []
        self.devices = Coded(EMPTY)  # ("": code 0, appended as such by ``_append``)
        self.gpu_milli = array("q")
        self.gpu_milli_requested = array("q")
        # the latest row of each pod name (``next_attempt``): an open-addressing hash table of
        # row numbers, -1 empty, at most half full (no Python object per name); each slot holds
        # the name's hash beside its row (``_TAG_SHIFT``), so a probe reads a row's name only
        # when the hashes agree
        self._latest = array("q", [-1]) * 64

    def add(self, r: PodRecord) -> int:
        """Append ``r`` as a row (its ``attempt`` as given); returns the row's index."""
        row = self._append(r.pod, r.attempt, r.gang, r.namespace, r.gpus, r.priority, r.created_ms, r.milli_cpu, r.memory_bytes, r.gpu_milli_requested)
        self.bound_ms[row] = _time(r.bound_ms)
        self.node[row] = r.node
        self.ended_ms[row] = _time(r.ended_ms)
        self.end_reason[row] = _plain(r.end_reason)
        self.scheduling_attempts[row] = r.scheduling_attempts
        self.waiting_reason[row] = r.waiting_reason
        self.devices[row] = r.devices
        self.gpu_milli[row] = r.gpu_milli
        return row

    def created(self, pod: str, gang: str, namespace: str, gpus: int, priority: int, created_ms: int, milli_cpu: int, memory_bytes: int, gpu_milli_requested: int) -> tuple[int, int]:
        """A new incarnation of ``pod``, created at ``created_ms`` and not yet bound or ended: its
        row and its ``attempt`` (``next_attempt``). The simulator's one way to add a row: the name
        is looked up once for both (``add`` takes the attempt as given)."""
        name = pod.encode()
        h = crc32(name)
        slot = self._slot(name, h)  # (looked up once, for both)
        attempt = self._attempt_at(slot)
        return self._append(pod, attempt, gang, namespace, gpus, priority, created_ms, milli_cpu, memory_bytes, gpu_milli_requested, name, h, slot), attempt

    def _append(
        self, pod: str, attempt: int, gang: str, namespace: str, gpus: int, priority: int, created_ms: int, milli_cpu: int, memory_bytes: int,
        gpu_milli_requested: int, name: bytes | None = None, h: int = 0, slot: int = -1,
    ) -> int:
        """A row with these values, unbound and not ended (``name``/``h``: ``pod`` encoded and its
        CRC-32, when the caller has them; ``slot``: ``_slot``'s for them, when it has it)."""
        row = len(self.pod)
        if name is None:
            name = pod.encode()
            h = crc32(name)
        self.pod.append_encoded(name)
        self._note_latest(name, h, row, slot)
        self.attempt.append(attempt)
        self.gang.append(gang)
        self.namespace.append(namespace)
        self.gpus.append(gpus)
        self.priority.append(priority)
        self.created_ms.append(created_ms)
        self.milli_cpu.append(milli_cpu)
        self.memory_bytes.append(memory_bytes)
        self.bound_ms.append(NO_TIME)
        self.node.codes.append(0)  # "" (EMPTY)
        self.ended_ms.append(NO_TIME)
        self.end_reason.codes.append(0)
        self.scheduling_attempts.append(0)
        self.waiting_reason.append("")
        self.devices.codes.append(0)
        self.gpu_milli.append(0)
        self.gpu_milli_requested.append(gpu_milli_requested)
        return row

    def _slot(self, name: bytes, h: int) -> int:
        """The slot of ``_latest`` holding the row named ``name`` (hash ``h``: its CRC-32, the same in
        every process, so a pickled log's index stays valid), else the empty one where it goes
        (linear probing)."""
        latest = self._latest
        mask = len(latest) - 1
        i = h & mask
        tag = (h & _HASH_MASK) << _TAG_SHIFT
        pods = self.pod
        while (v := latest[i]) >= 0 and ((v ^ tag) >> _TAG_SHIFT or pods.raw(v & _ROW_MASK) != name):
            i = (i + 1) & mask
        return i

    def _note_latest(self, name: bytes, h: int, row: int, slot: int = -1) -> None:
        """Row ``row`` is now the latest of the pod named ``name`` (UTF-8; ``h`` its CRC-32;
        ``slot``: its ``_slot`` before the row was added, if known)."""
        if 2 * (row + 1) > len(self._latest):
            held = [v for v in self._latest if v >= 0]
            latest = self._latest = array("q", [-1]) * (4 * len(self._latest))
            mask = len(latest) - 1
            for v in held:  # (each at its hash's slot or after: the table's mask is below the tag's)
                i = (v >> _TAG_SHIFT) & mask
                while latest[i] >= 0:
                    i = (i + 1) & mask
                latest[i] = v
            slot = -1  # (the table grew: slots moved)
        self._latest[self._slot(name, h) if slot < 0 else slot] = (h & _HASH_MASK) << _TAG_SHIFT | row

    def next_attempt(self, pod: str) -> int:
        """The ``attempt`` of a new incarnation of ``pod``: one more than the latest row of that
        name's (0 for the first)."""
        name = pod.encode()
        return self._attempt_at(self._slot(name, crc32(name)))

    def _attempt_at(self, slot: int) -> int:
        """The ``attempt`` after the row in ``_latest``'s ``slot`` (0: none)."""
        held = self._latest[slot]
        return 0 if held < 0 else self.attempt[held & _ROW_MASK] + 1

    def bind(self, row: int, t_ms: int, node: str, devices: str, gpu_milli: int) -> None:
        self.bound_ms[row] = t_ms
        self.node[row] = node
        self.devices[row] = devices
        self.waiting_reason[row] = ""
        self.gpu_milli[row] = gpu_milli

    def end(self, row: int, t_ms: int, reason: str) -> None:
        self.ended_ms[row] = t_ms
        self.end_reason[row] = _plain(reason)

    def __len__(self) -> int:
        return len(self.pod)

    def __getitem__(self, row: int) -> PodRecord:
        row = range(len(self.pod))[row]
        return PodRecord(
            pod=self.pod[row],
            attempt=self.attempt[row],
            gang=self.gang[row],
            namespace=self.namespace[row],
            gpus=self.gpus[row],
            priority=self.priority[row],
            created_ms=self.created_ms[row],
            milli_cpu=self.milli_cpu[row],
            memory_bytes=self.memory_bytes[row],
            bound_ms=_optional(self.bound_ms[row]),
            node=self.node[row],
            ended_ms=_optional(self.ended_ms[row]),
            end_reason=self.end_reason[row],
            scheduling_attempts=self.scheduling_attempts[row],
            waiting_reason=self.waiting_reason[row],
            devices=self.devices[row],
            gpu_milli=self.gpu_milli[row],
            gpu_milli_requested=self.gpu_milli_requested[row],
        )

    def __iter__(self) -> Iterator[PodRecord]:
        return (self[row] for row in range(len(self.pod)))

    def __iadd__(self, records: Iterable[PodRecord]) -> "PodLog":
        for r in records:
            self.add(r)
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (PodLog, list, tuple)) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PodLog({list(self)!r})"


@dataclass(slots=True)
class GangRecord:
    gang: str
    kind: str  # PodGroup | Job
    pods: int
    min_count: int
    gpus: int
    priority: int
    submitted_ms: int
    started_ms: int | None = None
    finished_ms: int | None = None
    restarts: int = 0
    preemptions: int = 0
    state: str = GangState.PENDING
    schedule_attempts: int = 0
    broken: int = 0
    broken_by_preemption: int = 0
    lost_gpu_ms: int = 0
    topology_key: str = ""  # the PodGroup's schedulingConstraints.topology[0].key
    domain: str = ""  # the one domain of that key its pods first ran in ("" if several or none)
    domains: int | None = None  # how many domains its pods first ran in (None: no key or never ran)


@dataclass(slots=True)
class VictimRecord:
    t_ms: int
    victim_pod: str
    victim_attempt: int
    victim_gang: str
    victim_priority: int
    node: str
    preemptor: str
    preemptor_priority: int
    gpus: int
    lost_gpu_ms: int = 0
    in_vain: bool | None = None  # None until decided; undecided at the horizon counts as in vain
    ended_ms: int | None = None


@dataclass(slots=True)
class RunInfo:
    trace: str = ""
    policy: str = ""
    seed: int | None = None
    horizon_ms: int = 0
    stopped_by: str = ""  # "idle" | "horizon" | "safety-horizon"


# events buffered before they are appended to the columns (``EventLog._flush_events``): large
# enough that a column's append runs in C over many rows, small enough to cost no memory
EVENT_CHUNK = 4096
_EVENT_FIELDS = 7  # time, kind, object, node, reason, text, template


class _EventColumn:
    """An events column as it is read (``EventLog.ev_t_ms`` …): the buffered events are appended
    first, so a reader sees every event recorded so far."""

    __slots__ = ("stored",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.stored = "_" + name

    def __get__(self, log: EventLog | None, owner: type | None = None):  # noqa: ANN204
        if log is None:
            return self
        if log._buffered:
            log._flush_events()
        return getattr(log, self.stored)


@dataclass(slots=True)
class EventLog(Aggregation):
    info: RunInfo = field(default_factory=RunInfo)
    # events table, columnar, read as ``ev_t_ms`` … ``ev_template`` (``_EventColumn``); a message
    # is ``render_message(ev_template[i], ev_text[i], …)`` (``ev_message`` renders them all)
    _ev_t_ms: array = field(default_factory=lambda: array("q"))
    _ev_kind: Coded = field(default_factory=Coded)
    _ev_object: Strings = field(default_factory=Strings)
    _ev_node: Coded = field(default_factory=Coded)
    _ev_reason: Coded = field(default_factory=lambda: Coded(EventReason))
    _ev_text: Coded = field(default_factory=Coded)
    _ev_template: array = field(default_factory=lambda: array("B"))
    # events recorded since the columns were last appended to, their fields one after the other
    # (``_EVENT_FIELDS`` per event: a column is a slice with a step, ``_flush_events``)
    _buffered: list = field(default_factory=list, repr=False)
    # timeline, columnar; one row per instant at which the GPU state changed
    tl_t_ms: array = field(default_factory=lambda: array("q"))
    tl_gpus_total: array = field(default_factory=lambda: array("q"))
    tl_gpus_allocated: array = field(default_factory=lambda: array("q"))
    tl_gpus_busy: array = field(default_factory=lambda: array("q"))
    tl_pending_pods: array = field(default_factory=lambda: array("q"))
    tl_pending_gpu_pods: array = field(default_factory=lambda: array("q"))
    # GPU-milli held / held by progressing gangs (1000 per whole GPU, shared GPUs by their share)
    tl_milli_allocated: array = field(default_factory=lambda: array("q"))
    tl_milli_busy: array = field(default_factory=lambda: array("q"))
    shared_gpu: bool = False  # some pod held a share of a GPU: reports add GPU-milli columns
    pods: PodLog = field(default_factory=PodLog)
    gangs: list[GangRecord] = field(default_factory=list)
    victims: list[VictimRecord] = field(default_factory=list)
    # scheduler metrics (deterministic counts only; wall-clock timings live in ``timings``)
    counters: dict[str, int] = field(default_factory=dict)
    podgroup_attempts: dict[str, int] = field(default_factory=dict)  # result -> count
    # seconds of wall time, not in reports by default; doubles in an array, not a float object per
    # sample (a congested log times millions of PodGroup attempts)
    timings: dict[str, array] = field(default_factory=dict)
    _last_failure: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # (kind, object, reason) -> [time of the last such event, its distinct messages so far, or
    # None once they were combined]: kept small, one per pending pod
    _similar: dict[tuple[str, str, str], list] = field(default_factory=dict)
    _values: tuple = ()  # the timeline's value columns, in ``timeline``'s argument order
    _streak_of: dict[tuple[str, str], FailureStreak] = field(default_factory=dict)  # (kind, object) -> its live streak

    ev_t_ms = _EventColumn()
    ev_kind = _EventColumn()
    ev_object = _EventColumn()
    ev_node = _EventColumn()
    ev_reason = _EventColumn()
    ev_text = _EventColumn()
    ev_template = _EventColumn()

    def __post_init__(self) -> None:
        self._values = (
            self.tl_gpus_total,
            self.tl_gpus_allocated,
            self.tl_gpus_busy,
            self.tl_pending_pods,
            self.tl_pending_gpu_pods,
            self.tl_milli_allocated,
            self.tl_milli_busy,
        )

    def over_window(self, window_ms: int) -> "EventLog":
        """This log read over ``[0, window_ms)`` when that is longer than its own horizon.

        Exact only for a replay that stopped because nothing could change any more
        (``stopped_by == "idle"``): its last state then holds until ``window_ms``, which is what a
        replay run with ``--horizon window_ms`` would report. A shallow copy; ``self`` is unchanged.
        """
        if window_ms <= self.info.horizon_ms:
            return self
        if self.info.stopped_by != "idle":
            raise ValueError(f"a replay stopped by {self.info.stopped_by or 'nothing'} cannot be read past its horizon")
        self._flush_events()
        return replace(self, info=replace(self.info, horizon_ms=window_ms))

    def event(self, t_ms: int, kind: str, obj: str, node: str, reason: str, message: str = "", *, template: int = 0) -> None:
        """Record an event; ``template``: its message is that of :data:`MESSAGE_TEMPLATES`
        (``message`` is then ""), rendered when the log is read."""
        aggregated = reason in _AGGREGATED  # (each test once: a replay records ~2 events per pod)
        scheduled = not aggregated and reason == _SCHEDULED
        if self._streak_of and (aggregated or scheduled):
            streak = self._streak_of.get((kind, obj))
            if streak is not None:
                if streak.peelable and streak.objs[streak.start] == obj:
                    self._peel(streak)
                else:
                    self.settle(streak)
        if aggregated:
            # like the Kubernetes event recorder, a failure repeated word for word is one event
            # (attempts are still counted in pods.scheduling_attempts)
            key = (kind, obj)
            repeated = self._last_failure.get(key) == (reason, message)
            self._last_failure[key] = (reason, message)
            recorded = self._combine_similar(t_ms, kind, obj, reason, message)
            if repeated or not recorded:
                self.count("events_aggregated")
                return
            message = recorded
        elif scheduled:
            self._last_failure.pop((kind, obj), None)
            similar = self._similar
            if similar:
                for similar_reason in _AGGREGATED:
                    similar.pop((kind, obj, similar_reason), None)
        buffered = self._buffered
        buffered.extend((t_ms, kind, obj, node, reason, message, template))
        if len(buffered) >= _EVENT_FIELDS * EVENT_CHUNK:
            self._flush_events()

    def _flush_events(self) -> None:
        """Append the buffered events to the columns, a column at a time (a column's share of the
        buffer is a slice with a step, appended in C: one ``append`` per column and event, with
        ``event`` itself, was 6.6 % of a replay under ``gang``)."""
        buffered = self._buffered
        if not buffered:
            return
        columns = (self._ev_t_ms, self._ev_kind, self._ev_object, self._ev_node, self._ev_reason, self._ev_text, self._ev_template)
        for field_index, column in enumerate(columns):  # (in ``event``'s order of the fields)
            column.extend(buffered[field_index::_EVENT_FIELDS])
        buffered.clear()  # (in place: a shallow copy, ``over_window``'s, shares the list and the columns)

    def assigned(self, t_ms: int, obj: str, node: str) -> None:
        """Pod ``obj`` was bound to ``node``: its Scheduled event, message :data:`ASSIGNED`."""
        self.event(t_ms, "Pod", obj, node, _SCHEDULED, template=ASSIGNED)

    @property
    def ev_message(self) -> list[str]:
        """Every event's message, rendered (a new list: for reading a log, not for recording)."""
        return [render_message(*row) for row in zip(self.ev_template, self.ev_text, self.ev_object, self.ev_node)]

    def timeline(self, t_ms: int, total: int, allocated: int, busy: int, pending: int, pending_gpu: int, milli_allocated: int = 0, milli_busy: int = 0) -> None:
        """Record the GPU state from ``t_ms`` on; a later sample at the same instant replaces it."""
        values = (total, allocated, busy, pending, pending_gpu, milli_allocated, milli_busy)
        cols = self._values
        if self.tl_t_ms and self.tl_t_ms[-1] == t_ms:
            for col, v in zip(cols, values):
                col[-1] = v
            if len(self.tl_t_ms) >= 2 and all(col[-1] == col[-2] for col in cols):
                for col in (self.tl_t_ms, *cols):
                    col.pop()
            return
        if self.tl_t_ms and all(col[-1] == v for col, v in zip(cols, values)):
            return
        self.tl_t_ms.append(t_ms)
        for col, v in zip(cols, values):
            col.append(v)

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n
