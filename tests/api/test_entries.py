"""GET /api/v1/benchmarks/<slug>/entries/<id>/ (issue 33, point 5): the entry page's content under
the page's privacy (an evaluate-only entry is its owner's and the maintainers', a hidden
benchmark 404), its shape held to the schema's serializer, and `verification.source` for an
imported row. The re-run's evidence itself: tests/verifying/test_public_evidence.py."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework import serializers

from api.entries import EntrySerializer
from submissions.enums import SubmissionSource
from submissions.intervals import compute_rank_intervals
from submissions.models import BoardEntry, Submission
from tests.accounts.factories import UserFactory, maintainer_user

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def url_of(submission, slug=None):
    return reverse("api:entry", args=[slug or submission.benchmark.slug, submission.pk])


def client_of(user=None):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def entries(scored_entry, interval_benchmark):
    owner = UserFactory()
    published = scored_entry("Noisy Model", kind="noisy", seed=2).submission
    scored_entry("Perfect Model", kind="perfect", seed=1)
    secret = scored_entry("Secret Model", seed=4, owner=owner, publish=False).submission
    compute_rank_intervals(interval_benchmark)
    return {"published": published, "secret": secret, "owner": owner}


def test_a_published_entry_is_anyones_and_says_what_its_page_says(entries):
    published = entries["published"]
    row = BoardEntry.objects.get(submission=published)

    response = Client().get(url_of(published))

    assert response.status_code == 200
    assert response["Cache-Control"] == "no-cache, public"
    body = response.json()
    assert (body["submission_id"], body["model"], body["benchmark"]) == (
        published.pk,
        "Noisy Model",
        "medvidbench",
    )
    assert (body["published"], body["board"], body["imported"]) == (True, "community", False)
    assert body["rank"]["rank"] == row.rank
    assert body["rank"]["rank_interval"] == [row.rank_best, row.rank_worst]
    assert body["rank"]["out_of"] == 2
    assert body["leader"] == (
        None
        if row.rank == 1
        else {
            "submission_id": Submission.objects.get(model_name="Perfect Model").pk,
            "model": "Perfect Model",
            "rank": 1,
        }
    )
    assert body["metrics"]["CVS_acc"]["value"] == row.evaluation.metrics["CVS_acc"]
    assert body["metrics"]["CVS_acc"]["interval"] == row.intervals["CVS_acc"]
    assert body["metrics"]["DVC_llm"] | {"label": ""} == {
        "label": "",
        "value": None,
        "interval": None,
        "pending": True,
        "best": None,
        "is_best": False,
    }
    assert body["per_dataset"]["CVS_acc"] == row.evaluation.result["per_dataset"]["CVS_acc"]
    assert body["verification"] == {
        "status": "community",
        "label": "Community",
        "verified_at": None,
        "changed_at": None,
        "evidence": None,
        "source": None,
    }


def test_an_evaluate_only_entry_is_its_owners_and_the_maintainers_only(entries):
    secret = entries["secret"]

    assert client_of().get(url_of(secret)).status_code == 404
    assert client_of(UserFactory()).get(url_of(secret)).status_code == 404
    mine = client_of(entries["owner"]).get(url_of(secret))
    theirs = client_of(maintainer_user()).get(url_of(secret))
    assert (mine.status_code, theirs.status_code) == (200, 200)
    assert mine["Cache-Control"] == "no-cache, private"
    assert (mine.json()["published"], mine.json()["board"], mine.json()["rank"]) == (
        False,
        None,
        None,
    )
    assert mine.json()["verification"]["label"] == "Evaluate only"


def test_a_missing_id_another_benchmarks_entry_and_a_hidden_benchmark_404(
    entries, interval_benchmark
):
    published = entries["published"]
    other = type(interval_benchmark).objects.create(name="Other", slug="other", is_public=True)
    missing = reverse("api:entry", args=[interval_benchmark.slug, 999_999])

    assert Client().get(missing).json() == {
        "detail": "No such entry on MedVidBench.",
        "code": "not_found",
    }
    assert Client().get(url_of(published, slug=other.slug)).status_code == 404

    interval_benchmark.is_public = False
    interval_benchmark.save(update_fields=["is_public"])
    assert Client().get(url_of(published)).status_code == 404
    assert client_of(UserFactory()).get(url_of(published)).status_code == 404
    hidden = client_of(maintainer_user()).get(url_of(published))
    assert (hidden.status_code, hidden["Cache-Control"]) == (200, "no-cache, private")


def test_an_imported_row_has_no_evidence_and_says_where_its_numbers_were_published(
    interval_benchmark,
):
    call_command(
        "add_official_result",
        "--model", "GPT-4o",
        "--values", json.dumps({"CVS_acc": 0.6}),
        "--source", "MedGRPO paper, table 2",
        "--verified-at", "2026-05-15",
        stdout=StringIO(),
    )  # fmt: skip
    imported = Submission.objects.get(model_name="GPT-4o")

    body = Client().get(url_of(imported)).json()

    assert body["verification"] | {"changed_at": None} == {
        "status": "verified",
        "label": "Verified",
        "verified_at": "2026-05-15T12:00:00Z",
        "changed_at": None,
        "evidence": None,
        "source": "MedGRPO paper, table 2",
    }
    assert (body["imported"], body["board"], body["judge"]) == (True, "official", None)


def test_an_entry_evaluated_by_podium_says_so_in_its_source(entries):
    hosted = entries["published"]
    Submission.objects.filter(pk=hosted.pk).update(source=SubmissionSource.HOSTED)

    body = Client().get(url_of(hosted)).json()

    assert body["evaluated_by_podium"] is True
    assert body["verification"]["evidence"] is None
    assert body["verification"]["source"].startswith(
        "Evaluated by Podium: Podium asked the model's endpoint every test question itself"
    )


def fields_of(serializer):
    """The keys a serializer promises, nested (a dict field's child under "*")."""
    if isinstance(serializer, serializers.ListSerializer):
        return fields_of(serializer.child)
    if isinstance(serializer, serializers.DictField):
        return {"*": fields_of(serializer.child)}
    if isinstance(serializer, serializers.Serializer):
        return {name: fields_of(field) for name, field in serializer.fields.items()}
    return None


def keys_of(value, promised):
    """The keys of `value` shaped as `promised` (a dict's children under "*")."""
    if promised is None or value is None:
        return promised if value is None else None
    if isinstance(value, list):
        return keys_of(value[0], promised) if value else promised
    if set(promised) == {"*"}:
        inner = [keys_of(child, promised["*"]) for child in value.values()]
        return {"*": inner[0] if inner else promised["*"]}
    return {key: keys_of(child, promised.get(key)) for key, child in value.items()}


def test_the_body_holds_exactly_the_serializers_fields(entries):
    """The body is built as a dict (`entry_as_dict`); the schema's serializer must say the same
    keys, nested, wherever the body has a value to show them."""
    body = Client().get(url_of(entries["published"])).json()

    promised = fields_of(EntrySerializer())
    found = keys_of(body, promised)

    assert set(found) == set(promised)
    for key in ("rank", "metrics", "per_dataset", "parse_rates", "verification"):
        assert found[key] == promised[key], key
