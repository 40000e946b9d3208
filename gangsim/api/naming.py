"""Names controllers give the objects they create (so that the loader, the importers and the
simulator agree on them).

KEP-5547's Job controller (kubernetes ``pkg/controller/job/job_scheduling_manager.go``):
``computeWorkloadName``, ``podGroupTemplateName``, ``computePodGroupName``.
"""

from __future__ import annotations

from gangsim.api.objects import Job

# validation.DNS1123SubdomainMaxLength; apimachinery util/rand's alphabet (rand.String and
# SafeEncodeString: no vowels, no 0/1/3, so that generated names spell no words)
_NAME_MAX = 253
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: every character mapped into the alphabet without vowels."""
    return "".join(NAME_ALPHABET[ord(c) % len(NAME_ALPHABET)] for c in text)


def workload_name(job: Job) -> str:
    """``computeWorkloadName``: ``<job (cut)>-<hash>`` (the hash of ``namespace/name`` standing in for the UID)."""
    digest = safe_encode(str(fnv32a(f"{job.namespace}/{job.name}".encode())))
    return f"{job.name[: _NAME_MAX - len(digest) - 1]}-{digest}"


def template_name(job: Job) -> str:
    """``podGroupTemplateName``."""
    return f"{job.name}-pgt-0"


def pod_group_name(workload: str, template: str) -> str:
    """``computePodGroupName``: ``<workload>-<template>-<hash>``, each part cut to share the 253 characters."""
    digest = safe_encode(str(fnv32a(workload.encode() + template.encode())))
    room = _NAME_MAX - len(digest) - 2
    wl, tpl = workload, template
    if len(wl) + len(tpl) > room:
        half = room // 2
        if len(wl) <= half:
            tpl = tpl[: room - len(wl)]
        elif len(tpl) <= half:
            wl = wl[: room - len(tpl)]
        else:
            wl, tpl = wl[: room - half], tpl[:half]
    return f"{wl}-{tpl}-{digest}"


__all__ = ["NAME_ALPHABET", "fnv32a", "pod_group_name", "safe_encode", "template_name", "workload_name"]
