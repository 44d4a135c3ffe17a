"""``benchmark`` for allauth's pages (sign-in, sign-up, password reset, ...), so base.html shows
the benchmark tabs there too; Podium's own views pass their ``benchmark`` themselves."""

from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from benchmark.selectors import navigation_benchmark


def sign_in_benchmark(request: HttpRequest) -> dict[str, Any]:
    """``benchmark`` on allauth's pages only (the view's module is allauth's); lazy, so a page
    that never reads it pays no query. Empty elsewhere: a view's own ``benchmark`` would win
    anyway, and a page without one (the benchmark list) keeps having none."""
    match = getattr(request, "resolver_match", None)
    if match is None or not getattr(match.func, "__module__", "").startswith("allauth."):
        return {}
    next_path = request.POST.get("next") or request.GET.get("next") or ""
    return {
        "benchmark": SimpleLazyObject(lambda: navigation_benchmark(next_path, viewer=request.user))
    }
