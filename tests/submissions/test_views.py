"""The web pages: boards, About, the submit form, the status page, my submissions."""

import json
import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils.html import escape

from benchmark.enums import RankingScope
from benchmark.services import update_benchmark
from core.exceptions import VerificationRefused
from submissions import services
from submissions.enums import EvaluationStatus, VerificationStatus
from submissions.models import Evaluation, Submission
from submissions.verification import OFFICIAL_STEPS
from tests.accounts.factories import UserFactory, maintainer_user

from .factories import EvaluationFactory, scored_entry
from .pages import METRIC_KEYS, get, parse_table, values

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FORM = {
    "model_name": "MyModel",
    "institution": "Lab",
    "contact_email": "author@example.org",
    "model_url": "https://example.org/my-model",
}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def benchmark(medvidbench):
    return medvidbench


# --- home and boards ----------------------------------------------------------------------------


def test_home_redirects_to_the_only_benchmark(client, benchmark):
    response = client.get("/")
    assert (response.status_code, response.url) == (302, "/b/medvidbench/")


def test_a_hidden_benchmark_is_not_found_for_visitors(client, benchmark):
    update_benchmark(benchmark, actor=None, is_public=False)
    get(client, "/b/medvidbench/", status=404)
    client.force_login(UserFactory(is_staff=True))  # staff without the role: a visitor here
    get(client, "/b/medvidbench/", status=404)
    client.force_login(maintainer_user())
    get(client, "/b/medvidbench/")


@pytest.fixture
def board(benchmark):
    """Three verified rows and two community rows (one with its judge pending)."""
    verified = {"verification_status": "verified", "verified_at": datetime(2026, 4, 15, tzinfo=UTC)}
    scored_entry(
        benchmark,
        "Alpha",
        values(CVS_acc=0.9, NAP_acc=0.2),
        model_url="https://example.org/alpha",
        team_name="Team A",
        **verified,
    )
    scored_entry(benchmark, "Beta", values(CVS_acc=0.8, NAP_acc=0.3), is_baseline=True, **verified)
    scored_entry(benchmark, "Gamma", values(CVS_acc=0.1, NAP_acc=0.1), institution="", **verified)
    scored_entry(
        benchmark,
        "Delta",
        values(CVS_acc=0.85, STG_mIoU=0.9, DVC_llm=None, VS_llm=None, RC_llm=None),
        status=EvaluationStatus.SCORED,
        institution="Delta Lab",
    )
    scored_entry(benchmark, "Epsilon", values(CVS_acc=0.05))
    services.recompute_board(benchmark)
    return benchmark


def test_the_official_board_shows_ranks_medals_badges_and_highlights(client, board):
    table = parse_table(get(client, "/b/medvidbench/"), "board")

    header, *rows = table.rows
    assert [text for _, text in header] == ["Rank ▲", "Model", "Team", *METRIC_KEYS, "Date"]
    # Global ranks: Epsilon (2) and Delta (5) are on the Community board; the medals mark
    # this board's own first three rows (issue 32).
    assert [row[0][1] for row in rows] == ["1st1avg 1.40", "2nd3avg 1.50", "3rd4avg 1.80"]
    html = client.get("/b/medvidbench/").content.decode()
    assert (
        '<span class="medal medal-1" role="img" aria-label="Gold medal, 1st place on this board" '
        'title="Gold medal: 1st on this board">1st</span>'
    ) in html
    assert 'title="Rank 3 over both boards; place 2 on this board">3</span>' in html
    assert 'id="ranks-above"' not in html  # its leader ranks 1
    # The model's own page is the small arrow beside its name (issue 12: the name links to
    # the entry's page on Podium).
    assert [row[1][1] for row in rows] == [
        "Alpha ↗ ✓ verified",
        "Beta ✓ verified baseline",
        "Gamma ✓ verified",
    ]
    assert [row[2][1] for row in rows] == ["Team A", "Test University", "—"]
    # CVS_acc and NAP_acc, with the official board's best (bold) and second-best (underlined).
    assert [row[3] for row in rows] == [
        ("num best", "0.900"),
        ("num second", "0.800"),
        ("num", "0.100"),
    ]
    assert [row[4] for row in rows] == [
        ("num second", "0.200"),
        ("num best", "0.300"),
        ("num", "0.100"),
    ]
    assert [row[-1][1] for row in rows] == ["2026-04-15"] * 3  # the verification date
    content = get(client, "/b/medvidbench/")
    alpha = Submission.objects.get(model_name="Alpha")
    assert f'<a href="/b/medvidbench/entries/{alpha.pk}/">Alpha</a>' in content
    assert (
        '<a class="model-link" href="https://example.org/alpha" rel="nofollow noopener"'
        ' title="Model page" aria-label="Alpha: model page">↗</a>'
    ) in content
    assert "Delta" not in content


def test_the_community_board_shows_global_ranks_and_pending_judge_metrics(client, board):
    table = parse_table(get(client, "/b/medvidbench/community/"), "board")

    _, *rows = table.rows
    # Delta's pending judge metrics rank last (5 of 5 on each), which puts it last overall.
    assert [(row[0][1], row[1][1], row[2][1]) for row in rows] == [
        ("1st2avg 1.50", "Epsilon", "Test University"),
        ("2nd5avg 2.30", "Delta", "Delta Lab"),
    ]
    delta = dict(zip(["rank", "model", "team", *METRIC_KEYS, "date"], rows[1], strict=True))
    assert (delta["CVS_acc"], delta["STG_mIoU"]) == (("num best", "0.850"), ("num best", "0.900"))
    assert [delta[key] for key in ("DVC_llm", "VS_llm", "RC_llm")] == [
        ("num pending", "pending")
    ] * 3
    assert delta["date"][1] == datetime.now(UTC).date().isoformat()


def test_an_imported_published_result_is_marked_with_its_verification_date(
    client, benchmark, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the board is rebuilt on commit
        services.import_published_result(
            benchmark,
            model_name="GPT-4.1",
            values=values(),
            verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
            is_baseline=True,
        )

    (row,) = parse_table(get(client, "/b/medvidbench/"), "board").rows[1:]

    assert (row[1][1], row[-1][1]) == ("GPT-4.1 ✓ verified baseline", "2026-04-15 imported")


def test_withdrawing_and_reverifying_an_imported_row_keeps_its_date_and_records_both(
    client, benchmark, django_capture_on_commit_callbacks
):
    """Issue 10.7: an imported Official row, withdrawn, could never come back (nominate worked,
    verify was refused) and its date became today under a tag saying "verified on this date"."""
    with django_capture_on_commit_callbacks(execute=True):
        imported = services.import_published_result(
            benchmark,
            model_name="GPT-4.1",
            values=values(),
            verified_at=datetime(2026, 4, 15, 12, tzinfo=UTC),
            is_baseline=True,
        )
    with django_capture_on_commit_callbacks(execute=True):
        services.set_verification_status(
            imported, VerificationStatus.WITHDRAWN, actor=None, reason="Numbers in doubt."
        )
    (row,) = parse_table(get(client, "/b/medvidbench/community/"), "board").rows[1:]
    assert (row[1][1], row[-1][1]) == ("GPT-4.1 baseline", "2026-04-15 imported")

    with pytest.raises(VerificationRefused, match="Say in the note why"):
        services.set_verification_status(imported, VerificationStatus.VERIFIED, actor=None)
    with django_capture_on_commit_callbacks(execute=True):
        services.set_verification_status(
            imported, VerificationStatus.VERIFIED, actor=None, note="checked against the paper"
        )

    imported.refresh_from_db()
    today = datetime.now(UTC).date().isoformat()
    assert imported.verified_at.date().isoformat() == today
    content = get(client, "/b/medvidbench/")
    (row,) = parse_table(content, "board").rows[1:]
    # The date column is still the published date; the verified tag carries today's check.
    assert (row[1][1], row[-1][1]) == ("GPT-4.1 ✓ verified baseline", "2026-04-15 imported")
    assert f'title="Verified on {today} (imported result)"' in content


def test_the_official_tab_and_about_say_how_to_get_on_the_official_board(client, board):
    for url in ("/b/medvidbench/", "/b/medvidbench/about/"):
        content = get(client, url)
        assert "How to get on the Official board" in content
        steps = re.findall(r'<section class="official-how".*?</section>', content, re.S)[0]
        assert [
            unescape(re.sub(r"<[^>]+>", "", item)).strip()
            for item in re.findall(r"<li>(.*?)</li>", steps)
        ] == list(OFFICIAL_STEPS)
        assert '<a href="/b/medvidbench/submit/">Submit your model' in steps
        assert '<a href="mailto:podium@localhost">Contact the maintainers</a>' in steps
    assert "How to get on the Official board" not in get(client, "/b/medvidbench/community/")

    update_benchmark(board, actor=None, contact_url="https://github.com/example/medvidbench/issues")
    assert (
        '<a href="https://github.com/example/medvidbench/issues">Contact the maintainers</a>'
        in get(client, "/b/medvidbench/about/")
    )


@pytest.mark.parametrize(
    ("state", "reason", "label", "explained"),
    [
        ("community", "", "Community", "On the Community board, not verified."),
        ("contacted", "", "Authors contacted", "asked you for access to the model's API"),
        ("verifying", "", "Being verified", "re-running the model through its API"),
        ("rejected", "The re-run scored 0.2 lower.", "Rejected", "Not verified;"),
        ("withdrawn", "Licence revoked.", "Withdrawn", "Withdrawn from the Official board"),
    ],
)
def test_the_submitter_sees_the_verification_state_and_reason(
    client, benchmark, submitter, state, reason, label, explained
):
    entry = scored_entry(
        benchmark,
        "Mine",
        values(),
        owner=submitter,
        verification_status=state,
        verification_reason=reason,
    )
    client.force_login(submitter)

    page = get(client, f"/submissions/{entry.pk}/")
    section = re.findall(r'<section class="verification".*?</section>', page, re.S)[0]
    assert f'<span class="state verification-{state}">{label}</span>' in section
    assert explained in unescape(section)
    assert (f"<strong>Reason:</strong> {reason}" in section) == bool(reason)
    listing = parse_table(get(client, "/submissions/"), "submissions").rows[1:]
    assert listing[0][5][1] == (f"{label} Reason: {reason}" if reason else label)


def test_an_evaluate_only_entry_says_it_is_never_verified(client, benchmark, submitter):
    entry = scored_entry(benchmark, "Private", values(), owner=submitter, publish=False)
    client.force_login(submitter)

    page = get(client, f"/submissions/{entry.pk}/")

    section = re.findall(r'<section class="verification".*?</section>', page, re.S)[0]
    assert "Never published, so never verified." in section
    assert "<ol" not in section
    assert parse_table(get(client, "/submissions/"), "submissions").rows[1][5][1] == "—"


def test_every_column_sorts_in_one_click_without_changing_the_rank(client, board):
    table = parse_table(get(client, "/b/medvidbench/"), "board")
    assert table.header_links == [
        "?sort=rank&dir=desc",  # the current sort: a click reverses it
        "?sort=model&dir=asc",
        "?sort=team&dir=asc",
        *[f"?sort={key.replace('@', '%40')}&dir=desc" for key in METRIC_KEYS],
        "?sort=date&dir=desc",
    ]

    by_nap = parse_table(get(client, "/b/medvidbench/?sort=NAP_acc&dir=desc"), "board")
    assert [(row[0][1], row[1][1].split()[0]) for row in by_nap.rows[1:]] == [
        ("2nd3avg 1.50", "Beta"),
        ("1st1avg 1.40", "Alpha"),
        ("3rd4avg 1.80", "Gamma"),
    ]
    assert "?sort=NAP_acc&dir=asc" in by_nap.header_links
    by_model = parse_table(get(client, "/b/medvidbench/?sort=model&dir=desc"), "board")
    assert [row[1][1].split()[0] for row in by_model.rows[1:]] == ["Gamma", "Beta", "Alpha"]
    # An unknown column is the default order, not an error.
    unknown = parse_table(get(client, "/b/medvidbench/?sort=nope&dir=sideways"), "board")
    assert [row[1][1].split()[0] for row in unknown.rows[1:]] == ["Alpha", "Beta", "Gamma"]


@pytest.mark.parametrize("entries", [1, 3])
def test_the_board_page_costs_the_same_queries_whatever_its_size(
    client, benchmark, entries, django_assert_num_queries
):
    for number in range(entries):
        scored_entry(
            benchmark,
            f"Model {number}",
            values(CVS_acc=number / 10),
            verification_status="verified",
        )
    services.recompute_board(benchmark)

    # The benchmark, its metrics, the board summary, then the rows with their submissions, and
    # who scored the judge columns (issue 32: one grouped query, cached with the table), and
    # the latest snapshot, which "Cite this board" names (issue 33).
    with django_assert_num_queries(6):
        first = get(client, "/b/medvidbench/")
    # The table is cached until the board is recomputed: the rows are not read again.
    with django_assert_num_queries(4):
        second = get(client, "/b/medvidbench/")
    assert first == second
    assert len(parse_table(first, "board").rows) == entries + 1


def test_a_recompute_replaces_the_cached_table(client, board):
    get(client, "/b/medvidbench/")
    scored_entry(board, "Zeta", values(CVS_acc=1.0), verification_status="verified")
    services.recompute_board(board)

    rows = parse_table(get(client, "/b/medvidbench/"), "board").rows[1:]

    assert rows[0][1][1] == "Zeta ✓ verified"


def test_the_about_page_shows_metrics_policy_test_set_citation_and_licence(client, benchmark):
    content = get(client, "/b/medvidbench/about/")

    metrics = parse_table(content, "metrics").rows[1:]
    assert [row[0][1] for row in metrics] == METRIC_KEYS
    assert metrics[-1][3][1] == "LLM judge, higher is better"
    assert "<dt>Ties</dt><dd>Shared smaller rank (1, 1, 3)</dd>" in content
    assert "<dt>Scope</dt><dd>All entries (official and community together)</dd>" in content
    assert "<dt>Samples</dt><dd>5</dd>" in content
    assert "@inproceedings{su2026medgrpo," in content
    assert "Dataset: CC BY-NC-SA 4.0" in content


# --- submitting ---------------------------------------------------------------------------------


def upload(content, name="predictions.json"):
    return SimpleUploadedFile(name, content, content_type="application/json")


@pytest.fixture
def submitter(client):
    user = UserFactory()
    client.force_login(user)
    return user


def post(client, predictions, **fields):
    return client.post(
        "/b/medvidbench/submit/", {**FORM, **fields, "predictions": upload(predictions)}
    )


def stored_nothing(private_dir):
    folder = private_dir / "predictions"
    return Submission.objects.count() == 0 and not (folder.exists() and any(folder.rglob("*.json")))


def test_the_submit_page_needs_a_sign_in(client, benchmark):
    response = client.get("/b/medvidbench/submit/")
    assert (response.status_code, response.url) == (
        302,
        "/accounts/login/?next=/b/medvidbench/submit/",
    )


def test_the_submit_page_shows_the_evaluations_left_today(client, benchmark, submitter):
    EvaluationFactory(
        submission__benchmark=benchmark, submission__owner=submitter, requested_by=submitter
    )
    content = get(client, "/b/medvidbench/submit/")
    assert "You have <strong>4</strong> of 5 evaluations left today on MedVidBench" in content


def rejection(content):
    """The errors listed on the form, by field (None: the form's own errors)."""
    return content.split('<ul class="errorlist', 1)[1].split("</ul>", 1)[0]


@pytest.mark.parametrize(
    ("make_file", "message"),
    [
        (
            lambda rows: b"[{",
            # The row the file stops in, 1-based with the test set's id there.
            "row 1 (id '{ids[0]}'): the file ends early, at byte 2, inside the first row: it "
            "looks cut off (an interrupted upload or copy); upload the whole file",
        ),
        (
            lambda rows: json.dumps(rows[:2]).encode(),
            # The first row the file lacks, 1-based with the test set's id there.
            "row 3 (id '{ids[2]}'): expected 5 rows, one per test sample in test-set order, got "
            "2: the 2 rows match the test set's first 2 samples, so the 3 missing rows are at "
            "the end: the file has no row for this sample, id '{ids[2]}' (qa_type "
            "'next_action') or the 2 after it",
        ),
        (
            lambda rows: json.dumps([*rows[:1], {**rows[1], "qa_type": "tal"}, *rows[2:]]).encode(),
            # 1-based, with the test set's id there (the API's `row` stays 0-based: 1).
            "row 2 (id '{ids[1]}'), field 'qa_type': expected 'stg' at this position, got 'tal'",
        ),
    ],
    ids=["bad-json", "row-count", "misaligned-qa-type"],
)
def test_a_file_that_does_not_fit_the_test_set_is_refused_with_its_rows_named(
    client, submitter, perfect_predictions, private_dir, make_file, message
):
    rows = json.loads(perfect_predictions)
    message = message.format(ids=[row["id"] for row in rows])

    response = post(client, make_file(rows))

    content = response.content.decode()
    assert response.status_code == 200
    assert f'<ul class="errorlist" id="id_predictions_error"><li>{escape(message)}</li>' in content
    assert stored_nothing(private_dir)


def test_a_published_model_name_in_use_is_refused(
    client, submitter, benchmark, perfect_predictions, private_dir
):
    scored_entry(benchmark, "mymodel", values())
    existing = Submission.objects.count()

    content = post(client, perfect_predictions).content.decode()

    assert (
        '<ul class="errorlist" id="id_model_name_error"><li>A published entry named '
        "&#x27;MyModel&#x27; already exists on MedVidBench; choose another model name.</li></ul>"
    ) in content
    assert Submission.objects.count() == existing
    # Evaluate-only runs may reuse a name: they are never published.
    assert post(client, perfect_predictions, evaluate_only="on").status_code == 302


def test_every_problem_is_listed_in_one_round_trip(client, submitter, benchmark, private_dir):
    scored_entry(benchmark, "MyModel", values())

    content = post(client, b"{}", model_url="not a url").content.decode()

    assert '<ul class="errorlist" id="id_model_name_error"><li>A published entry named' in content
    assert '<ul class="errorlist" id="id_model_url_error"><li>Enter a valid URL.</li>' in content
    assert (
        '<ul class="errorlist" id="id_predictions_error"><li>expected a JSON list of {id, '
        "qa_type, prediction} objects (a merged results file or an object keyed by sample is "
        "not accepted)</li></ul>"
    ) in content


def test_an_exhausted_quota_is_refused(
    client, submitter, benchmark, perfect_predictions, private_dir
):
    EvaluationFactory.create_batch(
        5, submission__benchmark=benchmark, submission__owner=submitter, requested_by=submitter
    )
    before = (Submission.objects.count(), Evaluation.objects.count())

    content = post(client, perfect_predictions).content.decode()

    assert (
        '<ul class="errorlist nonfield"><li>You have used all 5 evaluations for MedVidBench today; '
        "the count resets at midnight UTC.</li></ul>"
    ) in content
    assert "You have used all <strong>5</strong> evaluations for today on MedVidBench." in content
    assert (Submission.objects.count(), Evaluation.objects.count()) == before
    assert not any((private_dir / "predictions").rglob("*.json"))


def test_at_zero_evaluations_left_the_form_is_disabled_and_says_when_it_opens(
    client, submitter, benchmark
):
    EvaluationFactory.create_batch(
        5, submission__benchmark=benchmark, submission__owner=submitter, requested_by=submitter
    )

    content = get(client, "/b/medvidbench/submit/")

    assert '<fieldset class="form-body" disabled>' in content
    assert "The next one opens at <time" in content
    assert re.search(r"00:00 UTC</time> \(in (\d+ h )?\d+ min\)", content)


def test_with_evaluations_left_the_form_is_enabled_and_says_when_the_count_resets(
    client, submitter, benchmark
):
    content = get(client, "/b/medvidbench/submit/")

    assert '<fieldset class="form-body">' in content
    assert re.search(r"the count resets at <time datetime=\"[^\"]+\">00:00 UTC</time>", content)


def test_an_oversized_file_is_refused_before_it_is_read(client, submitter, benchmark, private_dir):
    update_benchmark(benchmark, actor=None, max_upload_mb=1)

    content = post(client, b" " * (1024 * 1024 + 1)).content.decode()

    assert (
        '<ul class="errorlist" id="id_predictions_error"><li>The file is 1.0 MB; this benchmark '
        "accepts at most 1 MB.</li></ul>"
    ) in content
    assert stored_nothing(private_dir)


def test_a_challenge_entry_needs_its_team(client, submitter, perfect_predictions, private_dir):
    content = post(client, perfect_predictions, is_challenge_entry="on").content.decode()
    message = "A challenge entry needs its team name and authors."
    for name in ("team_name", "authors"):
        assert f'<ul class="errorlist" id="id_{name}_error"><li>{message}</li></ul>' in content
    # Under each field and in the summary at the top.
    assert content.count(message) == 4
    assert stored_nothing(private_dir)


# --- the status page ----------------------------------------------------------------------------

REFERENCE_ANSWERS = ["1.0-5.0 seconds.", "The surgeon dissects the cystic duct."]


@pytest.fixture
def uploaded(client, submitter, predictions_for, django_capture_on_commit_callbacks):
    """A valid upload through the form: some answers the parsers cannot read."""
    predictions = predictions_for(
        [
            "I cannot tell from this clip",
            "1.0 seconds: [10, 20, 30, 40]",
            "tying",
            "Two structures: 2, Cystic plate: 1, Hepatocystic triangle: 0",
            "My own summary of the clip.",
        ]
    )
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, predictions)
    submission = Submission.objects.get()
    assert (response.status_code, response.url) == (302, f"/submissions/{submission.pk}/")
    assert len(callbacks) == 1  # the scoring task
    return submission


def test_a_valid_upload_is_queued_and_its_page_polls(client, uploaded):
    content = get(client, f"/submissions/{uploaded.pk}/")

    assert uploaded.evaluations.get().status == EvaluationStatus.QUEUED
    # Not "is queued": the message stays on the page while its status moves on.
    assert "Your file passed the checks. This page follows it until it is scored." in content
    assert f'hx-get="/submissions/{uploaded.pk}/status/" hx-trigger="every 2s"' in content
    assert '<li class="step current" aria-current="step">Queued</li>' in content
    assert '<script src="/static/vendor/htmx/htmx.min.js" defer></script>' in content


def test_after_scoring_the_page_shows_metrics_datasets_and_own_unparsed_answers(
    client, uploaded, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        services.score_evaluation(uploaded.evaluations.get())

    content = get(client, f"/submissions/{uploaded.pk}/status/")

    assert "hx-trigger" not in content  # scored: polling stops
    metrics = parse_table(content, "result").rows[1:]
    assert [(row[0][1].split()[0], row[1]) for row in metrics] == [
        ("CVS_acc", ("num", "1.000")),
        ("NAP_acc", ("num missing", "—")),  # its one sample is skipped (spec 4)
        ("SA_acc", ("num missing", "—")),
        ("STG_mIoU", ("num", "1.000")),
        ("TAG_mIoU@0.3", ("num", "0.000")),
        ("TAG_mIoU@0.5", ("num", "0.000")),
        ("DVC_F1", ("num missing", "—")),
        ("DVC_llm", ("num pending", "pending")),
        ("VS_llm", ("num pending", "pending")),
        ("RC_llm", ("num pending", "pending")),
    ]
    per_dataset = parse_table(content, "per-dataset").rows
    assert [[text for _, text in row] for row in per_dataset] == [
        ["Dataset", "CVS_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5"],
        ["AVOS", "—", "—", "0.000", "0.000"],
        ["Cholec80_CVS", "1.000", "—", "—", "—"],
        ["CholecTrack20", "—", "1.000", "—", "—"],
    ]
    formats = parse_table(content, "formats").rows[1:]
    assert [[text for _, text in row] for row in formats] == [
        ["cvs_assessment", "1", "1", "100.0%"],
        ["next_action", "0", "0", "—"],
        ["stg", "1", "1", "100.0%"],
        ["tal", "0", "1", "0.0%"],
        ["video_summary", "1", "1", "100.0%"],
    ]
    assert '<q class="answer">I cannot tell from this clip</q>' in content
    # Unparsed next-action answers still score (the nearest class): said beside the counts.
    assert "<strong>next_action:</strong> Parsed means the answer is exactly one" in content
    assert [row[3][1] for row in metrics][:2] == ["1 / 1 samples", "0 / 1 samples"]
    for reference in REFERENCE_ANSWERS:
        assert reference not in content
    # The rank is the global one (MedVidBench ranks both boards together): said so, with the
    # row's place on its own board.
    assert "Rank <strong>1</strong> of all published entries" in content
    assert "the ranks compare both boards together. It is row 1 of 1 on the" in content


def test_only_the_owner_and_maintainers_see_a_status_page(client, uploaded):
    url = f"/submissions/{uploaded.pk}/"
    for stranger in (UserFactory(), UserFactory(is_staff=True)):
        client.force_login(stranger)
        get(client, url, status=404)
        get(client, url + "status/", status=404)
    client.force_login(maintainer_user())
    get(client, url)
    client.logout()
    assert client.get(url).url == f"/accounts/login/?next={url}"


def test_an_evaluate_only_entry_is_on_no_board_and_its_would_be_rank_is_the_owners(
    client, benchmark, submitter, perfect_predictions, django_capture_on_commit_callbacks
):
    scored_entry(benchmark, "Published", values(), verification_status="verified")
    services.recompute_board(benchmark)
    post(client, perfect_predictions, model_name="Secret", evaluate_only="on")
    secret = Submission.objects.get(model_name="Secret")
    with django_capture_on_commit_callbacks(execute=True):
        services.score_evaluation(secret.evaluations.get())

    owner_page = get(client, f"/submissions/{secret.pk}/")
    # Its missing and pending metrics rank last: second of the two.
    assert "it would rank <strong>2</strong> of 2 (mean rank 1.60)" in owner_page
    for viewer in (submitter, UserFactory(), None):
        if viewer is None:
            client.logout()
        else:
            client.force_login(viewer)
        for url in ("/b/medvidbench/", "/b/medvidbench/community/"):
            assert "Secret" not in get(client, url)
    client.force_login(maintainer_user())
    staff_page = get(client, f"/submissions/{secret.pk}/")
    assert "would rank" not in staff_page


# --- my submissions -----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 3])
def test_my_submissions_lists_them_all_in_constant_queries(
    client, benchmark, submitter, count, django_assert_num_queries
):
    for number in range(count):
        scored_entry(benchmark, f"Mine {number}", values(), owner=submitter)
    scored_entry(benchmark, "Someone else's", values())
    services.recompute_board(benchmark)

    # The session, the user, the submissions with their newest status and board entry, then
    # the unread notifications and the header's count of them.
    with django_assert_num_queries(5):
        content = get(client, "/submissions/")

    rows = parse_table(content, "submissions").rows[1:]
    assert [(row[0][1], row[3][1], row[4][1], row[5][1], row[6][1]) for row in rows] == [
        (f"Mine {number}", "Complete", "Community", "Community", str(number + 1))
        for number in reversed(range(count))
    ]


# A lexicographic board (issue 14) -----------------------------------------------------------------


def visible_text(html):
    """The page's text with tags dropped and whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


@pytest.fixture
def lexicographic_board(board, django_capture_on_commit_callbacks):
    """The five rows ranked by NAP_acc, then CVS_acc: NAP_acc is 0.5 for Delta and Epsilon
    (CVS_acc 0.85 over 0.05 separates them), 0.3 Beta, 0.2 Alpha, 0.1 Gamma."""
    with django_capture_on_commit_callbacks(execute=True):
        update_benchmark(
            board,
            actor=None,
            ranking_method="lexicographic",
            ranking_order=["NAP_acc", "CVS_acc"],
        )
    return board


def test_a_lexicographic_board_says_its_order_and_shows_no_mean_rank(client, lexicographic_board):
    content = get(client, "/b/medvidbench/")

    _header, *rows = parse_table(content, "board").rows
    # Global ranks: Delta 1 and Epsilon 2 are on the Community board; no "avg" in the cell.
    assert [(row[0][1], row[1][1].split(" ")[0]) for row in rows] == [
        ("1st3", "Beta"),
        ("2nd4", "Alpha"),
        ("3rd5", "Gamma"),
    ]
    assert 'class="mean-rank"' not in content
    assert (
        "Ranked by NAP_acc, then CVS_acc (ties broken by model name; values compared at 3 "
        "decimals); the rank is computed over the Official and Community boards together."
    ) in visible_text(content)
    assert "Ranked by mean rank" not in content
    community = parse_table(get(client, "/b/medvidbench/community/"), "board").rows[1:]
    assert [row[0][1] for row in community] == ["1st1", "2nd2"]


def test_an_official_board_below_a_community_leader_says_why_it_starts_at_rank_2(client, benchmark):
    """Issue 32, point 1: a Community entry held rank 1, so the Official board's leader read
    "2" beside a "2nd" medal. Its medal is now its place on the board, and a line names who
    holds the rank above it."""
    verified = {"verification_status": "verified", "verified_at": datetime(2026, 4, 15, tzinfo=UTC)}
    scored_entry(benchmark, "Synthetic", values(CVS_acc=0.99, NAP_acc=0.99))
    scored_entry(benchmark, "Alpha", values(CVS_acc=0.9, NAP_acc=0.2), **verified)
    scored_entry(benchmark, "Beta", values(CVS_acc=0.8, NAP_acc=0.3), **verified)
    services.recompute_board(benchmark)

    content = get(client, "/b/medvidbench/")

    rows = parse_table(content, "board").rows[1:]
    assert [row[0][1].split("avg")[0] for row in rows] == ["1st2", "2nd3"]
    synthetic = Submission.objects.get(model_name="Synthetic")
    (line,) = re.findall(r'<p class="note ranks-above" id="ranks-above">(.*?)</p>', content)
    assert unescape(re.sub(r"<[^>]+>", "", line)) == (
        "Ranks compare both boards: rank 1 belongs to a Community entry (not verified): "
        "Synthetic. Medals mark this board's own first three rows."
    )
    assert f'<a href="/b/medvidbench/entries/{synthetic.pk}/">Synthetic</a>' in content
    # The Community board's leader ranks 1: no such line there.
    assert 'id="ranks-above"' not in get(client, "/b/medvidbench/community/")

    # Under the per-board scope each board ranks its own rows from 1: no line either.
    update_benchmark(benchmark, actor=None, ranking_scope=RankingScope.PER_BOARD)
    services.recompute_board(benchmark)
    content = get(client, "/b/medvidbench/")
    assert [row[0][1].split("avg")[0] for row in parse_table(content, "board").rows[1:]] == [
        "1st1",
        "2nd2",
    ]
    assert 'id="ranks-above"' not in content


def test_a_mean_rank_board_keeps_its_sentence(client, board):
    text = visible_text(get(client, "/b/medvidbench/"))

    assert (
        "Ranked by mean rank over all metrics (ties share the smaller rank, values compared at "
        "3 decimals);"
    ) in text
    assert "<dt>Order</dt><dd>Mean rank over the 10 metrics, lower is better;" in get(
        client, "/b/medvidbench/about/"
    )


def test_about_says_a_lexicographic_order(client, lexicographic_board):
    content = get(client, "/b/medvidbench/about/")

    assert (
        "<dt>Order</dt><dd>By NAP_acc, then CVS_acc: the first decides, a tie on it is broken "
        "by the next, each in its metric's direction; then model name. A missing value ranks "
        "below every present one.</dd>"
    ) in content
    assert "Mean rank over the" not in content
    assert "<dt>Scope</dt><dd>All entries (official and community together)</dd>" in content


def test_columns_no_row_has_a_value_in_are_hidden_until_asked_for(client, benchmark):
    """Issue 32, point 6: MedSG-Bench showed 12 columns empty on every imported row, and the
    MedVidBench board was wider than a laptop's screen."""
    for name, value in (("Imported A", 0.4), ("Imported B", 0.3)):
        services.import_published_result(
            benchmark,
            model_name=name,
            values={"CVS_acc": value, "NAP_acc": value},
            verified_at=datetime(2026, 4, 15, tzinfo=UTC),
        )
    # A Community entry waiting for its judge: its judge columns say "pending", so they stay.
    scored_entry(
        benchmark,
        "Waiting",
        values(DVC_llm=None, VS_llm=None, RC_llm=None),
        status=EvaluationStatus.SCORED,
    )
    services.recompute_board(benchmark)

    official = get(client, "/b/medvidbench/")
    header = [text for _, text in parse_table(official, "board").rows[0]]
    # No row names a team either: its column goes too.
    assert header == ["Rank ▲", "Model", "CVS_acc", "NAP_acc", "Date"]
    hidden = ["Team", *(key for key in METRIC_KEYS if key not in ("CVS_acc", "NAP_acc"))]
    assert (
        f"9 columns with no value on any row of this board are hidden: {', '.join(hidden)}."
    ) in visible_text(official)
    assert '<a href="?columns=all">Show every column</a>' in official

    # Asked for, every column shows, and the page's links keep asking (sorting, the tabs).
    every = get(client, "/b/medvidbench/?columns=all")
    header = [text for _, text in parse_table(every, "board").rows[0]]
    assert header == ["Rank ▲", "Model", "Team", *METRIC_KEYS, "Date"]
    assert "Every column is shown, 9 with no value on any row of this board." in (
        visible_text(every)
    )
    assert '<a href="?">Hide the empty columns</a>' in every
    assert "columns=all" in parse_table(every, "board").header_links[1]
    # The downloads have every column anyway: not asked there.
    assert "columns=all" not in re.search(r'rankings.csv\?([^"]*)"', every).group(1)

    # A column sorted by stays, empty or not; the Community board keeps its pending ones.
    by_stg = get(client, "/b/medvidbench/?sort=STG_mIoU&dir=desc")
    assert "STG_mIoU ▼" in [text for _, text in parse_table(by_stg, "board").rows[0]]
    community = get(client, "/b/medvidbench/community/")
    assert "DVC_llm" in [text for _, text in parse_table(community, "board").rows[0]]
    # Its entry names its institution, which the Team column shows.
    assert "Team" in [text for _, text in parse_table(community, "board").rows[0]]
    assert 'id="columns-note"' not in community


def header(content):
    return [text for _, text in parse_table(content, "board").rows[0]]


def test_a_visitor_chooses_the_columns_and_the_links_keep_them(client, benchmark):
    """Issue 32, point 6: any set of the optional columns (the team, each metric, the date),
    kept in the URL. The chooser's form sends one `columns` per box; the page's links send
    them as one comma-separated value. The rank, the model and the sorted column always
    show; an unknown key is ignored; none known is the default."""
    scored_entry(benchmark, "Alpha", values(), team_name="Lab A")
    scored_entry(benchmark, "Beta", values(CVS_acc=0.1))
    services.recompute_board(benchmark)

    chosen = get(client, "/b/medvidbench/community/?columns=CVS_acc&columns=date")
    assert header(chosen) == ["Rank ▲", "Model", "CVS_acc", "Date"]
    links = parse_table(chosen, "board").header_links
    assert all("columns=CVS_acc%2Cdate" in link for link in links)
    # The chooser shows what is chosen, and the ways back.
    assert '<input type="checkbox" name="columns" value="CVS_acc" checked>' in chosen
    assert '<input type="checkbox" name="columns" value="NAP_acc">' in chosen
    assert "Columns: 2 of 12 shown" in visible_text(chosen)
    assert '<a href="?">Default columns</a>' in chosen
    assert '<a href="?columns=all">Every column</a>' in chosen
    # The search form keeps the columns too, and the downloads have every column.
    assert '<input type="hidden" name="columns" value="CVS_acc,date">' in chosen
    assert "columns" not in re.search(r'rankings.csv\?([^"]*)"', chosen).group(1)

    assert header(get(client, "/b/medvidbench/community/?columns=team,NAP_acc")) == [
        "Rank ▲",
        "Model",
        "Team",
        "NAP_acc",
    ]
    sorted_by = get(client, "/b/medvidbench/community/?columns=CVS_acc&sort=STG_mIoU&dir=desc")
    assert header(sorted_by) == ["Rank", "Model", "CVS_acc", "STG_mIoU ▼"]
    # A row names a team here, so the default shows the column.
    default = ["Rank ▲", "Model", "Team", *METRIC_KEYS, "Date"]
    bogus = get(client, "/b/medvidbench/community/?columns=bogus&tag=shiny")
    assert header(bogus) == default
    assert (
        "Show 'shiny' is not one of its choices; every entry is shown. This board has no "
        "column 'bogus'; the default columns are shown."
    ) in visible_text(bogus)
    assert header(get(client, "/b/medvidbench/community/")) == default
    assert 'id="columns-note"' not in get(client, "/b/medvidbench/community/")
