"""The Job controller (kubernetes ``pkg/controller/job``, as far as a replay needs it).

- ``parallelism`` pods ``<job>-<slot>``; a pod that fails is recreated in its slot (``attempt``
  counts up), a Job whose gang completed creates nothing more.
- ``completions`` different from ``parallelism`` (``Job.waves``): every pod is its own unit of work
  (its own ``gangsim.dev/duration``); the controller keeps ``min(parallelism, completions -
  succeeded)`` pods active, as ``manageJob`` does, so pods run in waves until ``completions``
  succeeded. Indexed: the next pod takes the lowest index neither succeeded nor active
  (``firstPendingIndexes``); NonIndexed: the next slot number. Either way names are ``<job>-<slot>``.
- ``backoffLimit`` (when written): the ``backoffLimit + 1``-th pod failure fails the Job
  (``BackoffLimitExceeded``); ``activeDeadlineSeconds``: the Job fails that long after it was
  created (``DeadlineExceeded``). A failed Job deletes its active pods and creates no more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gangsim.api.objects import ControlledJob, Job, Pod
from gangsim.eventlog import EndReason, EventLog, EventReason, GangState
from gangsim.sim.engine import Engine, Phase, Timer
from gangsim.sim.workloads import WorkloadControllers

# Job condition reasons and messages: kubernetes pkg/controller/job/job_controller.go (syncJob;
# batch.JobReasonBackoffLimitExceeded / JobReasonDeadlineExceeded)
BACKOFF_LIMIT_EXCEEDED = (EventReason.BACKOFF_LIMIT_EXCEEDED, "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = (EventReason.DEADLINE_EXCEEDED, "Job was active longer than specified deadline")
# pod ends that are not failures of the Job (a completed pod; one the user or the Job deleted)
_NOT_FAILED = frozenset({EndReason.COMPLETED, EndReason.CANCELLED, EndReason.DELETED})


@dataclass(slots=True, eq=False)
class JobState:
    job: Job
    pods: dict[int, object] = field(default_factory=dict)  # slot -> live incarnation (a SimPod)
    deleted: bool = False
    finished: bool = False  # completed or failed: nothing is recreated any more
    succeeded: set[int] = field(default_factory=set)  # waves: slots whose pod succeeded
    next_slot: int = 0  # waves, NonIndexed: the next new slot number
    failures: int = 0
    deadline: Timer | None = None


class JobController(WorkloadControllers):
    """Owns the Jobs' state; the cluster calls it on Job events, pod binds and pod ends."""

    def __init__(
        self,
        engine: Engine,
        log: EventLog,
        *,
        create_pod: Callable[[Pod], object | None],
        end_pod: Callable[..., None],
        sample: Callable[[], None],
        pod_running: Callable[[object], bool],
    ) -> None:
        self.engine = engine
        self.log = log
        self.jobs: dict[str, JobState] = {}
        # Jobs whose controller creates their pods only once other Jobs run (JobSet InOrder), in creation order
        self.parked: list[JobState] = []
        self._create_pod = create_pod
        self._end_pod = end_pod
        self._sample = sample
        self._pod_running = pod_running

    # ---- Job events -----------------------------------------------------------------------------
    def create(self, job: Job) -> None:
        js = JobState(job)
        self.jobs[job.key] = js
        if isinstance(job, ControlledJob) and job.start_after and not self._all_running(job.start_after):
            self.parked.append(js)
            return
        self._start(js)

    def _start(self, js: JobState) -> None:
        job = js.job
        if job.active_deadline_ms is not None:
            js.deadline = self.engine.timer(self.engine.now + job.active_deadline_ms, Phase.TIMEOUT, self._deadline, js)
        step = job.pod_creation_interval_ms
        for n, slot in enumerate(self._slots_to_create(js)):
            if step and n:
                self.engine.at(self.engine.now + n * step, Phase.API, self._create_later, (js, slot))
            else:
                self._create_slot(js, slot)

    def patch(self, job: Job) -> None:
        js = self.jobs.get(job.key)
        if js is None:
            return
        old = js.job.parallelism
        js.job = job
        for slot in self._slots_to_create(js):
            if job.waves or slot >= old:  # lower slots not yet created are on their way (pod-creation-interval)
                self._create_slot(js, slot)
        if not job.waves:
            for slot in sorted(js.pods, reverse=True):
                if slot >= job.parallelism:
                    self._end_pod(js.pods[slot], EndReason.DELETED, recreate=False)

    def delete(self, key: str) -> None:
        js = self.jobs.pop(key, None)
        if js is None:
            return
        js.deleted = True
        self._stop(js)

    # ---- pods -------------------------------------------------------------------------------------
    def gang_expected_pods(self, key: str) -> int | None:
        """How many pods a Job's gang needs (``parallelism``); None for an unknown Job."""
        js = self.jobs.get(key)
        return js.job.parallelism if js else None

    def is_waves(self, key: str) -> bool:
        js = self.jobs.get(key)
        return js is not None and js.job.waves

    def pod_ended(self, key: str, sp: object, slot: int, reason: str, recreate: bool) -> None:
        """A pod of Job ``key`` in ``slot`` ended: count it, replace it or start the next wave."""
        js = self.jobs.get(key)
        if js is None or js.pods.get(slot) is not sp:
            return
        del js.pods[slot]
        if not js.pods:
            js.pods = {}  # (a fresh dict: see ``gangsim.sim.jobs``, "emptied")
        if js.deleted or js.finished:
            return
        if reason == EndReason.COMPLETED:
            if js.job.waves:
                js.succeeded.add(slot)
                if len(js.succeeded) >= (js.job.completions or 0):
                    self._finish(js)
                else:
                    for new in self._slots_to_create(js):
                        self._create_slot(js, new)
            return
        if reason not in _NOT_FAILED:
            js.failures += 1
            limit = js.job.backoff_limit
            if limit is not None and js.failures > limit:
                self._fail(js, sp, BACKOFF_LIMIT_EXCEEDED)
                return
        if recreate:
            if isinstance(js.job, ControlledJob) and js.job.recreate_together:
                self._recreate_all(js)
            else:
                self._create_slot(js, slot)

    def gang_completed(self, key: str) -> None:
        """The gang of a (non-wave) Job finished its work: the Job is complete."""
        js = self.jobs.get(key)
        if js is not None and not js.job.waves:
            self._finish(js)

    # ---- internals --------------------------------------------------------------------------------
    def _slots_to_create(self, js: JobState) -> list[int]:
        """Slots of the pods to create now so that the active pods are what ``manageJob`` wants."""
        if js.deleted or js.finished:
            return []
        job = js.job
        if not job.waves:
            return [i for i in range(job.parallelism) if i not in js.pods]
        completions = job.completions or 0
        want = min(job.parallelism, completions - len(js.succeeded)) - len(js.pods)
        out: list[int] = []
        if job.indexed:
            index = 0
            while len(out) < want and index < completions:
                if index not in js.succeeded and index not in js.pods:
                    out.append(index)
                index += 1
        else:
            while len(out) < want:
                out.append(js.next_slot)
                js.next_slot += 1
        return out

    def _create_later(self, payload: tuple[JobState, int]) -> None:
        js, slot = payload
        if not js.deleted and not js.finished and slot not in js.pods and (js.job.waves or slot < js.job.parallelism):
            self._create_slot(js, slot)
            self._sample()

    def _create_slot(self, js: JobState, slot: int) -> None:
        job = js.job
        sp = self._create_pod(Pod(job.namespace, job.pod_name(slot), job.pod_spec(slot), job=job.name, index=slot, source=job.source))
        if sp is not None:
            js.pods[slot] = sp

    def _finish(self, js: JobState) -> None:
        js.finished = True
        if js.deadline is not None:
            js.deadline.cancel()
            js.deadline = None

    def _stop(self, js: JobState) -> None:
        """Delete the Job's active pods (its deletion or its failure)."""
        if js.deadline is not None:
            js.deadline.cancel()
            js.deadline = None
        for slot in sorted(js.pods):
            self._end_pod(js.pods[slot], EndReason.DELETED, recreate=False)

    def _fail(self, js: JobState, sp: object | None, why: tuple[str, str]) -> None:
        """The Job failed (``JobFailed`` condition): its active pods are deleted, nothing more is created."""
        js.finished = True
        gang = getattr(sp, "gang", None) or next((getattr(p, "gang", None) for p in js.pods.values()), None)
        self.log.event(self.engine.now, "Job", js.job.key, "", why[0], why[1])
        self._stop(js)
        if gang is not None and gang.record is not None and gang.record.state != GangState.COMPLETED:  # its Job or PodGroup gang
            gang.record.state = GangState.FAILED

    def _deadline(self, js: JobState) -> None:
        js.deadline = None
        if js.deleted or js.finished:
            return
        self._fail(js, None, DEADLINE_EXCEEDED)
        self._sample()


__all__ = ["BACKOFF_LIMIT_EXCEEDED", "DEADLINE_EXCEEDED", "JobController", "JobState"]
