"""A trace: objects created, patched and deleted at simulated times.

Events are kept in the order they must be applied: by time, then file order on the command line,
then document order, then order inside a ``Trace`` document (INTERFACE rule 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from gangsim.api.config import SchedulerConfig
from gangsim.api.objects import Object, Source, object_ref


class Op(StrEnum):
    CREATE = "create"
    PATCH = "patch"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class TraceEvent:
    at_ms: int
    op: Op
    kind: str
    namespace: str
    name: str
    # CREATE: the new object; PATCH: the object after the patch; DELETE: None.
    obj: Object | None
    source: Source
    order: tuple[int, ...] = ()  # (file, document, item) position, the tie-break at equal times

    @property
    def ref(self) -> str:
        return object_ref(self.kind, self.namespace, self.name)


@dataclass(slots=True)
class Trace:
    name: str
    events: list[TraceEvent]
    config: SchedulerConfig = field(default_factory=SchedulerConfig)
    horizon_ms: int | None = None
    files: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # warnings every command prints on stderr (also in ``warnings``)
    # KEP-5547 under gang/permit: the Job controller infers a gang PodGroup for Indexed Jobs with
    # parallelism == completions > 1 (Trace ``jobWorkloads``, ``--job-workloads/--no-job-workloads``)
    job_workloads: bool = True

    def sort(self) -> None:
        self.events.sort(key=lambda e: (e.at_ms, e.order))

    @property
    def last_event_ms(self) -> int:
        return self.events[-1].at_ms if self.events else 0
