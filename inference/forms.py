"""The form field every form that takes a model endpoint shares: its base URL, checked as the
endpoint row checks it (`inference.models.Endpoint.base_url`), refused in words that say what
a base URL looks like. Django's own "Enter a valid URL." said nothing to the commonest
mistake, the address without its scheme (``models.example.org/v1``)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.validators import URLValidator

INVALID_BASE_URL = (
    "Give the whole address, starting with https:// (or http://), "
    "e.g. https://models.example.org/v1."
)


class BaseURLField(forms.CharField):
    """A model endpoint's base URL, at most 300 characters (the row's column)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("label", "Base URL")
        super().__init__(
            max_length=300,
            validators=[URLValidator(schemes=["http", "https"], message=INVALID_BASE_URL)],
            **kwargs,
        )
