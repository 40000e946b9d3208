"""Plugin helpers: score normalisation (``plugins/helper/normalize_score.go``, integer
arithmetic) and a Filter over node labels shared by the plugins whose verdict depends only on
them and their PreFilter state (InterPodAffinity, PodTopologySpread)."""

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


class LabelFilter:
    """Filter and its reasons for a plugin whose verdict on a node depends only on the node's
    labels and the pod's PreFilter state (InterPodAffinity, PodTopologySpread): the plugin gives
    ``snapshot``, ``_state(state, pod)`` (None: nothing to check) and ``_check(s, pod, labels)``
    (``(code, reason)`` or None for success)."""

    def filter(self, state, pod, rows: np.ndarray) -> np.ndarray:
        s = self._state(state, pod)  # type: ignore[attr-defined]
        codes = np.zeros(len(rows), dtype=np.int8)
        if s is None:
            return codes
        nodes = self.snapshot.nodes.nodes  # type: ignore[attr-defined]
        for i, row in enumerate(rows.tolist()):
            hit = self._check(s, pod, nodes[row].labels)  # type: ignore[attr-defined]
            if hit is not None:
                codes[i] = hit[0]
        return codes

    def filter_row(self, state, pod, row: int) -> int:
        s = self._state(state, pod)  # type: ignore[attr-defined]
        if s is None:
            return 0
        hit = self._check(s, pod, self.snapshot.nodes.nodes[row].labels)  # type: ignore[attr-defined]
        return 0 if hit is None else int(hit[0])

    def reasons(self, state, pod, row: int) -> tuple[str, ...]:
        s = self._state(state, pod)  # type: ignore[attr-defined]
        if s is None:
            return ()
        hit = self._check(s, pod, self.snapshot.nodes.nodes[row].labels)  # type: ignore[attr-defined]
        return (hit[1],) if hit else ()
