"""What-if analysis: many independent replays of a trace with one thing changed — the policy, the
scheduler configuration, the seed or the size of a NodePool — and what they add up to.

- ``variants.py`` — policy specs ``NAME[+VARIANT...][:CONFIG]``: which policy and which
  SchedulerConfig one run replays with (``--policy`` of ``diff``, ``plan`` and ``sweep``);
- ``pools.py`` — the NodePools of a loaded trace and the same trace with a pool resized;
- ``sweep.py`` — the runners every multi-run command shares (in this process, a process pool or
  Ray; each run goes through ``gangsim.pipeline``) and the grid of ``gangsim sweep``;
- ``plan.py`` — ``gangsim plan``: the bisection for the smallest pool size that meets every target.

This package computes; ``gangsim.report`` renders (``report.render_plan``, ``report.figures``,
``report.render_diff``). ``whatif`` may import ``report``, never the reverse. Nothing is imported
here, so ``import gangsim.whatif.variants`` (which every command needs) stays cheap.
"""
