"""The console's forms: the action bar's note, and the reason of a rejection or withdrawal."""

from __future__ import annotations

from django import forms
from django.contrib.admin import helpers

# --- forms --------------------------------------------------------------------------------------


class MaintainerActionForm(helpers.ActionForm):
    """The action bar, with a note that goes into the audit row of each move."""

    note = forms.CharField(
        label="Note:",
        required=False,
        max_length=500,
        widget=forms.TextInput(attrs={"placeholder": "for the audit trail (optional)"}),
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text="The authors are shown this.",
    )
    note = forms.CharField(
        required=False,
        max_length=500,
        help_text="For the audit trail only (optional).",
        widget=forms.TextInput(attrs={"size": 80}),
    )


# The intermediate page of reject and withdraw (the admin's confirmation-page pattern).
REASON_PAGE = "admin/submissions/submission/reason.html"
