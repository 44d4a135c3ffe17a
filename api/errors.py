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

from django.conf import settings
from django.core.exceptions import (
    DisallowedHost,
    RequestDataTooBig,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string
from django.views import defaults

from core.request_text import UnstorableText

API_PREFIX = "/api/"


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(detail: str, code: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": detail, "code": code}, status=status)


def refusal_reason(exception: Exception) -> tuple[str, str]:
    """(what went wrong, in words; its code) for a request Django refused before any view read
    it: the sentence names the limit or the fault, and says that nothing was stored."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / (1024 * 1024)
        return (
            f"The request's fields (other than its file) are larger than the {limit:g} MB a "
            "form may send; nothing was stored. A name or a URL is far shorter: check what "
            "was sent.",
            "request_too_large",
        )
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return (
            "The request sends more fields or files than a form accepts; nothing was stored. "
            "Send the form's fields and one predictions file.",
            "too_many_fields",
        )
    if isinstance(exception, MultiPartParserError):
        return (
            "The request's form data could not be read (the upload was cut off, or it is not "
            "multipart/form-data as its header says); nothing was stored. Send it again.",
            "malformed_request",
        )
    if isinstance(exception, UnstorableText):
        return (str(exception), "invalid_text")
    if isinstance(exception, DisallowedHost):
        return ("The request names a host this site does not serve.", "bad_request")
    return ("The request could not be read; nothing was stored.", "bad_request")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    detail, code = refusal_reason(exception)
    if _is_api(request):
        return _json(detail, code, 400)
    try:
        # Rendered without the request (it could not be read): no user, no messages.
        page = render_to_string("400.html", {"reason": detail})
    except Exception:  # a broken template must not turn a 400 into a 500
        return defaults.bad_request(request, exception)
    return HttpResponseBadRequest(page)


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
