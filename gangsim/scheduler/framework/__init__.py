"""The framework (kube's ``k8s.io/kube-scheduler/framework`` contracts plus ``framework/runtime``):
``interface`` (codes, statuses, one Protocol per extension point), ``types`` (pods, queue
entities, PodGroup state, diagnosis, enums), ``handle`` (what plugins may use; what the simulator
implements), ``cycle_state``, ``preemption`` (the shared evaluator) and ``runtime`` (one profile's
plugin lists and the code that runs them)."""

from gangsim.scheduler.framework.interface import Code, Status

__all__ = ["Code", "Status"]
