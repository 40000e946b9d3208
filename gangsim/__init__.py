"""gangsim: what would the Kubernetes scheduler do with these jobs?

Replays Kubernetes-style traces through a model of kube-scheduler under three policies
(``pod``, ``permit``, ``gang``) and reports GPU idle time, gang wait time and preemption victims.
"""

__version__ = "0.1.0"
