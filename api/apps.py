from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "REST API"
    # No ready(): api/urls.py imports api.schema (the token scheme for drf-spectacular), which
    # every schema is generated through; importing it here put drf-spectacular and most of DRF
    # into every process's start-up (docs/performance.md).
