"""What workload controllers add to the Job controller (gangsim.load.controllers makes the
``ControlledJob``s): JobSet's ``startupPolicy: InOrder`` (a Job's pods are created once every pod
of the Jobs before it runs) and LeaderWorkerSet's ``RecreateGroupOnPodRestart`` (a failed pod
makes the controller delete and recreate its whole group). Mixed into
``sim.jobcontroller.JobController``, whose state and pod lifecycle these methods use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gangsim.eventlog import EndReason

if TYPE_CHECKING:
    from gangsim.sim.jobcontroller import JobState


class WorkloadControllers:
    """Uses JobController's ``jobs``, ``parked``, ``_start``, ``_create_slot``, ``_end_pod`` and
    ``_pod_running``."""

    jobs: dict
    parked: list

    def _all_running(self, keys: tuple[str, ...]) -> bool:
        """Every pod of each of these Jobs runs (bound), or the Job has finished its work: JobSet's
        InOrder "ready" (kubernetes-sigs/jobset ``jobset_controller.go`` inOrderStartupPolicy)."""
        for key in keys:
            js = self.jobs.get(key)
            if js is None or js.deleted:
                return False
            if js.finished:
                continue
            if len(js.pods) < js.job.parallelism or not all(self._pod_running(sp) for sp in js.pods.values()):  # type: ignore[attr-defined]
                return False
        return True

    def start_parked(self) -> None:
        """Create the pods of parked Jobs whose predecessors all run now (in the order they were created)."""
        ready = [js for js in self.parked if not js.deleted and self._all_running(js.job.start_after)]
        if not ready:
            return
        self.parked = [js for js in self.parked if js not in ready and not js.deleted]
        for js in ready:
            self._start(js)  # type: ignore[attr-defined]

    def _recreate_all(self, js: JobState) -> None:
        """A member failed: the controller deletes the Job's other pods and recreates every one
        (LeaderWorkerSet RecreateGroupOnPodRestart, kubernetes-sigs/lws ``pod_controller.go``)."""
        # pod by pod (delete, recreate): the gang always keeps a member, so it stays one gang whose
        # wait counts from its first submission (an empty gang would count from its next pod)
        for index in range(js.job.parallelism):
            if index in js.pods:
                self._end_pod(js.pods[index], EndReason.DELETED, recreate=False)  # type: ignore[attr-defined]
            self._create_slot(js, index)  # type: ignore[attr-defined]
