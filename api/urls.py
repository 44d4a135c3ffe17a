"""/api/: version 1 of the API, its OpenAPI schema and interactive docs (served offline)."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

# `schema` for its side effect: drf-spectacular learns how our token scheme is described. Every
# schema is generated through this URLconf, so this is early enough (api/apps.py).
from . import (  # noqa: F401
    battles,
    benchmarks,
    compare,
    entries,
    hosted,
    rankings,
    schema,
    snapshot_diff,
    snapshots,
    submitting,
)

app_name = "api"

urlpatterns = [
    path("v1/", include(benchmarks.urlpatterns)),
    path("v1/", include(rankings.urlpatterns)),
    path("v1/", include(snapshots.urlpatterns)),
    path("v1/", include(snapshot_diff.urlpatterns)),
    path("v1/", include(compare.urlpatterns)),
    path("v1/", include(entries.urlpatterns)),
    path("v1/", include(submitting.urlpatterns)),
    path("v1/", include(battles.urlpatterns)),
    path("v1/", include(hosted.urlpatterns)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's init script as a file (docs/?script), and our template
    # drops the page's inline <style>: the docs work under the Content-Security-Policy.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api:schema", template_name="api/swagger_ui.html"
        ),
        name="docs",
    ),
]
