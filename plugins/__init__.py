"""Benchmark plugins shipped with Podium."""
