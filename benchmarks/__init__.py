"""gangsim benchmarks (not tests): ``python -m benchmarks``."""
