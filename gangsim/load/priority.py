"""PriorityClasses and priority resolution (INTERFACE rule 6).

Classes are resolved across the whole trace regardless of their arrival time: a pod created at
t=0 may name a class created later. The two system classes always exist.
"""

from __future__ import annotations

from gangsim.api.objects import HIGHEST_USER_DEFINABLE_PRIORITY, PreemptionPolicy, PriorityClass, Source
from gangsim.errors import forbidden, invalid, required
from gangsim.load.fields import Obj, check_name
from gangsim.load.meta import Meta

SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
PREEMPTION_POLICIES = tuple(p.value for p in PreemptionPolicy)


def decode_priority_class(doc: Obj, meta: Meta, source: Source) -> PriorityClass:
    """scheduling.k8s.io/v1 PriorityClass: value (int32), globalDefault, preemptionPolicy."""
    doc.check_keys({"apiVersion", "kind", "metadata", "value", "globalDefault", "preemptionPolicy", "description"})
    value = doc.int("value", lo=INT32_MIN, hi=INT32_MAX)
    if value is None:
        raise doc.error("value", required("value"))
    if meta.name in SYSTEM_CLASSES:
        if value != SYSTEM_CLASSES[meta.name]:
            raise doc.error("value", invalid("value", value, f"{meta.name} is a system class with value {SYSTEM_CLASSES[meta.name]}"))
    elif meta.name.startswith("system-"):
        raise doc.error("metadata", invalid("metadata.name", meta.name, "priority class names with 'system-' prefix are reserved"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        raise doc.error("value", forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    policy = doc.enum("preemptionPolicy", PREEMPTION_POLICIES, PreemptionPolicy.PREEMPT_LOWER_PRIORITY.value)
    return PriorityClass(meta.name, value, doc.bool("globalDefault"), PreemptionPolicy(policy), source)


class Priorities:
    """Every PriorityClass of the trace (plus the system classes) and the global default."""

    def __init__(self) -> None:
        self.classes: dict[str, PriorityClass] = {n: PriorityClass(n, v) for n, v in SYSTEM_CLASSES.items()}
        self.default: PriorityClass | None = None

    def add(self, pc: PriorityClass, doc: Obj) -> None:
        known = self.classes.get(pc.name)
        if known is not None and pc.name not in SYSTEM_CLASSES:
            if (known.value, known.global_default, known.preemption_policy) != (pc.value, pc.global_default, pc.preemption_policy):
                raise doc.error(
                    "value",
                    invalid("value", pc.value, f"PriorityClass {pc.name} is defined differently at {known.source.where()}; gangsim resolves classes across the whole trace"),
                )
        if pc.global_default and self.default is not None and self.default.name != pc.name:
            raise doc.error(
                "globalDefault",
                invalid("globalDefault", True, f"PriorityClass {self.default.name} ({self.default.source.where()}) is already marked as default. Only one default can exist"),
            )
        if known is None or pc.name not in SYSTEM_CLASSES:
            self.classes[pc.name] = pc
        if pc.global_default:
            self.default = pc

    def resolve(self, spec: Obj, *, what: str = "pod") -> tuple[str, int | None, PriorityClass | None]:
        """(priorityClassName, priority, class) for a pod spec, PodGroup spec or template.

        ``priorityClassName`` → the class value (unknown: error); ``priority`` alone is taken as
        given; neither → the globalDefault class, else no priority (None).
        """
        name = check_name(spec, "priorityClassName", "subdomain", req=False)
        prio = spec.int("priority", lo=INT32_MIN, hi=INT32_MAX)
        if name:
            pc = self.classes.get(name)
            if pc is None:
                raise spec.error("priorityClassName", invalid(spec.fp("priorityClassName"), name, f"no PriorityClass with name {name} was found"))
            if prio is not None and prio != pc.value:
                raise spec.error(
                    "priority",
                    invalid(
                        spec.fp("priority"),
                        prio,
                        f"the integer value of priority ({prio}) must not be provided in {what} spec; priority admission "
                        f"controller computed {pc.value} from the given PriorityClass name",
                    ),
                )
            return name, pc.value, pc
        if prio is not None:
            if prio > HIGHEST_USER_DEFINABLE_PRIORITY:
                raise spec.error(
                    "priority",
                    invalid(spec.fp("priority"), prio, f"must be no greater than {HIGHEST_USER_DEFINABLE_PRIORITY} unless priorityClassName names a system class"),
                )
            return "", prio, None
        if self.default is not None:
            return self.default.name, self.default.value, self.default
        return "", None, None

    @staticmethod
    def preemption_policy(spec: Obj, pc: PriorityClass | None) -> PreemptionPolicy:
        """The spec's own ``preemptionPolicy``, else its class's, else PreemptLowerPriority."""
        own = spec.enum("preemptionPolicy", PREEMPTION_POLICIES)
        if own:
            return PreemptionPolicy(own)
        return pc.preemption_policy if pc is not None else PreemptionPolicy.PREEMPT_LOWER_PRIORITY
