"""The windowed search: ``findNodesThatPassFilters`` stops at the (to_find+1)-th feasible row.
With a pod's signature entry the number of failing live rows is known, so that row lies within
the first ``to_find + 1 + n_failed`` rows of the rotation: only those need looking at."""

from __future__ import annotations

from gangsim.scheduler.fastpath.signatures import SignatureEntry


def window(entry: SignatureEntry, to_find: int, num_nodes: int) -> int:
    """How many rows of the rotation the search has to look at."""
    return min(num_nodes, to_find + 1 + entry.n_failed)
