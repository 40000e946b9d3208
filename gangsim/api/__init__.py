"""Pure data: Kubernetes objects as gangsim models them, quantities, durations, selectors.

Stdlib only; nothing here knows about files, the scheduler or reports.
"""
