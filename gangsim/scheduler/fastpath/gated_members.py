"""A PodGroup event's walk over the group's per-pod queue entities (``Scheduler._group_event``
under ``pod`` and ``permit``, where each member pod is its own entity): an entity that is gated,
or was rejected by a plugin registered for the event, is moved on (PreEnqueue asked again).

Two shortcuts, each its own switch (``api.config.FastPath``); with both off this is the reference
walk, one move per such member:

- ``gated_siblings``: PreEnqueue reads a pod's spec and its group only, so a member sharing the
  spec of one this event left gated with the message it already has stays gated with it, and a
  gated member sharing the spec of one this event let go (PreEnqueue passed it: the group has
  its pods) passes too: neither is asked again (``let_go`` moves the latter as a pass).
- ``gated_prefix`` (needs ``gated_siblings``): a gang whose pods arrive one by one (a Job
  controller creating its pods) has an event per arriving pod, and each walked every earlier
  member only to skip it (quadratic, cheap per member). The walk remembers
  (:class:`GatedPrefix`) that its group's first ``count`` members were each the only pod of a
  gated entity, of one spec, gated with one message. While nothing could have changed that —
  no gated entity left the gated set or changed its message (``SchedulingQueue.gate_changes``),
  no pod spec was updated, no member left (the members dict is the same object and no member
  was removed), the next event asks PreEnqueue for the first member only, as the walk would;
  if it stays gated with the same message, the walk would skip the other ``count - 1`` (each
  the same spec, gated with that message), so it starts after them. Otherwise it walks on from
  the second member as before. O(1) per arriving pod instead of O(members). When the event is
  a pod joining (``joined``) whose own entity PreEnqueue just gated with the prefix's message,
  and the pod has the prefix's spec, the first member's answer is known without asking: it is
  the joining pod's (same spec, same group, nothing changed in between); when that pod is the
  only member past the prefix, as it is while a Job controller creates its pods, the walk would
  move nobody and return the prefix one longer: the prefix grows in place, no walk at all
  (``grow_prefix``, which the caller asks before ``move_members``). When the event is the
  gang's last pod arriving, asking the first member lets it go (the group has its pods), and the
  walk would let each other member of the prefix go in turn as its sibling: they are let go at
  once, in order (one ``let_go`` call, one queue call: ``SchedulingQueue.move_passed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from gangsim.scheduler.framework.types import PodInfo, QueuedEntity, QueueLocation

GATED = QueueLocation.GATED
UNSCHEDULABLE = QueueLocation.UNSCHEDULABLE
_UNASKED = object()  # ``regated`` has no answer for a spec


@dataclass(slots=True, eq=False)
class GatedPrefix:
    """After a walk: the first ``count`` members of ``members`` were each the only pod of a gated
    entity, of spec ``spec``, gated with ``message``; ``stamp`` is what held then."""

    members: dict[int, PodInfo]
    count: int
    spec: object
    message: str
    stamp: tuple


def move_members(
    members: dict[int, PodInfo],
    entity_of: dict[int, QueuedEntity],
    move: Callable[[QueuedEntity], None],
    plugins: frozenset[str],
    *,
    siblings: bool,
    prefix: GatedPrefix | None,
    stamp: Callable[[], tuple] | None,
    joined: PodInfo | None = None,
    let_go: Callable[..., None] | None = None,
) -> GatedPrefix | None:
    """Walk ``members`` in order, moving each member's entity the event can move (``move``:
    ``SchedulingQueue.move_entity``). ``siblings``: ``FastPath.gated_siblings``; ``prefix``: the
    last walk's :class:`GatedPrefix` of this group (None: none); ``stamp`` (None: the
    ``gated_prefix`` switch off): what must be unchanged for a prefix to hold; ``joined``: the
    member whose arrival this event is, its entity just now past PreEnqueue (None: another
    event); ``let_go``: the moves of gated entities PreEnqueue is known to pass, in order (None:
    ``move`` of each). Returns this walk's prefix (None: the members are not all gated alike, or the switch is off)."""
    # spec -> the message this event left a member of that spec gated with, None when it let one
    # go (``gated_siblings``)
    regated: dict[int, str | None] | None = {} if siblings else None
    if let_go is None:

        def let_go(*entities: QueuedEntity) -> None:
            for e in entities:
                move(e)

    values = members.values()
    skip_to = 0
    if prefix is not None and regated is not None and stamp is not None and prefix.members is members and prefix.stamp == stamp() and len(members) >= prefix.count:
        # (the members after the first are copied once it is known where the walk goes on: a
        # move asks PreEnqueue, which neither adds nor removes a member)
        if _gated_like(joined, entity_of, prefix) and len(members) > prefix.count:
            regated[id(prefix.spec)] = prefix.message  # what asking the first member would find
        else:
            _visit(next(iter(values)), entity_of, move, let_go, plugins, regated)
        answer = regated.get(id(prefix.spec), _UNASKED)
        start = prefix.count  # where the walk goes on
        if answer == prefix.message:
            skip_to = prefix.count  # the walk would skip each of the others
        else:
            skip_to = -1  # the prefix is not known after this walk
            if answer is None and prefix.count > 1:
                # the first member was let go (the group has its pods: the gang's last pod
                # arrived): the walk would let each of the others go in turn, each a sibling of
                # it (the only pod of a gated entity of its spec): all at once, in order
                let_go(*[entity_of[m.uid] for m in islice(values, 1, prefix.count)])
            elif answer is not None:
                start = 1  # walk on from the second member
        # (from the end: ``islice`` from the front would step over the skipped members one by
        # one, O(members) per arriving pod; a pod joins at the end, so ``rest`` is mostly 1)
        rest = len(members) - start
        walk = iter(list(islice(reversed(values), rest))[::-1] if rest > 0 else ())
    else:
        walk = iter(list(values))  # (a copy: a move must not see the dict change under it)
    alike = stamp is not None and skip_to >= 0
    spec: object = prefix.spec if skip_to > 0 else None  # type: ignore[union-attr]
    message = prefix.message if skip_to > 0 else ""  # type: ignore[union-attr]
    for member in walk:
        e = _visit(member, entity_of, move, let_go, plugins, regated)
        if alike:
            if e is None or e.where is not GATED or len(e.pods) != 1:
                alike = False
            elif spec is None:
                spec, message = member.spec, e.gated_message
            elif member.spec is not spec or e.gated_message != message:
                alike = False
    if not alike or spec is None or stamp is None:
        return None
    return GatedPrefix(members, len(members), spec, message, stamp())


def grow_prefix(prefix: GatedPrefix, members: dict[int, PodInfo], entity_of: dict[int, QueuedEntity], joined: PodInfo, stamp: Callable[[], tuple]) -> bool:
    """The common event, a pod of the prefix's kind joining at the end of ``members`` (its
    entity just gated by PreEnqueue with the prefix's message), with nothing changed since the
    prefix's walk (``stamp``): ``move_members`` would move nobody (the first member's answer is
    the joining pod's, the joining pod itself is skipped as its sibling) and return the prefix
    one member longer, with the same stamp (nothing moved). So it grows in place, with no walk
    (True); False: not that event, nothing changed (``move_members`` then)."""
    if prefix.members is not members or len(members) != prefix.count + 1 or prefix.stamp != stamp():
        return False
    if not _gated_like(joined, entity_of, prefix) or next(reversed(members.values())) is not joined:
        return False
    prefix.count += 1
    return True


def _gated_like(joined: PodInfo | None, entity_of: dict[int, QueuedEntity], prefix: GatedPrefix) -> bool:
    """``joined`` has the prefix's spec and its own entity is gated with the prefix's message."""
    if joined is None or joined.spec is not prefix.spec:
        return False
    e = entity_of.get(joined.uid)
    return e is not None and e.where is GATED and len(e.pods) == 1 and e.gated_message == prefix.message


def _visit(
    member: PodInfo,
    entity_of: dict[int, QueuedEntity],
    move: Callable[[QueuedEntity], None],
    let_go: Callable[[QueuedEntity], None],
    plugins: frozenset[str],
    regated: dict[int, str | None] | None,
) -> QueuedEntity | None:
    """One member of the walk (the reference walk's body); returns its entity."""
    e = entity_of.get(member.uid)
    if e is None:
        return None
    if e.where is GATED:
        sibling = regated is not None and len(e.pods) == 1
        if sibling and (spec := id(e.pods[0].spec)) in regated:  # type: ignore[operator]
            answer = regated[spec]  # type: ignore[index]
            if answer is None:
                let_go(e)
                return e
            if answer == e.gated_message:
                return e
        move(e)
        if sibling:  # (``spec`` was set with ``sibling``)
            regated[spec] = e.gated_message if e.where is GATED else None  # type: ignore[index]
    elif e.where is UNSCHEDULABLE and plugins & e.unschedulable_plugins:
        move(e)
    return e
