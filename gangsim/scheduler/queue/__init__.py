"""The scheduling queue: activeQ, backoffQ, the unschedulable pool (SEMANTICS §4)."""
