"""The owner's form for their entry's details (issue 13, point 6), and its model facts where
the benchmark asks for them (issue 15)."""

from __future__ import annotations

from typing import Any

from django import forms

from .forms import SubmissionForm, fact_fields
from .maintenance import PRESENTATION_FIELDS
from .models import Submission


class EntryDetailsForm(forms.ModelForm):
    """The presentation fields, then the benchmark's model facts; the names are normalised and
    checked again by the writer (`maintenance.update_entry_details`), whose refusal lands on
    its field."""

    class Meta:
        model = Submission
        fields = list(PRESENTATION_FIELDS)
        # As the submit form words them ("Model URL", not the column's "Model url"), with
        # its help texts.
        labels = {
            name: SubmissionForm.base_fields[name].label
            for name in PRESENTATION_FIELDS
            if SubmissionForm.base_fields[name].label
        }
        help_texts = {
            name: SubmissionForm.base_fields[name].help_text
            for name in PRESENTATION_FIELDS
            if SubmissionForm.base_fields[name].help_text
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        facts = fact_fields(self.instance.benchmark)
        stored = self.instance.model_facts or {}
        for key, field in facts.items():
            field.initial = stored.get(key)
        self.fact_keys = list(facts)
        self.fields.update(facts)

    @property
    def detail_bound_fields(self) -> list[forms.BoundField]:
        return [self[name] for name in PRESENTATION_FIELDS]

    @property
    def fact_bound_fields(self) -> list[forms.BoundField]:
        return [self[key] for key in self.fact_keys]

    def changes(self) -> dict[str, Any]:
        """The changed fields, as `update_entry_details` takes them: the facts together, as
        the whole set the entry then has (`model_facts`), when any of them changed."""
        changes = {
            field: self.cleaned_data[field]
            for field in self.changed_data
            if field not in self.fact_keys
        }
        if set(self.changed_data) & set(self.fact_keys):
            changes["model_facts"] = {
                key: self.cleaned_data[key]
                for key in self.fact_keys
                if self.cleaned_data.get(key) is not None
            }
        return changes
