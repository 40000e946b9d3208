"""One module per upstream plugin (named like kube's ``framework/plugins/<name>/`` folders).

A plugin is a class with ``NAME`` that subclasses the Protocols of the extension points it
implements (``framework/interface.py``) and is built as ``Class(args: PluginArgs, handle: Handle)``;
``registry.REGISTRY`` maps its name to it. Plugins import the framework's contracts only, never
the runtime, the scheduler or each other (``names`` and ``helper`` are shared constants).
"""
