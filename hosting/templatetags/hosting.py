"""`{% load hosting %}`: hosted evaluation's pieces on the benchmark's pages: the Submit page's
"Submit a model endpoint" offer and the board's link to the request queue.

The submissions app sits below this one and never imports it; its templates include these
through the tags (as they do the judge's panel and the re-run's endpoint box).
"""

from __future__ import annotations

from typing import Any

from django import template

from benchmark.models import Benchmark
from hosting import selectors

register = template.Library()


@register.inclusion_tag("hosting/_offer.html")
def hosted_offer(benchmark: Benchmark) -> dict[str, Any]:
    """`{% hosted_offer benchmark %}`: the offer, for a benchmark that takes model endpoints."""
    return {"benchmark": benchmark, "shown": selectors.takes_endpoints(benchmark)}


@register.inclusion_tag("hosting/_queue_link.html")
def hosted_queue_link(benchmark: Benchmark) -> dict[str, Any]:
    """`{% hosted_queue_link benchmark %}`: "Request queue", for such a benchmark."""
    return {"benchmark": benchmark, "shown": selectors.takes_endpoints(benchmark)}
