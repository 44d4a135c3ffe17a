"""The owner's form for their entry's details (issue 13, point 6)."""

from __future__ import annotations

from typing import Any

from django import forms

from .maintenance import PRESENTATION_FIELDS
from .models import Submission


class EntryDetailsForm(forms.ModelForm):
    """The presentation fields only; the names are normalised and checked again by the
    writer (`maintenance.update_entry_details`), whose refusal lands on its field."""

    class Meta:
        model = Submission
        fields = list(PRESENTATION_FIELDS)

    def changes(self) -> dict[str, Any]:
        return {field: self.cleaned_data[field] for field in self.changed_data}
