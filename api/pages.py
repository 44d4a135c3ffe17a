"""The "Use the API" page (/api-guide/): short curl and Python examples for scripts, with every
URL reversed from the real endpoints, so the page cannot drift from the API it describes."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse

from benchmark.selectors import public_benchmarks
from submissions.selectors import board_summary

# The slug shown when no benchmark is public yet (a fresh install): MedVidBench, the first one.
DEFAULT_SLUG = "medvidbench"
# A value each model fact takes, for the submit examples of a benchmark that asks for them.
FACT_EXAMPLES = {
    "type": "fine-tuned",
    "parameters": "7",
    "licence": "apache-2.0",
    "precision": "bfloat16",
    "domain_specific": "yes",
}
# A stand-in for "your submission's id" in the examples; the page says to replace it.
EXAMPLE_SUBMISSION_ID = 123


def api_guide(request: HttpRequest) -> HttpResponse:
    """Examples for the benchmark `?benchmark=<slug>` names (the first public one without it;
    404 for one that is not public): export its rankings, submit a file with a token (with
    the model facts it asks for), follow the submission, start its judge (or say it has no
    judge step), list one's own submissions. Issue 32: the examples used one benchmark and
    described another's judge metrics."""
    benchmarks = list(public_benchmarks())
    asked = request.GET.get("benchmark", "")
    benchmark = next((item for item in benchmarks if item.slug == asked), None)
    if asked and benchmark is None:
        raise Http404(
            f"No public benchmark {asked!r}; the guide covers: "
            f"{', '.join(item.slug for item in benchmarks) or 'none yet'}."
        )
    if benchmark is None and benchmarks:
        benchmark = benchmarks[0]
    slug = benchmark.slug if benchmark is not None else DEFAULT_SLUG
    metrics = list(benchmark.metrics.all()) if benchmark is not None else []

    def absolute(name: str, *args: object) -> str:
        return request.build_absolute_uri(reverse(name, args=args))

    # The examples read a board that has rows: a benchmark whose Official board is empty
    # (the demo's clinical QA) gave "count": 0 to a newcomer's first call.
    counts = board_summary(benchmark).counts if benchmark is not None else {}
    example_board = (
        "official" if counts.get("official") or not counts.get("community") else "community"
    )
    context = {
        "slug": slug,
        "example_board": example_board,
        "example_benchmark": benchmark,
        "guide_benchmarks": benchmarks,
        "judge_metrics": [metric.key for metric in metrics if metric.is_judge_metric],
        # Without a benchmark (a fresh install), the first one's: MedVidBench's judge step.
        "judge_step": benchmark.judge_step if benchmark is not None else True,
        "sort_example": next((metric.key for metric in metrics if not metric.is_judge_metric), ""),
        "facts": [
            (key, FACT_EXAMPLES.get(key, "…"))
            for key in (benchmark.fact_keys if benchmark is not None else [])
        ],
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
