"""A model of kube-scheduler's core: queue, framework, plugins, preemption and the PodGroup cycle.

Knows nothing of files, Typer, rich or Polars. Layers, each importing only those above it
(``tests/test_layering.py`` keeps this true)::

    framework/  interface.py, types.py, handle.py, cycle_state.py   the contracts (kube's staging framework)
                preemption/                                          the Evaluator and its two strategies
    plugins/    one module per upstream plugin; registry.py          import the contracts only
    fastpath/   static cache, signature cache, windowed search, doomed pass (each a switch)
    framework/runtime.py   Framework: one plugin list per extension point; the Handle plugins get
    cache/ queue/          the node table and snapshot; activeQ, backoffQ, unschedulable pool, nominator
    binding.py schedule_one.py schedule_podgroup.py   the cycle drivers, through cycle_handle.SchedulerHandle
    profiles.py            pod | permit | gang as data: feature gates and plugin names per extension point
    scheduler.py           Scheduler: informer handlers, the cycle loop (implements informer.Informer)

The simulator drives it through the ``Informer`` handlers and implements the ``ClusterAPI`` it
calls back (``framework/handle.py``: bind, reserve, preempt, timers).
"""
