"""The "Submit a model endpoint" form: the upload form's fields and checks (the names, links,
challenge entry, the benchmark's options, evaluate only; `submissions.forms.SubmissionForm`)
without the file, and the endpoint instead: its base URL, the model name it serves, an
optional API key (a password input that never renders a value) and optional prices for the
cost estimate."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from core.exceptions import InvalidEndpoint
from inference.forms import BaseURLField
from submissions.forms import SubmissionForm

from .config import endpoint_address_problem


class HostedRequestForm(SubmissionForm):
    """`SubmissionForm` with the endpoint in place of the file. `submit_request` checks again
    under its lock and the view adds its refusals to the form."""

    base_url = BaseURLField(
        help_text="The OpenAI-compatible API's base, e.g. https://api.example.org/v1 (Podium "
        "posts to <base URL>/chat/completions).",
    )
    model = forms.CharField(
        label="Model",
        max_length=200,
        help_text="The model name the endpoint expects in each request.",
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        # render_value=False: the key never travels back to a browser, not even after an error.
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Optional. Stored encrypted, sent only to this base URL's host, and never "
        "shown again, to you or anyone.",
    )
    input_price_per_million = forms.DecimalField(
        label="Price per million prompt tokens (USD)",
        required=False,
        min_value=Decimal(0),
        max_digits=10,
        decimal_places=4,
        help_text="Optional, for the cost estimate on your request's page.",
    )
    output_price_per_million = forms.DecimalField(
        label="Price per million completion tokens (USD)",
        required=False,
        min_value=Decimal(0),
        max_digits=10,
        decimal_places=4,
    )

    ENDPOINT_FIELDS = (
        "base_url",
        "model",
        "api_key",
        "input_price_per_million",
        "output_price_per_million",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        del self.fields["predictions"]

    def clean_base_url(self) -> str:
        url = self.cleaned_data["base_url"].strip()
        problem = endpoint_address_problem(url)
        if problem:
            raise forms.ValidationError(problem)
        return url

    def refuse_endpoint(self, error: InvalidEndpoint) -> None:
        """Add the service's refusal of the endpoint to its field (the view's)."""
        field = error.field if error.field in self.fields else None
        self.add_error(field, str(error))

    def endpoint(self) -> dict[str, Any]:
        """The endpoint's values as `submit_request` takes them."""
        data = self.cleaned_data
        return {name: data[name] for name in self.ENDPOINT_FIELDS}
