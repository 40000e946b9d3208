"""DefaultPreemption: the classic per-node evaluator and (later) the PodGroup evaluator."""
