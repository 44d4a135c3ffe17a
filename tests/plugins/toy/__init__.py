"""A toy benchmark plugin (issue 14): a 10-row classification benchmark that lives in the test
tree and reaches the platform only through `benchmark.plugins.registered`. The running example
of docs/adding-a-benchmark.md."""
