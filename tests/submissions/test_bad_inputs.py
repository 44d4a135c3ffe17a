"""The bad-input battery (issue 11): every case in `tests/submissions/bad_inputs` is refused by
the web form and by the API with its exact message, never a 500, and writes nothing: no
Submission, no Evaluation, no audit row, no file under the private predictions folder."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from benchmark.selectors import active_testset, load_scoring_testset
from core.models import AuditEvent
from submissions.models import Evaluation, Submission
from tests.accounts.factories import UserFactory
from tests.submissions.bad_inputs import VALID_FIELDS, BadInput, valid
from tests.submissions.bad_inputs import fields as field_cases
from tests.submissions.bad_inputs import files as file_cases

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ALL_CASES: list[BadInput] = [*file_cases.CASES, *field_cases.CASES]
CASE_PARAMS = [pytest.param(case, id=case.id) for case in ALL_CASES]

_ERROR_LIST = re.compile(
    r'<ul class="errorlist(?: nonfield)?"(?: id="id_(?P<field>\w+)_error")?>(?P<items>.*?)</ul>',
    re.DOTALL,
)
_ITEM = re.compile(r"<li>(.*?)</li>", re.DOTALL)


def test_the_battery_holds_at_least_70_distinct_cases():
    ids = [case.id for case in ALL_CASES]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    assert len(ids) >= 70


@pytest.fixture
def rows(benchmark, perfect_predictions):
    import json

    return json.loads(perfect_predictions)


@pytest.fixture
def context(benchmark):
    samples = load_scoring_testset(active_testset(benchmark)).samples
    return {
        **{f"id{n}": sample.id for n, sample in enumerate(samples)},
        **{f"qa_type{n}": sample.qa_type for n, sample in enumerate(samples)},
    }


def _prepare(case: BadInput, benchmark, rows) -> bytes | None:
    for name, value in case.benchmark.items():
        setattr(benchmark, name, value)
    if case.benchmark:
        benchmark.save(update_fields=list(case.benchmark))
    return None if case.build is None else case.build(rows)


def _fields(base: dict[str, str], overrides) -> dict[str, str]:
    data = dict(base)
    for name, value in overrides.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    return data


def _written() -> tuple[int, int, int, list[Path]]:
    folder = Path(settings.PODIUM_PRIVATE_DIR) / "predictions"
    files = sorted(folder.rglob("*")) if folder.exists() else []
    return (
        Submission.objects.count(),
        Evaluation.objects.count(),
        AuditEvent.objects.count(),
        files,
    )


def rendered_errors(content: str) -> dict[str, list[str]]:
    """{field: [messages]} as the page shows them ("__all__" for the form's own)."""
    errors: dict[str, list[str]] = {}
    for match in _ERROR_LIST.finditer(content):
        items = [html.unescape(item) for item in _ITEM.findall(match["items"])]
        errors.setdefault(match["field"] or "__all__", []).extend(items)
    return errors


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_the_web_form_refuses_it_and_writes_nothing(client, benchmark, rows, context, case):
    content = _prepare(case, benchmark, rows)
    client.force_login(UserFactory())
    data = _fields(VALID_FIELDS, case.fields)
    if content is not None:
        data["predictions"] = SimpleUploadedFile("predictions.json", content)
    before = _written()

    response = client.post(reverse("submissions:submit", args=[benchmark.slug]), data)

    assert response.status_code == 200  # the form again, with its errors
    assert rendered_errors(response.content.decode()) == case.expected_web_errors(context)
    assert _written() == before


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_the_api_refuses_it_and_writes_nothing(benchmark, rows, context, case):
    content = _prepare(case, benchmark, rows)
    _, token = create_api_token(UserFactory(), name="battery")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    overrides = case.fields if case.api_fields is None else case.api_fields
    data = _fields(VALID_FIELDS, overrides)
    if content is not None:
        data["predictions"] = SimpleUploadedFile("predictions.json", content)
    before = _written()

    response = api.post(reverse("api:submit", args=[benchmark.slug]), data, format="multipart")

    assert response.status_code == case.api_status
    assert response["Content-Type"] == "application/json"
    assert response.json() == case.expected_api_body(context)
    assert _written() == before


def test_the_valid_file_is_accepted_through_both_channels(client, benchmark, rows):
    """The control: the battery's base file and fields are valid, so each case's refusal is
    its own change's."""
    user = UserFactory()  # one person: the same file from another account would be a copy
    client.force_login(user)
    web = client.post(
        reverse("submissions:submit", args=[benchmark.slug]),
        {**VALID_FIELDS, "predictions": SimpleUploadedFile("p.json", valid(rows))},
    )
    _, token = create_api_token(user, name="battery")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    by_api = api.post(
        reverse("api:submit", args=[benchmark.slug]),
        {
            **VALID_FIELDS,
            "model_name": "Battery Model 2",
            "predictions": SimpleUploadedFile("p.json", valid(rows)),
        },
        format="multipart",
    )

    assert (web.status_code, by_api.status_code) == (302, 201)
    assert Submission.objects.count() == 2
