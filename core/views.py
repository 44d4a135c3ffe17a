from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def home(request: HttpRequest) -> HttpResponse:
    """Placeholder landing page until the benchmark pages exist."""
    return render(request, "core/home.html")
