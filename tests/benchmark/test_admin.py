"""The admin edits through the services: every change audited, no state edited by hand."""

import json

import pytest
from django.urls import reverse

from benchmark.models import TestSet
from benchmark.services import ensure_plugin_benchmark
from core.models import AuditEvent
from tests.benchmark.factories import BenchmarkFactory, TestSetFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

BENCHMARK_FIELDS = [
    "name",
    "description",
    "is_public",
    "about",
    "citation",
    "licence",
    "tie_method",
    "ranking_scope",
    "ranking_decimals",
    "ranking_method",
    "ranking_order",
    "daily_submission_limit",
    "max_upload_mb",
    "max_prediction_chars",
    "bootstrap_replicates",
    "judge_rubric",
    "judge_settings",
    "judge_auto_start",
    "verification_tolerance",
    "rerun_max_frames",
]


def change_form_data(benchmark, **changes) -> dict[str, str]:
    """What the benchmark's change form posts when only ``changes`` are edited."""
    data = {}
    for name in BENCHMARK_FIELDS:
        value = changes.get(name, getattr(benchmark, name))
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif isinstance(value, dict | list):
            data[name] = json.dumps(value)
        else:
            data[name] = "" if value is None else str(value)
    metrics = list(benchmark.metrics.all())
    data |= {
        "metrics-TOTAL_FORMS": str(len(metrics)),
        "metrics-INITIAL_FORMS": str(len(metrics)),
        "metrics-MIN_NUM_FORMS": "0",
        "metrics-MAX_NUM_FORMS": "1000",
    }
    for index, metric in enumerate(metrics):
        label = changes.get(f"label:{metric.key}", metric.label)
        data |= {
            f"metrics-{index}-id": str(metric.pk),
            f"metrics-{index}-benchmark": str(benchmark.pk),
            f"metrics-{index}-label": label,
            f"metrics-{index}-display_decimals": str(metric.display_decimals),
            f"metrics-{index}-description": metric.description,
        }
    return data


def test_editing_a_benchmark_goes_through_the_service(admin_client, admin_user):
    benchmark = ensure_plugin_benchmark("medvidbench")
    AuditEvent.objects.all().delete()
    url = reverse("admin:benchmark_benchmark_change", args=[benchmark.pk])

    response = admin_client.post(
        url, change_form_data(benchmark, tie_method="dense", **{"label:CVS_acc": "CVS"})
    )

    assert response.status_code == 302
    benchmark.refresh_from_db()
    assert benchmark.tie_method == "dense"
    assert benchmark.metrics.get(key="CVS_acc").label == "CVS"
    assert [(e.action, e.actor, e.data["changes"]) for e in AuditEvent.objects.order_by("id")] == [
        ("benchmark.benchmark.updated", admin_user, {"tie_method": {"from": "min", "to": "dense"}}),
        (
            "benchmark.metric.updated",
            admin_user,
            {"label": {"from": "CVS assessment accuracy", "to": "CVS"}},
        ),
    ]


def test_a_browsers_crlf_line_ends_leave_the_texts_unchanged(admin_client):
    benchmark = ensure_plugin_benchmark("medvidbench")
    rubric = benchmark.judge_rubric
    AuditEvent.objects.all().delete()
    crlf = {name: getattr(benchmark, name).replace("\n", "\r\n") for name in ("about", "citation")}

    admin_client.post(
        reverse("admin:benchmark_benchmark_change", args=[benchmark.pk]),
        change_form_data(benchmark, judge_rubric=rubric.replace("\n", "\r\n"), **crlf),
    )

    benchmark.refresh_from_db()
    assert benchmark.judge_rubric == rubric
    assert benchmark.judge_rubric.endswith("R4: 5\n")
    assert AuditEvent.objects.count() == 0


def test_benchmarks_cannot_be_added_or_deleted_in_the_admin(admin_client):
    benchmark = BenchmarkFactory()

    assert admin_client.get(reverse("admin:benchmark_benchmark_add")).status_code == 403
    delete_url = reverse("admin:benchmark_benchmark_delete", args=[benchmark.pk])
    assert admin_client.get(delete_url).status_code == 403


def test_make_active_calls_the_service(admin_client, admin_user):
    benchmark = BenchmarkFactory()
    old = TestSetFactory(benchmark=benchmark, version=1, is_active=True)
    new = TestSetFactory(benchmark=benchmark, version=2)

    response = admin_client.post(
        reverse("admin:benchmark_testset_changelist"),
        {"action": "make_active", "_selected_action": [str(new.pk)]},
    )

    assert response.status_code == 302
    assert list(TestSet.objects.filter(is_active=True)) == [new]
    (event,) = AuditEvent.objects.all()
    assert (event.action, event.actor, event.target, event.data) == (
        "benchmark.testset.activated",
        admin_user,
        new,
        {"from": old.version, "to": new.version, "note": "admin action"},
    )


def test_make_active_needs_exactly_one_test_set(admin_client):
    benchmark = BenchmarkFactory()
    test_sets = TestSetFactory.create_batch(2, benchmark=benchmark)

    admin_client.post(
        reverse("admin:benchmark_testset_changelist"),
        {"action": "make_active", "_selected_action": [str(t.pk) for t in test_sets]},
    )

    assert TestSet.objects.filter(is_active=True).count() == 0
    assert AuditEvent.objects.count() == 0


def test_a_test_set_is_read_only_in_the_admin(admin_client):
    test_set = TestSetFactory()
    url = reverse("admin:benchmark_testset_change", args=[test_set.pk])

    response = admin_client.post(url, {"is_active": "on", "file_name": "../../etc/passwd"})

    assert response.status_code == 403
    test_set.refresh_from_db()
    assert (
        test_set.is_active,
        test_set.file_name.startswith(f"testsets/{test_set.benchmark.slug}/"),
    ) == (
        False,
        True,
    )
    assert admin_client.get(reverse("admin:benchmark_testset_add")).status_code == 403


def test_the_audit_trail_is_read_only_in_the_admin(admin_client):
    ensure_plugin_benchmark("medvidbench")
    event = AuditEvent.objects.get()

    assert admin_client.get(reverse("admin:core_auditevent_changelist")).status_code == 200
    change_url = reverse("admin:core_auditevent_change", args=[event.pk])
    assert admin_client.get(change_url).status_code == 200
    assert admin_client.post(change_url, {"action": "x.y.z"}).status_code == 403
    assert admin_client.get(reverse("admin:core_auditevent_add")).status_code == 403
