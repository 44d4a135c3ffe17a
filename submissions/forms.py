"""The submission form: the official fields (spec 8) and the predictions file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.core.files.uploadedfile import UploadedFile

from benchmark.facts import FACTS, MAX_LICENCE_CHARS, FactDefinition, FactError, clean_fact
from benchmark.models import Benchmark
from benchmark.plugins import SubmissionOption, plugin_for
from benchmark.selectors import active_testset, load_scoring_testset
from core.exceptions import DomainError, InvalidName, InvalidPredictions

from .names import clean_name, max_length, refuse_published_lookalike
from .selectors.file_format import row_fields
from .services import SubmissionDetails, check_upload_size, validate_predictions


@dataclass(frozen=True)
class FileRefusal:
    """Why the predictions file was refused, as the page says it: the first problems in people's
    wording (`problem_lines`) and how many there are in all."""

    lines: list[str]
    total: int

    @property
    def count(self) -> str:
        """ "37 problems; the first 10", "3 problems", "1 problem"."""
        noun = "problem" if self.total == 1 else "problems"
        if self.total > len(self.lines):
            return f"{self.total:,} {noun}; the first {len(self.lines)}"
        return f"{self.total:,} {noun}"

    @property
    def more(self) -> int:
        return self.total - len(self.lines)


def problem_lines(problems: list[dict], label: Callable[[int], str]) -> list[str]:
    """The plugin's problems (`InvalidPredictions.problems`, rows 0-based as in the API) in the
    web form's wording: a row counted from 1, as people (and editors) count, with what the test
    set holds at that position (`label`: the plugin's `row_label`), then the field at fault.
    "row 12 (id 'v3_0011'), field 'qa_type': expected 'tal' at this position, got 'stg'"."""
    lines = []
    for problem in problems:
        where = []
        row = problem["row"]
        if row is not None:
            where.append(f"row {row + 1:,}")
            if shown := label(row):
                where[-1] += f" ({shown})"
        if problem["field"]:
            where.append(f"field '{problem['field']}'")
        message = problem["message"]
        lines.append(f"{', '.join(where)}: {message}" if where else message)
    return lines


def option_field(option: SubmissionOption) -> forms.Field:
    """The form field of a plugin's submission option: a select (with nothing chosen first,
    so nobody submits the first convention by accident) or a box to tick."""
    if option.kind == "declaration":
        return forms.BooleanField(
            label=option.statement,
            help_text=option.help_text,
            required=option.required,
            error_messages={"required": f"Declare the {option.label.lower()} to submit here."},
        )
    return forms.ChoiceField(
        label=option.label,
        help_text=option.help_text,
        choices=[("", "Choose…"), *option.choices],
        required=option.required,
    )


class FactField(forms.Field):
    """A model fact (issue 15, `benchmark.facts`): a select for a choice, a number box for the
    parameters, a text box for the licence; cleaned and refused by `clean_fact`, so the form,
    the API and the writer name the fact and what it takes in the same words (a missing
    required fact too: `to_python` refuses it before Django's own "This field is required.",
    which would not say what it takes, is reached). A required fact is `required`, so its
    label carries the required mark and its input the attribute (`{% field_label %}`); an
    optional one says so in its label."""

    def __init__(self, definition: FactDefinition, **kwargs: Any) -> None:
        self.definition = definition
        if definition.kind == "choice":
            widget: forms.Widget = forms.Select(choices=[("", "Choose…"), *definition.choices])
        elif definition.kind == "number":
            widget = forms.NumberInput(attrs={"step": "any", "min": "0", "inputmode": "decimal"})
        else:
            widget = forms.TextInput(attrs={"maxlength": str(MAX_LICENCE_CHARS)})
        label = definition.label
        if definition.kind == "number":
            label = f"{label} (billions)"
        if not definition.required:
            label = f"{label}, optional"
        super().__init__(
            label=label,
            help_text=definition.help_text,
            required=definition.required,
            widget=widget,
            **kwargs,
        )

    def prepare_value(self, value: Any) -> Any:
        """A stored parameter count as its box shows it: "7" for 7.0, every digit kept
        otherwise (a re-save stores the same number)."""
        if self.definition.kind == "number" and type(value) is float:
            text = repr(value)
            return text.removesuffix(".0")
        return value

    def to_python(self, value: Any) -> Any:
        try:
            return clean_fact(self.definition.key, value)
        except FactError as error:
            raise forms.ValidationError(str(error), code="invalid_fact") from None


def fact_fields(benchmark: Benchmark) -> dict[str, FactField]:
    """The form fields of the model facts `benchmark` asks for, in the vocabulary's order."""
    return {key: FactField(FACTS[key]) for key in benchmark.fact_keys}


def chosen_facts(cleaned_data: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """The facts given, as the writers take them (an empty optional one left out)."""
    return {key: cleaned_data[key] for key in keys if cleaned_data.get(key) is not None}


class NameField(forms.CharField):
    """A display name (`submissions.names`): normalised (NFKC, spaces) as the writer stores
    it, and refused with the writer's message for an invisible, control or bidi character or
    a length over the model field's, counted once normalised."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.field_name = name
        # The max length's validator runs after `to_python`, on a value already within it: it
        # is here for the browser's `maxlength` (a hint; the limit is the normalised one).
        super().__init__(max_length=max_length(name), **kwargs)

    def to_python(self, value: Any) -> str:
        text = super().to_python(value)
        try:
            return clean_name(self.field_name, text)
        except InvalidName as error:
            raise forms.ValidationError(str(error), code="invalid_name") from None


class SubmissionForm(forms.Form):
    """All the synchronous checks, so one round trip lists every problem: required fields,
    the names (`NameField`), URLs, the challenge entry's team, a published model name in use
    or looked like, and the file (its size before it is read into memory, then JSON and every
    row against the test set, by `validate_predictions`, with the rows named).
    `create_submission` checks again under its lock (a name can be taken meanwhile) and the
    view adds its refusals to the form."""

    model_name = NameField(
        "model_name", help_text="Shown on the board; unique per benchmark, look-alikes included."
    )
    institution = NameField("institution")
    # The columns' lengths (Submission): a longer value would fail in the database.
    contact_email = forms.EmailField(max_length=254, help_text="Never shown publicly.")
    model_url = forms.URLField(
        max_length=200, label="Model URL", help_text="Where the model can be found."
    )
    paper_url = forms.URLField(max_length=200, label="Paper URL", required=False)
    code_url = forms.URLField(max_length=200, label="Code URL", required=False)
    is_challenge_entry = forms.BooleanField(label="This is a challenge entry", required=False)
    team_name = NameField("team_name", required=False, help_text="For challenge entries.")
    authors = NameField(
        "authors", required=False, help_text="For challenge entries; separated by commas."
    )
    evaluate_only = forms.BooleanField(
        label="Evaluate only, don't publish",
        required=False,
        help_text="The result is shown to you alone, with the rank it would have.",
    )
    predictions = forms.FileField(
        label="Predictions file",
        # Said in the benchmark's words in __init__ (its rows' fields, "sample" or "item").
        help_text="JSON: one object per test sample, in test-set order.",
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )

    def __init__(self, *args: Any, benchmark: Benchmark, **kwargs: Any) -> None:
        super().__init__(*args, label_suffix="", **kwargs)
        self.benchmark = benchmark
        self._predictions = b""
        # The benchmark plugin's options (MedSG-Bench's box convention and zero-shot
        # declaration), before the file: the file is checked with them.
        self.option_keys = []
        fields = {}
        for option in plugin_for(benchmark).submission_options:
            fields[option.key] = option_field(option)
            self.option_keys.append(option.key)
        if fields:
            ordered = {name: field for name, field in self.fields.items() if name != "predictions"}
            self.fields = {**ordered, **fields, "predictions": self.fields["predictions"]}
        # The model facts the benchmark asks for (issue 15), after the model's details.
        facts = fact_fields(benchmark)
        self.fact_keys = list(facts)
        if facts:
            self.fields = {**self.fields, **facts}
        item, row = benchmark.wording.item, row_fields(benchmark)
        shape = f"{{{', '.join(row)}}} object" if row else "object"
        self.fields[
            "predictions"
        ].help_text = f"JSON: one {shape} per test {item}, in test-set order."
        # Set when the file was refused row by row: the summary at the top of the page.
        self.file_refusal: FileRefusal | None = None

    def option_fields(self, kind: str) -> list[forms.BoundField]:
        """The bound fields of the plugin's options of one kind ("choice": MedSG-Bench's box
        convention, shown before the file it describes; "declaration": its zero-shot
        statement, ticked after choosing the file), in the plugin's order."""
        kinds = {
            option.key: option.kind for option in plugin_for(self.benchmark).submission_options
        }
        return [self[key] for key in self.option_keys if kinds[key] == kind]

    @property
    def fact_bound_fields(self) -> list[forms.BoundField]:
        """The bound fields of the model facts, in the vocabulary's order."""
        return [self[key] for key in self.fact_keys]

    @property
    def choice_options(self) -> list[forms.BoundField]:
        return self.option_fields("choice")

    @property
    def declaration_options(self) -> list[forms.BoundField]:
        return self.option_fields("declaration")

    def clean_predictions(self) -> UploadedFile:
        upload: UploadedFile = self.cleaned_data["predictions"]
        try:
            check_upload_size(self.benchmark, upload.size or 0)
            upload.seek(0)
            self._predictions = upload.read()
            validate_predictions(self.benchmark, self._predictions, self._options())
        except InvalidPredictions as error:
            raise forms.ValidationError(self._refusal_messages(error)) from None
        except DomainError as error:  # no active test set: submissions are closed
            raise forms.ValidationError(str(error)) from None
        return upload

    def refuse_predictions(self, error: InvalidPredictions) -> None:
        """Add the file's refusal to the form (the view's, when `create_submission` refuses
        a file the form passed: the test set changed meanwhile)."""
        self.add_error("predictions", self._refusal_messages(error))

    def _refusal_messages(self, error: InvalidPredictions) -> list[str]:
        test_set = active_testset(self.benchmark)
        parsed = load_scoring_testset(test_set) if test_set is not None else None
        plugin = plugin_for(self.benchmark)

        def label(row: int) -> str:
            return plugin.row_label(parsed, row) if parsed is not None else ""

        self.file_refusal = FileRefusal(problem_lines(error.problems, label), error.total)
        messages = list(self.file_refusal.lines)
        if self.file_refusal.more > 0:
            messages.append(
                f"... and {self.file_refusal.more:,} more not listed; fix these and check again."
            )
        return messages

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("is_challenge_entry"):
            for name in ("team_name", "authors"):
                if not cleaned.get(name) and name not in self.errors:  # refused: said so
                    self.add_error(name, "A challenge entry needs its team name and authors.")
        name = cleaned.get("model_name")
        if name and not cleaned.get("evaluate_only"):
            try:
                refuse_published_lookalike(self.benchmark, name)
            except InvalidName as error:
                self.add_error("model_name", str(error))
        return cleaned

    def _options(self) -> dict[str, str]:
        """The options as the service takes them: a ticked declaration as its one value."""
        chosen = {}
        for option in plugin_for(self.benchmark).submission_options:
            value = self.cleaned_data.get(option.key)
            if option.kind == "declaration":
                value = option.values[0] if value else ""
            if value:
                chosen[option.key] = value
        return chosen

    def details(self) -> SubmissionDetails:
        data = self.cleaned_data
        return SubmissionDetails(
            options=self._options(),
            model_facts=chosen_facts(data, self.fact_keys),
            model_name=data["model_name"],
            institution=data["institution"],
            contact_email=data["contact_email"],
            model_url=data["model_url"],
            paper_url=data["paper_url"],
            code_url=data["code_url"],
            is_challenge_entry=data["is_challenge_entry"],
            team_name=data["team_name"] if data["is_challenge_entry"] else "",
            authors=data["authors"] if data["is_challenge_entry"] else "",
            publish=not data["evaluate_only"],
        )

    def predictions_bytes(self) -> bytes:
        """The uploaded file's content, read once by `clean_predictions`."""
        return self._predictions


class CompareForm(forms.Form):
    """The compare page's two selects (a GET form): any two different entries among those the
    viewer may compare (`selectors.comparable_entries`). An id that is not among them, absent
    or hidden alike, gets the same message, so the form never confirms a hidden entry."""

    INVALID = "There is no entry #%(value)s on this benchmark that you can compare. Pick one from the list."

    a = forms.TypedChoiceField(
        label="Entry A",
        coerce=int,
        error_messages={"required": "Pick entry A.", "invalid_choice": INVALID},
    )
    b = forms.TypedChoiceField(
        label="Entry B",
        coerce=int,
        error_messages={"required": "Pick entry B.", "invalid_choice": INVALID},
    )

    def __init__(self, *args: Any, entries: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "— pick an entry —")] + [
            (str(entry.submission_id), entry.label) for entry in entries
        ]
        self.fields["a"].choices = choices
        self.fields["b"].choices = choices

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("a") is not None and cleaned.get("a") == cleaned.get("b"):
            raise forms.ValidationError(
                "Pick two different entries: an entry compared with itself differs by 0.",
                code="same_entry",
            )
        return cleaned
