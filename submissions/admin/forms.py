"""The console's forms: the action bar's note, the reason of a rejection or withdrawal, and an
entry's page (its names checked as an upload's)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin import helpers

from core.exceptions import InvalidName

from ..maintenance import PRESENTATION_FIELDS
from ..models import Submission
from ..names import NAME_FIELDS, clean_name

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


class SubmissionAdminForm(forms.ModelForm):
    """An entry's page: the editable names (institution, team, authors) normalised and
    checked by `submissions.names`, so a refusal is shown on its field rather than raised by
    `maintenance.update_entry_details`, which checks them again."""

    class Meta:
        model = Submission
        fields = list(PRESENTATION_FIELDS)  # the only editable ones (SubmissionAdmin)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        for field in NAME_FIELDS:
            if isinstance(cleaned.get(field), str) and field in self.changed_data:
                try:
                    cleaned[field] = clean_name(field, cleaned[field])
                except InvalidName as error:
                    self.add_error(field, str(error))
        return cleaned


# The intermediate page of reject and withdraw (the admin's confirmation-page pattern).
REASON_PAGE = "admin/submissions/submission/reason.html"
