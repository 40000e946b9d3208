"""A PodGroup attempt that repeats the group's last one (``FastPath.repeated_attempts``).

In a congested log a stuck gang is retried every backoff (up to 10 s × √size) for hours, and most
retries happen on exactly the state the last one saw: nothing in the cluster moved since. The
scheduler's ``generation`` counts every change an attempt reads (``Scheduler.bump``: a pod added,
updated, bound, nominated, marked terminating or deleted, a node, a PodGroup or a PDB changed);
the attempt itself bumps it only when it succeeds or nominates. So when it has not moved since
the group's last attempt ended, and that attempt was decided by the doomed pass
(``fastpath.doomed``: the queued pods cannot reach minCount, known from counts), the new attempt
reads the same pods, the same group and the same nodes: ``validate`` passes again, the pass
would take the same kept plan and print the same FitErrors, and the pods still pending are the
same with the same messages. What is kept here is that attempt's result and its per-pod tuples;
the retry costs O(1) in the group's size: it replays the plan's effect on the search state
(``doomed.account``) and runs PodGroupPostFilter, the failure handling and the requeue as the
reference does (with the kept tuples).

The group-side state an attempt reads (its queued pods, their phases, nominations, termination
and specs, its members, its PodGroup) changes only through the informer and scheduler paths
that bump the generation; ``CHECK`` (tests) recomputes all of it, and the node table's contents,
on every reuse and fails if a change slipped past the generation.
"""

from __future__ import annotations

from dataclasses import dataclass

from gangsim.scheduler.fastpath.doomed import DoomedPass
from gangsim.scheduler.framework.types import GroupResult, PodGroupState, PodInfo, QueuedEntity

CHECK = False  # tests: recompute what a reused attempt read and compare (a missed bump fails)


@dataclass(slots=True, eq=False)
class Repeat:
    """The group's last attempt: decided by ``plan`` at scheduler ``generation`` (read after its
    failure was handled), for ``pods`` of ``entity``; ``pending`` and ``messages`` as its
    failure handling built them."""

    entity: QueuedEntity
    generation: int
    framework: object
    pods: list[PodInfo]
    plan: DoomedPass
    result: GroupResult
    pending: tuple[PodInfo, ...]
    messages: tuple[str, ...]
    fingerprint: tuple | None = None  # ``CHECK`` only


def reusable(st: PodGroupState, e: QueuedEntity, generation: int) -> Repeat | None:
    """The group's last attempt, if a new attempt of ``e`` at ``generation`` repeats it."""
    r = st.repeat
    if r is None or r.entity is not e or r.generation != generation:  # (``Repeat`` as stored by ``keep``)
        return None
    if CHECK:
        now = fingerprint(st, e, r.framework)
        assert now == r.fingerprint, f"{st.key}: the state changed without a generation bump"
    return r  # type: ignore[no-any-return]


def keep(st: PodGroupState, r: Repeat) -> None:
    """Keep ``r`` as the attempt the group's next one may repeat."""
    if CHECK:
        r.fingerprint = fingerprint(st, r.entity, r.framework)
    st.repeat = r


def fingerprint(st: PodGroupState, e: QueuedEntity, fw: object) -> tuple:
    """Everything a PodGroup attempt reads of the group and the cluster, by value (slow: ``CHECK``)."""
    snap = fw.snapshot  # type: ignore[attr-defined]
    nodes = snap.nodes
    n = len(nodes.names)
    pods = tuple((p.uid, p.phase, p.nominated_row, p.terminating, p.spec, p.signature, p.node_row) for p in e.pods)
    members = tuple(sorted((uid, p.phase, p.node_row, p.nominated_row, p.terminating) for uid, p in st.members.items()))
    table = (nodes.requested[:n].tobytes(), nodes.allocatable[:n].tobytes(), nodes.alive[:n].tobytes(), nodes.unschedulable[:n].tobytes(), nodes.static_generation)
    assigned = tuple(sorted((uid, p.node_row, p.terminating, p.spec) for uid, p in snap.assigned.items()))
    nominated = tuple(sorted(map(int, fw.nominator.rows())))  # type: ignore[attr-defined]
    return (pods, members, st.group, e.group, table, assigned, nominated, len(snap.affinity_pods))
