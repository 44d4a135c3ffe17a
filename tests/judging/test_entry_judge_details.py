"""The judge's details on the public entry page (issue 12, point 5): the judging app tells the
page, through the hook it registers in `submissions.judge_step`, which model and rubric judged
a run and how many items, and nothing of its endpoint, prompts or verdicts."""

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from judging import services
from judging.models import JudgeEndpoint
from submissions.judge_step import judge_details

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def page_text(submission):
    url = reverse("submissions:entry", args=[submission.benchmark.slug, submission.pk])
    response = Client().get(url)
    assert response.status_code == 200
    content = response.content.decode()
    return content, html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", content)))


def test_a_judged_entry_says_which_model_and_rubric_judged_how_many_items(
    scored_run, judged_benchmark
):
    judged_benchmark.is_public = True
    judged_benchmark.save(update_fields=["is_public"])
    submission = scored_run.submission
    _, before = page_text(submission)
    assert "LLM judge Not judged yet." in before
    assert judge_details(scored_run) is None

    job = services.run_job(services.start_judge(scored_run, enqueue=False).pk)
    job.refresh_from_db()
    details = judge_details(scored_run)

    assert details is not None
    assert (details.model, details.rubric_version) == ("standin-judge", job.rubric_version)
    assert (details.items_judged, details.items_total, details.items_failed) == (11, 11, 0)
    content, text = page_text(submission)
    assert (
        f"Judge model standin-judge Rubric version {job.rubric_version[:12]}… "
        f"Items judged 11 of 11 Judged {job.finished_at:%Y-%m-%d}"
    ) in text
    endpoint = JudgeEndpoint.objects.get(benchmark=judged_benchmark)
    assert endpoint.base_url not in content
    assert job.items.first().prompt[:60] not in content
