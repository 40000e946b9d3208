"""Score normalisation helpers (``plugins/helper/normalize_score.go``), integer arithmetic."""

from __future__ import annotations

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
