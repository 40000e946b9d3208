"""The short waiting reason of every gang still pending at the end of a replay (``gangs.waiting_reason``,
the ``why`` column of the run/diff tables): read from the log alone, so a report can say why a gang
never started without replaying anything (``gangsim explain`` gives the long form).

Rule (deterministic): among the gang's pods still pending at the end (not bound, not ended), the
``waiting_reason`` of the earliest created one whose reason is a FitError (``0/N nodes are
available: ...``, the pod's own Filter result); failing that, the earliest one's reason (a group
status such as ``minCount (4) cannot be satisfied: ...``, or a PreEnqueue gate); ties by pod name.
Gangs that are running or finished have none.
"""

from __future__ import annotations

from gangsim.eventlog import NO_TIME, EventLog, GangState

FIT_ERROR_PREFIX = "0/"
PENDING_STATES = frozenset({GangState.PENDING, GangState.STALLED})


def waiting_reasons(log: EventLog) -> dict[str, str]:
    """gang -> short reason, for the gangs in state Pending or Stalled at the end."""
    pending = {g.gang for g in log.gangs if g.state in PENDING_STATES}
    best: dict[str, tuple[int, int, str, str]] = {}
    pods = log.pods
    for i, (gang, bound, ended, reason) in enumerate(zip(pods.gang, pods.bound_ms, pods.ended_ms, pods.waiting_reason)):
        if gang not in pending or bound != NO_TIME or ended != NO_TIME or not reason:
            continue
        rank = (0 if reason.startswith(FIT_ERROR_PREFIX) else 1, pods.created_ms[i], pods.pod[i], reason)
        if gang not in best or rank < best[gang]:
            best[gang] = rank
    return {gang: rank[3] for gang, rank in best.items()}


def short_reason(reason: str) -> str:
    """The terminal-table form: a FitError's histogram without its ``nodes are available`` words
    and without the PostFilter part (``0/4: 4 Insufficient nvidia.com/gpu``); other reasons up
    to their first ``, `` clause (the group status without the appended preemption verdict)."""
    if reason.startswith(FIT_ERROR_PREFIX) and " nodes are available: " in reason:
        head, _, rest = reason.partition(" nodes are available: ")
        return f"{head}: {rest.split('. ')[0].rstrip('.')}"
    return reason.split(", pod group preemption: ")[0]
