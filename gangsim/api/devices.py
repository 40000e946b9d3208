"""GPUs as devices: which physical GPU of a node a request takes.

A node's ``nvidia.com/gpu`` allocatable is that many devices with ids ``0 … n-1``. A node may
declare one extended resource as a *share* of its GPUs (annotation ``gangsim.dev/gpu-share:
<resource>``, e.g. openb's ``alibaba.com/gpu-milli``): its allocatable is split evenly, ``per =
allocatable / GPUs`` units per device. Each device then has a free share ``0 … per``:

* a whole-GPU request (``nvidia.com/gpu: k``) takes ``k`` devices whose share is entirely free,
  lowest ids first, and empties them;
* a shared request (the share resource without ``nvidia.com/gpu``) must fit inside ONE device's
  free share, as openb's GPU-sharing scheduler and the FGD simulator require; it takes the
  device with the least free share that still holds it (best fit inside the node), lowest id
  on ties.

Without a declared share every device has ``per = 1``: a whole-GPU request takes the lowest free
ids, which admits exactly what the node-level ``nvidia.com/gpu`` counter admits (so whole-GPU-only
traces place every pod where they did before devices existed).

These functions are the one definition of device fit; the scheduler's node table (vectorised
over rows) and the kubelets (one node at a time) both follow them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

GPU = "nvidia.com/gpu"
GPU_SHARE_ANNOTATION = "gangsim.dev/gpu-share"


def share_per_device(allocatable: Mapping[str, int], share: str) -> int:
    """Units of ``share`` per GPU of a node (1 when the node declares no share or has no GPU)."""
    gpus = allocatable.get(GPU, 0)
    if not share or gpus <= 0:
        return 1
    return max(1, allocatable.get(share, 0) // gpus)


def request_of(requests: Mapping[str, int], share: str) -> tuple[int, int]:
    """(whole GPUs, shared units) a pod asks of a node whose share resource is ``share``: a pod
    with ``nvidia.com/gpu`` takes whole devices (its share request, if any, is what they hold)."""
    whole = requests.get(GPU, 0)
    if whole:
        return whole, 0
    return 0, requests.get(share, 0) if share else 0


def gpu_milli(requests: Mapping[str, int], allocatable: Mapping[str, int], share: str) -> tuple[int, bool]:
    """(GPU-milli, shared?) a pod holds on a node: 1000 per whole GPU; a shared request is its
    fraction of one GPU (``units × 1000 / per``, rounded down). The reports' GPU-equivalents."""
    whole, shared = request_of(requests, share)
    if whole:
        return 1000 * whole, False
    if shared:
        return shared * 1000 // share_per_device(allocatable, share), True
    return 0, False


def requested_milli(requests: Mapping[str, int], shares: Mapping[str, int]) -> int:
    """GPU-milli a pod asks for before it has a node: whole GPUs, else its first share resource
    of ``shares`` (share resource -> units per GPU, as the nodes declaring it have them)."""
    whole = requests.get(GPU, 0)
    if whole:
        return 1000 * whole
    for share, per in shares.items():
        if requests.get(share, 0):
            return requests[share] * 1000 // per
    return 0


def pick(free: Sequence[int], per: int, whole: int, shared: int) -> tuple[int, ...] | None:
    """Device ids for a request on one node (``free``: each device's free share), or None if it
    does not fit. Whole: the lowest ids among entirely free devices. Shared: best fit, lowest id
    on ties."""
    if whole:
        ids = [i for i, f in enumerate(free) if f == per]
        return tuple(ids[:whole]) if len(ids) >= whole else None
    if shared:
        best = -1
        for i, f in enumerate(free):
            if f >= shared and (best < 0 or f < free[best]):
                best = i
        return (best,) if best >= 0 else None
    return ()


def take(free: list[int], ids: Sequence[int], per: int, whole: int, shared: int) -> None:
    """Mark ``ids`` used by the request (``free`` changes in place)."""
    for i in ids:
        free[i] = free[i] - shared if not whole else free[i] - per


def give(free: list[int], ids: Sequence[int], per: int, whole: int, shared: int) -> None:
    """Undo ``take``."""
    for i in ids:
        free[i] = free[i] + shared if not whole else free[i] + per


def assignable(shares: Sequence[int], gpus: int, per: int) -> bool:
    """Whether shared requests ``shares`` can be packed onto ``gpus`` devices of ``per`` units
    each (exact bin packing, for checking final placements; small inputs only)."""
    if gpus <= 0:
        return not shares
    items = sorted(shares, reverse=True)
    if any(s > per for s in items) or sum(items) > gpus * per:
        return False
    bins = [per] * gpus

    def place(i: int) -> bool:
        if i == len(items):
            return True
        tried: set[int] = set()
        for b in range(gpus):
            if bins[b] >= items[i] and bins[b] not in tried:
                tried.add(bins[b])
                bins[b] -= items[i]
                if place(i + 1):
                    return True
                bins[b] += items[i]
        return False

    return place(0)


def format_ids(ids: Sequence[int]) -> str:
    """How the pods table shows a pod's devices: ``0,1`` (empty: none)."""
    return ",".join(map(str, ids))
