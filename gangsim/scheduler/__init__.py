"""A model of kube-scheduler's core: queue, framework, plugins, preemption and the PodGroup cycle.

Knows nothing of files, Typer, rich or Polars. The simulator drives it through the ``Scheduler``
handlers (the informer side) and implements the ``ClusterAPI`` it calls back (bind, evict, ...).
"""
