"""The submit page and About (issue 13, points 2 and 3): a refused file's summary at the top of
the page, with the count, rows counted from 1 with their ids, and a link to the field; the
"Your file" section (an example row, the qa_type strings the checker accepts, how rows are
matched); and the predictions template, every id and qa_type of the active test set in order."""

import json
import re
from html import unescape

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmark.selectors import active_testset, clear_parsed_testsets, load_scoring_testset
from benchmark.services import import_testset, update_benchmark
from core import private_files
from plugins.medvidbench.scoring.submission import UNKNOWN_FIELD_MESSAGE
from submissions import services
from submissions.models import Submission
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory, write_ground_truth
from tests.submissions.pages import required_marks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FORM = {
    "model_name": "Refused Model",
    "institution": "Refusal Lab",
    "contact_email": "rita@example.org",
    "model_url": "https://example.org/refused",
    "paper_url": "https://example.org/paper",
}
EXTRA_KEYS = 9  # unknown keys in each of the first four rows: 36 problems; a wrong id: 37


def refused_file(perfect_predictions: bytes) -> bytes:
    """The perfect file with nine unknown keys in each of rows 1-4 and a wrong id in row 5:
    37 problems (the browser test uses it too)."""
    rows = json.loads(perfect_predictions)
    for row in rows[:4]:
        row.update({f"extra_{number}": "" for number in range(EXTRA_KEYS)})
    rows[4]["id"] = "not-the-id"
    return json.dumps(rows).encode()


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


@pytest.fixture
def samples(benchmark):
    return load_scoring_testset(active_testset(benchmark)).samples


@pytest.fixture
def submitter(client):
    user = UserFactory()
    client.force_login(user)
    return user


def post(client, predictions, **fields):
    upload = SimpleUploadedFile("predictions.json", predictions, content_type="application/json")
    return client.post("/b/medvidbench/submit/", {**FORM, **fields, "predictions": upload})


def summary(content: str) -> str:
    match = re.search(r'<div class="form-summary".*?</div>', content, re.S)
    assert match, "no summary on the page"
    return match.group(0)


def texts(html: str, tag: str, css_class: str) -> list[str]:
    """The text of each item of the list <tag class="css_class">, tags removed."""
    block = re.search(rf'<{tag} class="{css_class}"[^>]*>(.*?)</{tag}>', html, re.S)
    assert block, f"no <{tag} class={css_class}>"
    items = re.findall(r"<li>(.*?)</li>", block.group(1), re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", item)).split()) for item in items]


# --- a refused file ------------------------------------------------------------------------------


def test_a_refused_file_is_summed_up_at_the_top_with_its_count_and_a_link(
    client, submitter, samples, perfect_predictions
):
    response = post(client, refused_file(perfect_predictions))

    content = response.content.decode()
    assert response.status_code == 200
    assert Submission.objects.count() == 0
    top = summary(content)
    # First thing under the heading: before the lead, the quota and the form.
    assert content.index('<div class="form-summary"') < content.index('<p class="lead">')
    assert content.index('<div class="form-summary"') < content.index('<form method="post" enctype')
    opening = top.split(">", 1)[0]
    for attribute in ('role="alert"', 'tabindex="-1"', "autofocus", 'id="form-summary"'):
        assert attribute in opening
    assert '<strong class="problem-count">37 problems; the first 10</strong>' in top
    assert '<a href="#id_predictions">Predictions file</a>' in top
    assert "... and 27 more." in top
    # Rows as people count them, each with the test set's id at that position.
    first = f"row 1 (id {samples[0].id!r})"
    second = f"row 2 (id {samples[1].id!r})"
    expected = [f"{first}, field 'extra_{n}': {UNKNOWN_FIELD_MESSAGE}" for n in range(9)]
    expected.append(f"{second}, field 'extra_0': {UNKNOWN_FIELD_MESSAGE}")
    assert texts(top, "ol", "summary-problems") == expected
    # The same lines under the field, which the file input names as its description (the id
    # Django's aria-describedby gives it), and the rest counted.
    assert re.search(
        r'<input type="file"[^>]* aria-describedby="[^"]*\bid_predictions_error"', content
    )
    under = re.search(r'<ul class="errorlist" id="id_predictions_error">.*?</ul>', content, re.S)
    assert under
    assert texts(under.group(0).replace(' id="id_predictions_error"', ""), "ul", "errorlist") == [
        *expected,
        "... and 27 more not listed; fix these and check again.",
    ]


def test_the_other_fields_keep_their_values_and_the_file_field_asks_for_the_file_again(
    client, submitter, perfect_predictions
):
    content = post(client, refused_file(perfect_predictions)).content.decode()

    for name, value in FORM.items():
        assert re.search(rf'<input [^>]*name="{name}" value="{re.escape(value)}"', content), name
    # A browser drops the chosen file: said next to the input, and in the summary.
    assert (
        '<p class="field-note" id="id_predictions_note">A browser cannot keep a chosen file after '
        "the page reloads: choose the file again.</p>"
    ) in content
    assert "choose the predictions file again before you resubmit" in summary(content)


def test_a_file_with_one_problem_says_so_without_the_first_n(
    client, submitter, samples, perfect_predictions
):
    rows = json.loads(perfect_predictions)
    rows[3]["qa_type"] = "tal"

    top = summary(post(client, json.dumps(rows).encode()).content.decode())

    assert '<strong class="problem-count">1 problem</strong>' in top
    assert texts(top, "ol", "summary-problems") == [
        f"row 4 (id {samples[3].id!r}), field 'qa_type': "
        "expected 'cvs_assessment' at this position, got 'tal'"
    ]
    assert "more." not in top


def test_a_file_level_problem_has_no_row(client, submitter, perfect_predictions):
    rows = json.loads(perfect_predictions)

    top = summary(post(client, json.dumps(rows[:0]).encode()).content.decode())

    assert texts(top, "ol", "summary-problems") == [
        "expected 5 rows, one per test sample in test-set order, got 0"
    ]


def test_other_fields_errors_are_in_the_summary_with_links(client, submitter, perfect_predictions):
    content = post(client, perfect_predictions, model_url="not a url").content.decode()

    assert texts(summary(content), "ul", "summary-fields") == ["Model URL: Enter a valid URL."]
    assert '<a href="#id_model_url">Model URL</a>' in summary(content)
    assert Submission.objects.count() == 0


def test_a_page_without_errors_has_no_summary(client, submitter):
    content = client.get("/b/medvidbench/submit/").content.decode()

    assert "form-summary" not in content
    assert "field-note" not in content


def test_the_required_fields_are_marked_and_the_mark_explained(client, benchmark, submitter):
    # Issue 32, point 10: the label's mark, the input's `required`, the line saying what it means.
    marked, required, legend = required_marks(client.get("/b/medvidbench/submit/").content.decode())

    assert (
        marked
        == required
        == [
            "id_model_name",
            "id_institution",
            "id_contact_email",
            "id_model_url",
            "id_predictions",
        ]
    )
    assert legend


def test_the_api_keeps_its_0_based_rows(benchmark, submitter, samples, perfect_predictions):
    """The web says "row 4 (id ...)", the API's `problems` keep the position in the list."""
    rows = json.loads(perfect_predictions)
    rows[3]["qa_type"] = "tal"

    with pytest.raises(services.InvalidPredictions) as refused:
        services.validate_predictions(benchmark, json.dumps(rows).encode())

    assert [(p["row"], p["field"]) for p in refused.value.problems] == [(3, "qa_type")]


# --- "Your file" and the template -----------------------------------------------------------------


def test_submit_and_about_show_the_file_format_and_the_accepted_qa_types(
    client, submitter, samples
):
    for url in ("/b/medvidbench/submit/", "/b/medvidbench/about/"):
        content = client.get(url).content.decode()
        section = content.split('<section class="your-file"', 1)[1].split("</section>", 1)[0]
        example = json.loads(
            unescape(section.split('<pre class="file-example">', 1)[1].split("</pre>")[0])
            .replace("  ...\n", "")
            .replace("},\n]", "}\n]")
        )
        assert [(row["id"], row["qa_type"]) for row in example] == [
            (sample.id, sample.qa_type) for sample in samples[:2]
        ]
        assert '<a class="button" href="/b/medvidbench/template.json" download>' in section
        assert "By position: row 1 of your file is scored against sample 1" in section
        qa_types = re.findall(r'<th scope="row"><code>([^<]+)</code></th>', section)
        # The test set's own strings, the ones the checker compares each row with.
        assert sorted(qa_types) == sorted(
            ["tal", "stg", "next_action", "cvs_assessment", "video_summary_gpt"]
        )
        assert re.search(
            r"<code>tal</code></th><td>TAG_mIoU@0.3, TAG_mIoU@0.5</td>" r'<td class="num">1</td>',
            section,
        )


def test_about_names_the_qa_types_of_each_metric_not_task_names(client, benchmark):
    content = client.get("/b/medvidbench/about/").content.decode()

    table = content.split('<table class="metrics">', 1)[1].split("</table>", 1)[0]
    cells = {
        key: " ".join(unescape(re.sub(r"<[^>]+>", "", cell)).split())
        for key, cell in re.findall(
            r'<th scope="row"><code>([^<]+)</code></th>\s*<td>[^<]*</td>\s*<td>(.*?)</td>', table
        )
    }
    assert cells == {
        "CVS_acc": "cvs_assessment",
        "NAP_acc": "next_action",
        "SA_acc": "none in this test set",
        "STG_mIoU": "stg",
        "TAG_mIoU@0.3": "tal",
        "TAG_mIoU@0.5": "tal",
        "DVC_F1": "none in this test set",
        "DVC_llm": "none in this test set",
        "VS_llm": "video_summary_gpt",
        "RC_llm": "none in this test set",
    }
    # The checker refuses task names as qa_types: none is shown as one.
    assert "dense_captioning" not in content
    assert "Samples per task" not in content


def template(client, **headers):
    response = client.get("/b/medvidbench/template.json", headers=headers)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def test_the_template_lists_every_id_and_qa_type_in_order_and_no_ground_truth(
    client, benchmark, samples, records
):
    response, body = template(client)  # signed out: the benchmark is public

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    test_set = active_testset(benchmark)
    assert response["Content-Disposition"] == (
        f'attachment; filename="medvidbench-v{test_set.version}-predictions-template.json"'
    )
    rows = json.loads(body)
    assert rows == [
        {"id": sample.id, "qa_type": sample.qa_type, "prediction": ""} for sample in samples
    ]
    text = body.decode()
    for record in records:
        for turn in record["conversations"]:
            assert turn["value"].removeprefix("<video>\n") not in text
    for key in ("gnd", "struc_info", "conversations", "question", "answer", "metadata", "video"):
        assert f'"{key}"' not in text


def test_the_template_filled_in_passes_the_checks(client, benchmark):
    _, body = template(client)
    rows = [{**row, "prediction": "an answer"} for row in json.loads(body)]

    services.validate_predictions(benchmark, json.dumps(rows).encode())  # raises if refused


def test_the_template_is_revalidated_by_the_test_sets_checksum(client, benchmark, tmp_path):
    response, _ = template(client)
    etag = response["ETag"]
    assert etag == f'"{active_testset(benchmark).checksum}-t1"'
    assert response["Cache-Control"] == "no-cache, public"

    again, body = template(client, if_none_match=etag)
    assert (again.status_code, body) == (304, b"")

    # A new test set version: a new ETag, the old one no longer matches.
    records = json.loads((tmp_path / "gt.json").read_text())
    import_testset(benchmark, write_ground_truth(tmp_path / "gt2.json", records[:3]))
    changed, body = template(client, if_none_match=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    assert len(json.loads(body)) == 3


def test_a_hidden_benchmarks_template_follows_the_benchmarks_rule(client, benchmark):
    update_benchmark(benchmark, actor=None, is_public=False)
    assert client.get("/b/medvidbench/template.json").status_code == 404
    client.force_login(UserFactory(is_staff=True))  # staff without the role: a visitor here
    response, _ = template(client)
    assert response.status_code == 404
    # Nor does a matching ETag tell a visitor that the benchmark exists.
    etag = f'"{active_testset(benchmark).checksum}-t1"'
    assert template(client, if_none_match=etag)[0].status_code == 404

    client.force_login(maintainer_user())
    response, body = template(client)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-cache, private"
    assert len(json.loads(body)) == 5


def test_no_test_set_no_template(client, private_dir):
    BenchmarkFactory(slug="empty", is_public=True)

    assert client.get("/b/empty/template.json").status_code == 404


def test_the_template_is_only_read(client, benchmark):
    assert client.post("/b/medvidbench/template.json").status_code == 405


def test_about_stays_up_without_the_example_when_the_test_set_file_is_gone(client, benchmark):
    private_files.delete(active_testset(benchmark).file_name)
    clear_parsed_testsets()

    response = client.get("/b/medvidbench/about/")

    content = response.content.decode()
    assert response.status_code == 200
    assert 'id="your-file"' in content
    assert "file-example" not in content
    assert len(re.findall(r'<th scope="row"><code>[^<]+</code></th><td>', content)) == 5
