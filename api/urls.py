"""/api/: version 1 of the API, its OpenAPI schema and interactive docs (served offline)."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import benchmarks, rankings, submitting

app_name = "api"

urlpatterns = [
    path("v1/", include(benchmarks.urlpatterns)),
    path("v1/", include(rankings.urlpatterns)),
    path("v1/", include(submitting.urlpatterns)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
