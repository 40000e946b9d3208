"""Workload controllers: each expands one kind of workload object into what its upstream
controller creates (Jobs or pods) and what its gang-scheduling integration creates (a Workload
and its PodGroups), as gangsim api objects. One module per kind; ``registry`` dispatches.

Layering: below ``load.decode`` (which calls ``registry.decode``), above ``load.podspec``,
``load.meta``, ``load.fields`` and ``load.limits``. ``kinds`` is data only (``load.meta`` reads it).
"""
