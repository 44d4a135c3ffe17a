"""Forms of the account pages: naming a new personal API token."""

from django import forms

from .models import ApiToken


class ApiTokenForm(forms.Form):
    """The name of a new token; `create_api_token` makes and stores it (and may still refuse)."""

    name = forms.CharField(
        max_length=ApiToken._meta.get_field("name").max_length,
        help_text="Where the token is used, e.g. “lab workstation” or “nightly eval script”.",
    )
