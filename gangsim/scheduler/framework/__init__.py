"""Contracts between the runtime and the plugins (kube's ``k8s.io/kube-scheduler/framework``)."""

from gangsim.scheduler.framework.interface import Code, Status

__all__ = ["Code", "Status"]
