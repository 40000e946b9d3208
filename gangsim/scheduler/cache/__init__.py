"""Long-lived scheduler state: the node table (kube's cache + NodeInfo) and per-cycle snapshots."""
