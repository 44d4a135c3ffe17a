"""MedVidBench's plugin: the official scorer's reimplementation (`benchmark.scoring`) behind
the plugin protocol (benchmark/plugins.py)."""
