"""A failed pod attempt repeated on an unchanged cluster (``FastPath.repeated_failure``).

Under ``pod`` a rigid job's pods wait one by one: each release moves every pod NodeResourcesFit
rejected back to the queue (its queueing hint says Queue for any deleted assigned pod, as
upstream's ``isSchedulableAfterPodEvent``), and the pods of one job are tried one after the other
against the same cluster. Their Filter pass is the same pass: the signature cache already says
that a pod's Filter codes depend only on its signature and the rows, so a pod whose signature
failed on this exact cluster state (same scheduler generation, same node-table generation, no
nominated pods, no pod affinity anywhere) fails again with the same diagnosis. This keeps that
diagnosis and replays the pass's visible effects: the rows it evaluated (``processedNodes``,
which the search offset and ``filter_rows_evaluated`` count) and the signature cache hit. The
FitError message rendered from the diagnosis is kept beside it.

Everything after Filter (PostFilter, the event, the queue) still runs for every pod, so what a
report shows is the reference path's (A/B: ``tests/scheduler/test_fast_path.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gangsim.scheduler.fastpath.signatures import SignatureCache
from gangsim.scheduler.framework.cycle_state import CycleState
from gangsim.scheduler.framework.handle import Nominator, SnapshotView
from gangsim.scheduler.framework.interface import PostFilterPlugin, PostFilterResult, RepeatablePostFilterPlugin
from gangsim.scheduler.framework.types import NO_NODE, Diagnosis, PodInfo, fit_error_message

MAX_ENTRIES = 256


class Runner(Protocol):
    """What the memo reads and counts on (``framework.runtime.Framework``)."""

    snapshot: SnapshotView
    nominator: Nominator
    signatures: SignatureCache | None
    placement: object
    recorder: object
    filter_rows_evaluated: int
    post_filter_plugins: list[PostFilterPlugin]


class RepeatedFailures:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self._epoch: tuple = ()
        self._failed: dict[tuple, tuple[Diagnosis, int]] = {}  # key -> (diagnosis, rows evaluated)
        self._message: tuple | None = None  # (diagnosis, num_nodes, post_filter_msg, message)
        self._post_filter: tuple | None = None  # (diagnosis, memo key, epoch, its repeater or None)
        self._replayed: tuple | None = None  # (diagnosis, memo key) of the last ``replay`` that found one
        self.replays = 0  # attempts decided here (not reported; the A/B tests read it)
        self.post_filters_repeated = 0  # PostFilter calls answered by a kept repeater (``repeated_post_filter``; same)
        # every PostFilter plugin says what its calls would do (checked once: isinstance against a Protocol is slow)
        self._repeatable = all(isinstance(p, RepeatablePostFilterPlugin) for p in runner.post_filter_plugins)

    def key(self, pod: PodInfo, generation: int) -> tuple | None:
        """The memo key of ``pod``'s attempt at scheduler ``generation``; None when the attempt
        may depend on more than the signature and the cluster state (nominated pods, pod
        affinity, a placement, an unsignable pod, gangsim explain recording)."""
        fw = self.runner
        if not pod.signature or pod.nominated_row != NO_NODE or fw.signatures is None or fw.placement is not None or fw.recorder is not None:
            return None
        snap = fw.snapshot
        if snap.affinity_pods or fw.nominator.by_row:
            return None
        nodes = snap.nodes
        epoch = (generation, nodes.generation, nodes.static_generation, len(nodes.order))
        if epoch != self._epoch:
            self._epoch = epoch
            self._failed.clear()
        return (pod.signature, pod.priority, pod.preemption_policy, pod.group_key != "")

    def replay(self, pod: PodInfo, generation: int, *, times: int = 1, like: Diagnosis | None = None) -> Diagnosis | None:
        """The diagnosis of the pass that failed for a pod like ``pod`` on this cluster state,
        with the pass's counted effects; None when there is none (or its signature entry is
        gone: the pass would refresh it). Costs nothing while nothing failed. ``times``: the
        passes of that many pods like ``pod`` in a row, counted at once (``PodRun``), and only
        when the diagnosis is ``like`` (with ``like`` given; None, counting nothing, otherwise)."""
        if not self._failed:
            return None
        key = self.key(pod, generation)
        hit = self._failed.get(key) if key is not None else None
        if hit is None or (like is not None and hit[0] is not like):
            return None
        signatures = self.runner.signatures
        if not signatures.hit(pod):  # type: ignore[union-attr]
            return None
        diagnosis, rows = hit
        self._replayed = (diagnosis, key)
        signatures.hits += times - 1  # type: ignore[union-attr]
        self.runner.filter_rows_evaluated += rows * times
        self.replays += times
        return diagnosis

    def store(self, pod: PodInfo, generation: int, diagnosis: Diagnosis, rows: int) -> None:
        """The pass for ``pod`` failed having evaluated ``rows`` rows (the search offset unmoved)."""
        key = self.key(pod, generation)
        if key is None:
            return
        if len(self._failed) >= MAX_ENTRIES:
            self._failed.clear()
        self._failed[key] = (diagnosis, rows)

    def post_filter_repeater(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis) -> Callable[[int], PostFilterResult | None] | None:
        """``Framework.run_post_filter`` for ``times`` pods like ``pod`` in a row (a ``PodRun``:
        same spec, none nominated) with ``diagnosis`` on this unchanged cluster, at once, when
        every PostFilter plugin can say what its calls would do without preempting
        (``RepeatablePostFilterPlugin``); None (nothing done) otherwise. With several plugins
        they are called pod by pod in order, as ``run_post_filter`` does (none nominates)."""
        if not self._repeatable:
            return None
        repeats: list[Callable[[int], PostFilterResult]] = []
        for p in self.runner.post_filter_plugins:
            repeat = p.post_filter_repeater(state, pod, diagnosis)  # type: ignore[attr-defined]
            if repeat is None:
                return None
            repeats.append(repeat)
        if len(repeats) == 1:
            return repeats[0]

        def pod_by_pod(times: int) -> PostFilterResult | None:
            result = None
            for _ in range(times):
                for repeat in repeats:
                    result = repeat(1)
            return result

        return pod_by_pod

    def repeated_post_filter(self, state: CycleState, pod: PodInfo, diagnosis: Diagnosis, generation: int) -> Callable[[int], PostFilterResult | None] | None:
        """``FastPath.repeated_post_filter``: ``post_filter_repeater`` for ``pod``, kept while the
        diagnosis is the same object (``replay`` hands out the stored one), the memo key and the
        cluster state are the same, so that a single pod's failed attempt after one like it on
        this cluster does not ask the PostFilter plugins again (Gavel under ``gang``: ~1.5 M lone
        pods' attempts, each PostFilter a cluster of equals). ``repeat(1)`` is what
        ``Framework.run_post_filter`` does for the pod (``_fail_together`` relies on the same,
        ``times`` pods at once). None: no repeater (nominated pod, victims possible …), call
        ``run_post_filter``."""
        replayed = self._replayed
        # (a replayed diagnosis is the one stored under one key: the pod's, computed by ``replay``
        # in this cycle, on this epoch; a fresh pass's diagnosis is a new object)
        key = replayed[1] if replayed is not None and replayed[0] is diagnosis else self.key(pod, generation)
        if key is None:
            return None
        kept = self._post_filter
        if kept is not None and kept[0] is diagnosis and kept[1] == key and kept[2] == self._epoch:
            if kept[3] is not None:
                self.post_filters_repeated += 1
            return kept[3]
        repeat = self.post_filter_repeater(state, pod, diagnosis)
        self._post_filter = (diagnosis, key, self._epoch, repeat)
        return repeat

    def fit_error_message(self, num_nodes: int, diagnosis: Diagnosis) -> str:
        """``types.fit_error_message``, kept for the last diagnosis (a replayed one is the same object)."""
        m = self._message
        if m is not None and m[0] is diagnosis and m[1] == num_nodes and m[2] == diagnosis.post_filter_msg and m[3] == diagnosis.pre_filter_msg:
            return m[4]
        message = fit_error_message(num_nodes, diagnosis)
        self._message = (diagnosis, num_nodes, diagnosis.post_filter_msg, diagnosis.pre_filter_msg, message)
        return message
