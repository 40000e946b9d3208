"""Speed shortcuts of the framework runtime, each behind its own ``api.config.FastPath`` switch
and each proven equal to the reference path (report bytes: ``tests/golden``; A/B tests in
``tests/scheduler/test_fast_path.py``):

=====================  =========================================================================
``static_cache``       node-static Filter codes (labels, taints, flags) per static signature
``signatures``         KEP-5598 opportunistic batching: Filter codes and raw scores per pod
                       signature, refreshed only for the rows whose generation moved (a few
                       rows on Python scalars: ``FastPath.row_refresh``)
``search``             the windowed search: only the rows that can hold the wanted feasible nodes
``doomed``             a single-shape PodGroup pass that cannot reach minCount, decided from counts
``rotation``           where such a pass leaves the rotating search start when searches stop early
``counted``            a single-shape pass where every pod fits, replayed (KEP-5732 placements,
                       and without one on clusters of fewer than 1,024 nodes)
``windows``            the same on clusters of 1,024 nodes or more: only the windows the pass's
                       searches reach, when they end within one rotation of the nodes
``repeat``             a pod-by-pod pass that failed, replayed for a pod of the same signature on
                       the unchanged cluster (its diagnosis, FitError text and counted effects),
                       and its PostFilter outcome from the repeater kept for that diagnosis
                       (``FastPath.repeated_post_filter``)
``attempts``           a PodGroup attempt on a scheduler generation unchanged since the group's
                       last attempt, which the doomed pass decided: that attempt's result again
``run_pass``           the next pods of a ``PodRun`` whose searches fit in one lap of the
                       rotation, in one look
``pre_enqueue``        what PreEnqueue found for an entity's pods (pods that passed, spec-only
                       plugins: not asked again)
``counted_searches``   pod-by-pod cycles of one shape where every pod fits (a gang's pods under
                       ``permit``, a run's under ``pod``): the rows the counted pass's searches take
``bulk``               a stuck PodGroup's retries on an unchanged cluster, asleep in backoffQ
                       (``queue.sleepers``) and accounted in bulk
``gated_members``      a PodGroup event's walk over its gated members, shortened
=====================  =========================================================================

The reference path is :mod:`gangsim.scheduler.framework.runtime` with every switch off
(``opportunistic_batching: false``, the ``no-batching`` policy variant): plain per-pod Filter
and Score over the snapshot. This package imports the framework's contracts only.
"""
