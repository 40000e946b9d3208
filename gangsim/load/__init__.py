"""Trace files → ``gangsim.api.trace.Trace`` (YAML, JSON, JSON Lines; KubeSchedulerConfiguration).

Besides the loader, what produces trace records: ``importers/`` (real traces, ``gangsim import``)
and ``generate.py`` (synthetic traces, ``gangsim generate``).

Layering: imports only ``gangsim.api``, ``gangsim.errors``, the stdlib, ``yaml`` and ``orjson``
(numpy too, in the importers, the generator and the duration distributions).
Every problem is a ``gangsim.errors.InputError`` whose ``str()`` is one line:
``file:line: Kind ns/name: field.path: Invalid value: "x": detail``.
"""

from gangsim.load.trace import load_config, load_trace

__all__ = ["load_config", "load_trace"]
