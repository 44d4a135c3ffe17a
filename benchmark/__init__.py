"""Benchmark definitions, test sets, and the pure scoring and ranking (``benchmark.scoring``)."""
