"""DefaultPreemption's machinery (kube's ``framework/preemption``): one ``Evaluator`` running the
numbered steps of SEMANTICS §5 / §11.2 with two strategies — one pod preempting on one node, one
PodGroup preempting across the cluster — over shared victim units, PDB accounting and reprieve."""
