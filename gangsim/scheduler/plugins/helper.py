"""Plugin helpers: score normalisation (``plugins/helper/normalize_score.go``, integer
arithmetic) and a Filter over node labels shared by the plugins whose verdict depends only on
them and their PreFilter state (InterPodAffinity, PodTopologySpread)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

MAX_NODE_SCORE = 100


def default_normalize_score(scores: np.ndarray, *, reverse: bool) -> np.ndarray:
    """``DefaultNormalizeScore(MaxNodeScore, reverse, scores)``."""
    if len(scores) == 0:
        return scores
    max_count = int(scores.max())
    if max_count <= 0:
        # upstream only reacts to max == 0 (scores are counts/weights, never negative)
        return np.full(len(scores), MAX_NODE_SCORE if reverse else 0, dtype=np.int64) if reverse else scores.copy()
    out = MAX_NODE_SCORE * scores // max_count
    if reverse:
        out = MAX_NODE_SCORE - out
    return out.astype(np.int64)


def filter_by_labels(rows: np.ndarray, nodes: Sequence, check: Callable[[dict[str, str]], tuple[int, str] | None]) -> np.ndarray:
    """Filter codes for ``rows`` (indexes into ``nodes``, objects with ``labels``): each node's code
    from ``check(labels)`` (``(code, reason)`` or None for success, code 0)."""
    codes = np.zeros(len(rows), dtype=np.int8)
    for i, row in enumerate(rows.tolist()):
        hit = check(nodes[row].labels)
        if hit is not None:
            codes[i] = hit[0]
    return codes
