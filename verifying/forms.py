"""The entry owner's form for their model's endpoint (the entry page's "Model endpoint for
verification"). The key field is a password input that never renders a value."""

from __future__ import annotations

from django import forms

from inference.forms import BaseURLField


class ModelEndpointForm(forms.Form):
    base_url = BaseURLField(
        help_text="Your OpenAI-compatible API's base, e.g. https://models.example.org/v1.",
    )
    model = forms.CharField(
        label="Model name", max_length=200, help_text="The model name your endpoint expects."
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        strip=True,
        # render_value=False: the key never travels back to a browser, not even after an error.
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        help_text="Stored encrypted and never shown again; sent only to this base URL's host. "
        "Leave it blank if your endpoint needs none. Changing the endpoint later means entering "
        "the key again.",
    )
