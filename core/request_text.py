"""Text a request carries that no form or serializer reads: every page's query parameters and
the few posted fields a view reads itself (a note, a confirmation).

PostgreSQL's text cannot hold a NUL (U+0000): a `?q=%00` that reached a query answered 500.
The API's serializers refuse it with a 400 that names the field (DRF's CharField); the page
forms do too (Django's CharField). What reaches the database without either goes through
here and gets the same treatment: a 400 that names the parameter and the character, before
any view runs, and nothing changed.

- `QueryTextMiddleware` checks every query parameter (names and values) of every page, so a
  parameter added to a view tomorrow is covered without a word in that view.
- `posted_text` is how a view reads a posted field that no form cleans.

Only NUL is refused: every other character a URL can carry decodes to text PostgreSQL stores
(Django decodes invalid UTF-8 as U+FFFD, never as a lone surrogate), and a page's own rules
(an unknown sort or tag falls back to the default) still decide what a value means.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse, QueryDict

NUL = "\x00"


class UnstorableText(BadRequest):
    """A request whose text cannot be stored or searched (a NUL); the message names where it
    is and is safe to show. Django answers it with its 400 view (`handler400`)."""


def _where(text: str) -> str:
    return f"at character {text.index(NUL) + 1}"


def nul_problem(fields: Iterable[tuple[str, str]], *, what: str, fix: str) -> str | None:
    """What is wrong with the first (name, value) pair that holds a NUL, or None."""
    for name, value in fields:
        if NUL in name:
            shown = name.replace(NUL, "\\x00")
            return (
                f"The {what} name {shown!r} holds a NUL character (U+0000) {_where(name)}, "
                f"which no text may hold; {fix}. Nothing was changed."
            )
        if NUL in value:
            return (
                f"The {what} {name!r} holds a NUL character (U+0000) {_where(value)}, which "
                f"no text may hold; {fix}. Nothing was changed."
            )
    return None


def _pairs(query: QueryDict) -> Iterable[tuple[str, str]]:
    for name, values in query.lists():
        for value in values:
            yield name, value


def posted_text(request: HttpRequest, name: str, default: str = "") -> str:
    """The posted field `name` (`default` when absent), refused as `UnstorableText` when it
    holds a NUL: for the fields a view reads itself rather than through a form."""
    value = request.POST.get(name, default)
    problem = nul_problem(
        [(name, value)], what="form field", fix="remove it and send the form again"
    )
    if problem:
        raise UnstorableText(problem)
    return value


class QueryTextMiddleware:
    """400 for a page whose query string holds a NUL, in a parameter's name or value. The API
    (under `API_PREFIX`) is left to its serializers, which name the parameter in its
    envelope; a parameter no serializer reads is never used there."""

    API_PREFIX = "/api/"

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(self.API_PREFIX) and _may_hold_nul(request):
            problem = nul_problem(
                _pairs(request.GET), what="address's parameter", fix="remove it from the address"
            )
            if problem:
                raise UnstorableText(problem)
        return self.get_response(request)


def _may_hold_nul(request: HttpRequest) -> bool:
    """Whether the raw query string spells a NUL: the parameters are decoded only then."""
    raw = request.META.get("QUERY_STRING", "")
    return "%00" in raw or NUL in raw
