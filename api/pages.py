"""The "Use the API" page (/api-guide/): short curl and Python examples for scripts, with every
URL reversed from the real endpoints, so the page cannot drift from the API it describes."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse

from benchmark.selectors import public_benchmarks

# The slug shown when no benchmark is public yet (a fresh install): MedVidBench, the first one.
DEFAULT_SLUG = "medvidbench"
# A stand-in for "your submission's id" in the examples; the page says to replace it.
EXAMPLE_SUBMISSION_ID = 123


def api_guide(request: HttpRequest) -> HttpResponse:
    """Examples for the first public benchmark: export its rankings, submit a file with a
    token, follow the submission, start the judge, list one's own submissions."""
    benchmark = public_benchmarks().first()
    slug = benchmark.slug if benchmark is not None else DEFAULT_SLUG

    def absolute(name: str, *args: object) -> str:
        return request.build_absolute_uri(reverse(name, args=args))

    context = {
        "slug": slug,
        "example_benchmark": benchmark,
        "example_id": EXAMPLE_SUBMISSION_ID,
        "urls": {
            "benchmarks": absolute("api:benchmark-list"),
            "rankings": absolute("api:rankings", slug),
            "rankings_csv": absolute("api:rankings-csv", slug),
            "submit": absolute("api:submit", slug),
            "submission": absolute("api:submission-detail", EXAMPLE_SUBMISSION_ID),
            "judge": absolute("api:judge-start", EXAMPLE_SUBMISSION_ID),
            "submissions": absolute("api:submission-list"),
            "docs": absolute("api:docs"),
            "schema": absolute("api:schema"),
            "tokens": absolute("accounts:tokens"),
        },
    }
    return render(request, "api/guide.html", context)


urlpatterns = [
    path("api-guide/", api_guide, name="api-guide"),
]
