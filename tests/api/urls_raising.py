"""The site's URLconf plus views that fail, for the error-page tests (tests/api/test_errors.py).
Django takes the error views from the root URLconf in use, so they are the site's own."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.views import APIView

from config.urls import handler400, handler403, handler404, handler500  # noqa: F401
from config.urls import urlpatterns as site_urlpatterns


def failing_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug in a plain view")


class FailingApiView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request: Request) -> HttpResponse:
        raise ZeroDivisionError("a bug in an API view")


urlpatterns = [
    path("api/v1/failing/", FailingApiView.as_view()),
    path("api/v1/failing-plain/", failing_view),
    path("failing/", failing_view),
    *site_urlpatterns,
]
