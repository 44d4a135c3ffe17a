from django.apps import AppConfig


class BenchmarkConfig(AppConfig):
    name = "benchmark"
    verbose_name = "Benchmarks"
