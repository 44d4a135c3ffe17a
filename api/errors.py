"""Django's error views, answering JSON under /api/ and the usual HTML page elsewhere.

DRF's exception handler (`api.exceptions`) turns the errors it knows into JSON, but an
unexpected exception (a bug), a URL no API route matches, or a refusal raised before DRF runs
(a request body too large, a suspicious host) reaches Django's own error views, which answer
an HTML page a script cannot read. The root URLconf names these views as `handler400`,
`handler403`, `handler404` and `handler500`, so every error under /api/ carries the API's
envelope, `{"detail", "code"}`. Django still logs a 500 (`django.request`) and mails the
admins as before: only the body changes.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(detail: str, code: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": detail, "code": code}, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json("The request could not be read.", "bad_request", 400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json("You do not have permission to do this.", "permission_denied", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return _json(
            "No such API endpoint; the endpoints are listed at /api/docs/.", "not_found", 404
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return _json(
            "An internal error stopped this request; the maintainers have been told. "
            "Please try again later.",
            "server_error",
            500,
        )
    return defaults.server_error(request)
