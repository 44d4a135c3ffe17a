"""MedSG-Bench's pages in its own words (issue 14, part 2): the plugin's options on the submit
form, the status page, the API and the admin; "items" and "per task" where MedVidBench says
"samples" and "per dataset"; no judge step, caption legend or judge panel for a benchmark
without judge metrics; breakdown groups in the board's column order."""

import re
from html import unescape
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from plugins.medsg.plugin import plugin as medsg_plugin
from plugins.medsg.scoring import TASKS
from submissions.demo import load_plugin_demo
from submissions.models import Submission
from submissions.selectors import declared_options, group_order
from tests.accounts.factories import UserFactory, maintainer_user
from tests.submissions.pages import get, parse_table

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def owner():
    return UserFactory(username="medsg_owner")


@pytest.fixture
def medsg(private_dir, tmp_path, owner):
    """MedSG-Bench's demo: the synthetic test set (10 items per task), the paper's baselines
    and three scored entries of `owner`, one per box convention."""
    return load_plugin_demo(medsg_plugin, tmp_path / "medsg", user=owner, log=lambda _: None)


def entry(model_name):
    return Submission.objects.get(benchmark__slug="medsg-bench", model_name=model_name)


GEMLIKE = "GemLike (synthetic, y-x order)"
YXYX_TEXT = "yxyx_norm1000: Gemini's [y_min, x_min, y_max, x_max] on 0-1000"
ZERO_SHOT_TEXT = (
    "I declare these predictions were made zero-shot: no in-context examples and no "
    "fine-tuning on MedSG-Bench."
)


def text_of(html):
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_declared_options_in_the_plugins_order_with_their_words(medsg):
    lines = declared_options(entry(GEMLIKE))
    assert [(line.key, line.label, line.value, line.text) for line in lines] == [
        ("box_format", "Box convention", "yxyx_norm1000", YXYX_TEXT),
        ("zero_shot", "Zero-shot protocol", "declared", ZERO_SHOT_TEXT),
    ]
    assert [line.is_declaration for line in lines] == [False, True]


def test_group_order_puts_the_metrics_tasks_in_column_order_then_the_rest_alphabetically():
    metrics = [SimpleNamespace(task=task) for task in ("overall", "patch", "concept", "patch")]
    assert group_order({"zeta", "concept", "Alpha", "patch"}, metrics) == [
        "patch",
        "concept",
        "Alpha",
        "zeta",
    ]


def test_status_page_in_medsg_words_with_the_declared_options(client, medsg, owner):
    client.force_login(owner)
    html = get(client, reverse("submissions:detail", args=[entry(GEMLIKE).pk]))
    text = text_of(html)
    assert f"Box convention {YXYX_TEXT}" in text
    assert f"Zero-shot protocol declared: {ZERO_SHOT_TEXT}" in text
    # No judge step: the run went from Scoring to Complete.
    steps = re.findall(r'<li class="step (\w+)"[^>]*>([^<]+)</li>', html)
    assert steps == [
        ("done", "Received"),
        ("done", "Queued"),
        ("done", "Scoring"),
        ("done", "Complete"),
    ]
    assert "the test set's items resampled 1000 times." in text
    assert "videos" not in text
    assert "caption" not in text
    # The overall values are over the 80 items, a task's column over its 10.
    metrics = parse_table(html, "result").rows
    scored = {row[0][1].split()[0]: row[-1][1] for row in metrics[1:]}
    assert scored["IoU"] == "80 / 80 items"
    assert scored["IoU_patch"] == "10 / 10 items"
    # Per task, in the benchmark's task order (not the stored JSON's).
    assert "<h3>Per task</h3>" in html
    per_task = parse_table(html, "per-dataset").rows
    assert [cell for _, cell in per_task[0]] == ["Task", "IoU", "ACC@0.5"]
    assert [row[0][1] for row in per_task[1:]] == list(TASKS)
    assert [row[0][1] for row in parse_table(html, "formats").rows[1:]] == list(TASKS)


def test_entry_page_says_per_task_and_has_no_judge_panel(client, medsg):
    submission = entry(GEMLIKE)
    html = get(client, reverse("submissions:entry", args=["medsg-bench", submission.pk]))
    assert '<h2 id="datasets-heading">Per task</h2>' in html
    assert "Each metric on each task" in html
    assert "LLM judge" not in html
    assert "bootstrap over the test set's items." in text_of(html)
    header = parse_table(html, "per-dataset").rows[0]
    assert [cell for _, cell in header] == ["Metric", *TASKS]


def test_board_legend_says_no_caption_metric_without_a_judge(client, medsg):
    html = get(client, reverse("submissions:community", args=["medsg-bench"]))
    assert "caption metric" not in html
    assert "whole videos" not in html
    assert "the paper), dated as published there" in text_of(html)


def test_submit_form_asks_for_the_box_convention_before_the_file_and_the_declaration_after(
    client, medsg, owner
):
    client.force_login(owner)
    html = get(client, reverse("submissions:submit", args=["medsg-bench"]))
    names = re.findall(r'<(?:input|select)[^>]*name="(\w+)"', html)
    assert names.index("box_format") < names.index("predictions") < names.index("zero_shot")
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>', html)
    assert options[0] == ("", "Choose…")
    assert [value for value, _ in options[1:]] == ["pixel", "norm1000", "unit", "yxyx_norm1000"]
    assert "JSON: one {index, task, prediction} object per test item, in test-set order." in html
    assert "How your boxes are written." in html


def test_submit_without_a_box_convention_is_a_field_error(client, medsg, owner, tmp_path):
    client.force_login(owner)
    predictions = (tmp_path / "medsg" / "predictions_norm1000_noisy.json").read_bytes()
    before = Submission.objects.count()
    response = client.post(
        reverse("submissions:submit", args=["medsg-bench"]),
        {
            "model_name": "No Box Model",
            "institution": "Lab",
            "contact_email": "lab@example.org",
            "model_url": "https://example.org/m",
            "zero_shot": "on",
            "predictions": SimpleUploadedFile("p.json", predictions, "application/json"),
        },
    )
    assert response.status_code == 200
    assert response.context["form"].errors["box_format"] == ["This field is required."]
    assert Submission.objects.count() == before


def test_api_submission_detail_has_the_declared_options(client, medsg, owner):
    client.force_login(owner)
    submission = entry(GEMLIKE)
    response = client.get(reverse("api:submission-detail", args=[submission.pk]))
    assert response.status_code == 200
    body = response.json()
    assert body["options"] == {"box_format": "yxyx_norm1000", "zero_shot": "declared"}
    assert body["declared"] == [
        {
            "key": "box_format",
            "label": "Box convention",
            "value": "yxyx_norm1000",
            "text": YXYX_TEXT,
        },
        {
            "key": "zero_shot",
            "label": "Zero-shot protocol",
            "value": "declared",
            "text": ZERO_SHOT_TEXT,
        },
    ]


def test_admin_submission_page_shows_the_declared_options_and_the_per_task_table(client, medsg):
    client.force_login(maintainer_user(username="medsg_maintainer"))
    submission = entry(GEMLIKE)
    page = get(client, reverse("admin:submissions_submission_change", args=[submission.pk]))
    text = text_of(page)
    assert "Declared with the file" in text
    assert f"Box convention yxyx_norm1000 {YXYX_TEXT}" in text
    assert f"Zero-shot protocol declared {ZERO_SHOT_TEXT}" in text
    assert "Task IoU ACC@0.5 Registered_Diff" in text


def test_compare_page_speaks_of_items_and_tasks(client, medsg):
    a, b = entry(GEMLIKE), entry("GroundDemo-7B (synthetic)")
    html = get(client, f"/b/medsg-bench/compare/?a={a.pk}&b={b.pk}")
    text = text_of(html)

    assert "paired bootstrap over the test set's items (both entries resampled" in text
    assert "<h3>Per task</h3>" in html
    assert "Per metric and task: A, B and A \N{MINUS SIGN} B" in text
    tasks = [row[1][1] for row in parse_table(html, "compare-datasets").rows[1:]]
    assert tasks[: len(TASKS)] == list(TASKS)  # IoU's row per task, in the benchmark's order
    assert "video" not in text
    assert "Per dataset" not in text
