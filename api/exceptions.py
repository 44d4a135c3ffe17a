"""Domain errors as JSON: every refusal carries `detail` (a sentence for people) and `code` (for
scripts); a rejected predictions file also carries `problems`, one per offending row and field,
and `total`, the number of problems found (only the first ones are listed); invalid fields carry
`errors`, the messages per field."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.exceptions import (
    DomainError,
    DuplicatePredictions,
    InvalidEndpoint,
    InvalidFact,
    InvalidName,
    InvalidOption,
    InvalidPredictions,
    InvalidTransition,
    JudgeUnavailable,
    QuotaExceeded,
    StorageUnavailable,
)

STATUS = {
    InvalidPredictions: (status.HTTP_400_BAD_REQUEST, "invalid_predictions"),
    QuotaExceeded: (status.HTTP_429_TOO_MANY_REQUESTS, "quota_exceeded"),
    DuplicatePredictions: (status.HTTP_409_CONFLICT, "duplicate_predictions"),
    InvalidTransition: (status.HTTP_409_CONFLICT, "invalid_state"),
    JudgeUnavailable: (status.HTTP_503_SERVICE_UNAVAILABLE, "judge_unavailable"),
    StorageUnavailable: (status.HTTP_503_SERVICE_UNAVAILABLE, "storage_unavailable"),
}


def exception_handler(error: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(error, DomainError):
        code, name = next(
            (value for kind, value in STATUS.items() if isinstance(error, kind)),
            (status.HTTP_400_BAD_REQUEST, "refused"),
        )
        body: dict[str, Any] = {"detail": str(error), "code": name}
        if isinstance(error, InvalidFact) and error.problems:
            # A model fact the writer refused (issue 15): every refused one, by its key.
            body = {
                "detail": "The request is invalid; see `errors`.",
                "code": "invalid",
                "errors": {key: [message] for key, message in error.problems.items()},
            }
        elif isinstance(error, InvalidName | InvalidOption | InvalidEndpoint) and error.field:
            # A name refused by the writer (a look-alike published meanwhile), an option the
            # benchmark needs: in the envelope of the serializer's field errors, where the
            # same refusal usually comes from.
            body = {
                "detail": "The request is invalid; see `errors`.",
                "code": "invalid",
                "errors": {error.field: [str(error)]},
            }
        if isinstance(error, InvalidPredictions):
            body["detail"] = "The predictions file was rejected; nothing was stored."
            body["problems"] = error.problems
            body["total"] = error.total
        return Response(body, status=code)
    if isinstance(error, Http404):
        # As DRF's handler converts it, but before the check below: a view's Http404 (no such
        # benchmark, no such entry) gets `code` like any other refusal.
        error = NotFound(*error.args)
    elif isinstance(error, DjangoPermissionDenied):
        error = PermissionDenied(*error.args)
    response = drf_exception_handler(error, context)
    if (
        response is not None
        and isinstance(error, APIException)
        and not isinstance(error, ValidationError)
        and isinstance(response.data, dict)
        and set(response.data) == {"detail"}
    ):
        # DRF's own refusals (401, 403, 404, 405, 429 ...) carry only `detail`; the envelope
        # promises `code` too (docs/api.md): DRF's code for the error, e.g. "throttled".
        response.data["code"] = error.get_codes()
    if response is not None and isinstance(error, ValidationError):
        # Field errors in the same envelope: {"detail", "code", "errors": {field: [messages]}}.
        response.data = {
            "detail": "The request is invalid; see `errors`.",
            "code": "invalid",
            "errors": response.data,
        }
    return response
