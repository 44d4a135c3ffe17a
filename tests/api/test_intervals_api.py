"""The API contract of issue 12 (docs/api.md, "Intervals"): the rankings' intervals, rank
intervals and tiers in the JSON and the CSV, the compare endpoint with its privacy and errors,
and imported rows, which have no interval and say so."""

import csv
import io
from datetime import UTC, datetime

import pytest
from django.contrib import admin
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from api.compare import CompareView, ComparisonSerializer
from api.rankings import RankingsView
from benchmark.services import import_testset
from submissions import services
from submissions.intervals import compare_runs, compute_rank_intervals, replicate_values
from submissions.models import BoardEntry, RunReplicates
from submissions.services import SubmissionDetails, create_submission
from tests.accounts.factories import UserFactory, maintainer_user
from tests.benchmark.factories import BenchmarkFactory, small_ground_truth, write_ground_truth
from tests.submissions.intervals_data import predictions_file

from .replicate_leaks import NUMBER, private_numbers, public_numbers, replicate_leaks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

AUTOMATIC = ["CVS_acc", "NAP_acc", "SA_acc", "STG_mIoU", "TAG_mIoU@0.3", "TAG_mIoU@0.5", "DVC_F1"]
JUDGE = ["DVC_llm", "VS_llm", "RC_llm"]
METRIC_KEYS = [*AUTOMATIC, *JUDGE]


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def board(interval_benchmark, scored_entry):
    """Three published entries with replicates, their rank intervals computed."""
    runs = {
        name: scored_entry(name, kind, seed)
        for name, kind, seed in (
            ("Noisy-1", "noisy", 1),
            ("Noisy-2", "noisy", 2),
            ("Prose", "prose", 3),
        )
    }
    compute_rank_intervals(interval_benchmark)
    return runs


def rankings(client, benchmark, **params):
    response = client.get(
        reverse("api:rankings", args=[benchmark.slug]), {"board": "all", **params}
    )
    assert response.status_code == 200, response.content
    return response


def compare_url(benchmark, a=None, b=None):
    url = reverse("api:compare", args=[benchmark.slug])
    params = {key: value for key, value in (("a", a), ("b", b)) if value is not None}
    return url, params


def signed_in(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def import_row(benchmark, name="Imported-Model", value=0.5):
    submission = services.import_published_result(
        benchmark,
        model_name=name,
        values=dict.fromkeys(METRIC_KEYS, value),
        verified_at=datetime(2025, 6, 1, tzinfo=UTC),
    )
    services.recompute_board(benchmark)
    return submission


# --- rankings JSON -------------------------------------------------------------------------------


def test_each_row_carries_its_intervals_rank_interval_and_tier(interval_benchmark, board):
    rows = rankings(APIClient(), interval_benchmark).json()["results"]

    entries = {
        entry.submission_id: entry
        for entry in BoardEntry.objects.filter(benchmark=interval_benchmark)
    }
    assert [row["model"] for row in rows] == [
        entry.submission.model_name
        for entry in sorted(entries.values(), key=lambda entry: entry.rank)
    ]
    for row in rows:
        entry = entries[row["submission_id"]]
        stored = RunReplicates.objects.get(evaluation=entry.evaluation).intervals
        for key in AUTOMATIC:
            metric = row["metrics"][key]
            assert metric["interval"] == stored[key] == entry.intervals[key]
            low, high = metric["interval"]
            assert low <= metric["value"] <= high, (row["model"], key)
        for key in JUDGE:  # the judge has not run: no value, no interval
            assert row["metrics"][key]["value"] is None
            assert row["metrics"][key]["interval"] is None
        assert row["rank_interval"] == [entry.rank_best, entry.rank_worst]
        assert 1 <= entry.rank_best <= entry.rank_worst <= len(rows)
        assert row["tier"] == entry.tier
        assert row["interval_note"] == "pending"  # the judge metrics have none until judged
    assert rows[0]["tier"] == 1


def test_rank_intervals_are_null_until_they_land_and_then_change_the_etag(
    interval_benchmark, scored_entry
):
    client = APIClient()
    scored_entry("Noisy-1", "noisy", 1)
    scored_entry("Noisy-2", "noisy", 2)
    before = rankings(client, interval_benchmark)
    assert [(row["rank_interval"], row["tier"]) for row in before.json()["results"]] == [
        (None, None),
        (None, None),
    ]
    # The metric intervals are there already: `recompute_board` copies them.
    assert all(
        row["metrics"]["CVS_acc"]["interval"] is not None for row in before.json()["results"]
    )

    assert compute_rank_intervals(interval_benchmark) == 2
    after = rankings(client, interval_benchmark, HTTP_IF_NONE_MATCH=before["ETag"])

    assert after["ETag"] != before["ETag"]
    assert [row["rank_interval"] is not None for row in after.json()["results"]] == [True, True]
    assert after.json()["results"][0]["tier"] == 1
    # And the new ETag revalidates.
    again = client.get(
        reverse("api:rankings", args=[interval_benchmark.slug]),
        {"board": "all"},
        HTTP_IF_NONE_MATCH=after["ETag"],
    )
    assert again.status_code == 304


def test_an_imported_row_has_no_interval_and_says_so(interval_benchmark, board):
    imported = import_row(interval_benchmark)
    compute_rank_intervals(interval_benchmark)

    rows = {
        row["model"]: row for row in rankings(APIClient(), interval_benchmark).json()["results"]
    }

    row = rows["Imported-Model"]
    assert row["imported"] is True
    assert row["submission_id"] == imported.pk
    assert [row["metrics"][key]["interval"] for key in METRIC_KEYS] == [None] * 10
    assert [row["metrics"][key]["value"] for key in METRIC_KEYS] == [0.5] * 10
    assert row["interval_note"] == "no interval (imported)"
    # Its values are fixed in every replicate, but the others move around it: it has a rank
    # interval all the same.
    best, worst = row["rank_interval"]
    assert 1 <= best <= worst <= 4
    assert rows["Noisy-1"]["interval_note"] == "pending"


def test_a_run_scored_before_intervals_existed_says_not_computed(interval_benchmark, board):
    run = board["Noisy-1"]
    RunReplicates.objects.filter(evaluation=run).delete()
    services.recompute_board(interval_benchmark)

    rows = {
        row["model"]: row for row in rankings(APIClient(), interval_benchmark).json()["results"]
    }

    assert rows["Noisy-1"]["interval_note"] == "no interval (not computed yet)"
    assert rows["Noisy-1"]["metrics"]["CVS_acc"]["interval"] is None
    assert rows["Noisy-2"]["metrics"]["CVS_acc"]["interval"] is not None


def test_a_published_board_of_imported_rows_only_has_no_interval_anywhere(
    medvidbench, published_rows
):
    for row in published_rows:
        services.import_published_result(
            medvidbench,
            model_name=row.model_name,
            values=row.values,
            verified_at=datetime(2025, 1, 1, tzinfo=UTC),
            is_baseline=row.is_baseline,
        )
    services.recompute_board(medvidbench)
    medvidbench.is_public = True
    medvidbench.save(update_fields=["is_public"])
    compute_rank_intervals(medvidbench)

    rows = rankings(APIClient(), medvidbench).json()["results"]

    assert len(rows) == 15
    assert {row["interval_note"] for row in rows} == {"no interval (imported)"}
    assert [(row["rank_interval"], row["tier"]) for row in rows] == [(None, None)] * 15
    assert {m["interval"] is None for row in rows for m in row["metrics"].values()} == {True}


# --- rankings CSV --------------------------------------------------------------------------------


def test_the_csv_ends_with_each_metrics_interval_and_the_rank_interval(interval_benchmark, board):
    import_row(interval_benchmark)
    compute_rank_intervals(interval_benchmark)
    rows = rankings(APIClient(), interval_benchmark).json()["results"]

    response = rankings(APIClient(), interval_benchmark, format="csv")

    header, *lines = list(csv.reader(io.StringIO(response.content.decode())))
    interval_columns = [f"{key}_{end}" for key in METRIC_KEYS for end in ("low", "high")]
    assert header[-24:] == [*interval_columns, "rank_best", "rank_worst", "tier", "interval_note"]
    assert len(lines) == len(rows) == 4
    for line, row in zip(lines, rows, strict=True):
        cells = dict(zip(header, line, strict=True))
        assert cells["model"] == row["model"]
        for key in METRIC_KEYS:
            interval = row["metrics"][key]["interval"]
            expected = ["", ""] if interval is None else [repr(interval[0]), repr(interval[1])]
            assert [cells[f"{key}_low"], cells[f"{key}_high"]] == expected
        assert [int(cells["rank_best"]), int(cells["rank_worst"])] == row["rank_interval"]
        assert int(cells["tier"]) == row["tier"]
        assert cells["interval_note"] == row["interval_note"]
    imported = next(line for line in lines if line[1] == "Imported-Model")
    cells = dict(zip(header, imported, strict=True))
    assert [cells[column] for column in interval_columns] == [""] * 20
    assert cells["interval_note"] == "no interval (imported)"


def test_the_csv_leaves_the_rank_interval_empty_until_it_lands(interval_benchmark, scored_entry):
    scored_entry("Noisy-1", "noisy", 1)

    response = rankings(APIClient(), interval_benchmark, format="csv")

    header, line = list(csv.reader(io.StringIO(response.content.decode())))
    cells = dict(zip(header, line, strict=True))
    assert [cells["rank_best"], cells["rank_worst"], cells["tier"]] == ["", "", ""]
    assert cells["CVS_acc_low"] != ""


# --- compare: the contract -----------------------------------------------------------------------


def test_compare_answers_the_paired_difference_of_every_metric(interval_benchmark, board):
    a, b = board["Noisy-1"], board["Prose"]
    url, params = compare_url(interval_benchmark, a.submission_id, b.submission_id)

    response = APIClient().get(url, params)

    assert response.status_code == 200, response.content
    body = response.json()
    expected = compare_runs(interval_benchmark, a, b)
    assert list(body["metrics"]) == METRIC_KEYS
    assert body["a"] == {"submission_id": a.submission_id, "model": "Noisy-1"}
    assert body["b"] == {"submission_id": b.submission_id, "model": "Prose"}
    assert body["paired"] is True
    assert body["unpaired_reason"] == ""
    assert body["level"] == 0.95
    for key in AUTOMATIC:
        metric, found = body["metrics"][key], expected.metrics[key]
        assert metric["value_a"] == a.metrics[key]
        assert metric["value_b"] == b.metrics[key]
        assert metric["difference"] == a.metrics[key] - b.metrics[key] == found.difference
        assert metric["interval"] == list(found.interval)
        assert metric["interval"][0] <= metric["difference"] <= metric["interval"][1]
        assert metric["p_value"] == found.p_value
        assert 2 / 201 <= metric["p_value"] <= 1
        assert metric["better"] == expected.verdicts[key]
        low, high = metric["interval"]
        assert (metric["better"] == "tied") == (low <= 0 <= high)
    for key in JUDGE:
        assert body["metrics"][key] == {
            "value_a": None,
            "value_b": None,
            "difference": None,
            "interval": None,
            "p_value": None,
            "better": None,
        }
    assert body["summary"] == expected.summary
    assert body["per_dataset"] == expected.per_dataset
    assert body["per_dataset"]["CVS_acc"]  # the breakdown is there, dataset by dataset
    assert response["Cache-Control"] == "no-cache, public"


def test_the_body_has_exactly_the_documented_fields(interval_benchmark, board):
    url, params = compare_url(
        interval_benchmark, board["Noisy-1"].submission_id, board["Noisy-2"].submission_id
    )
    body = APIClient().get(url, params).json()

    serializer = ComparisonSerializer(data=body)
    assert serializer.is_valid(), serializer.errors
    assert set(body) == set(ComparisonSerializer().fields)
    metric_fields = set(ComparisonSerializer().fields["metrics"].child.fields)
    assert {frozenset(metric) for metric in body["metrics"].values()} == {frozenset(metric_fields)}


def test_an_entry_compared_with_itself_differs_by_zero_with_p_one(interval_benchmark, board):
    run = board["Noisy-2"]
    url, params = compare_url(interval_benchmark, run.submission_id, run.submission_id)

    body = APIClient().get(url, params).json()

    for key in AUTOMATIC:
        assert body["metrics"][key]["difference"] == 0
        assert body["metrics"][key]["interval"] == [0, 0]
        assert body["metrics"][key]["p_value"] == 1
        assert body["metrics"][key]["better"] == "tied"


def test_an_imported_entry_is_compared_without_intervals(interval_benchmark, board):
    imported = import_row(interval_benchmark)
    a = board["Noisy-1"]
    url, params = compare_url(interval_benchmark, a.submission_id, imported.pk)

    body = APIClient().get(url, params).json()

    assert body["paired"] is False
    assert "imported" in body["unpaired_reason"]
    cvs = body["metrics"]["CVS_acc"]
    assert (cvs["difference"], cvs["interval"], cvs["p_value"], cvs["better"]) == (
        a.metrics["CVS_acc"] - 0.5,
        None,
        None,
        None,
    )


def test_a_published_entry_is_compared_on_the_run_the_board_shows(interval_benchmark, board):
    a, b = board["Noisy-1"], board["Noisy-2"]
    # A newer run of `a` that has not reached the board yet (its recompute is pending).
    newer = a.submission.evaluations.create(
        test_set=a.test_set, status=a.status, metrics={**a.metrics, "CVS_acc": 0.0}
    )
    url, params = compare_url(interval_benchmark, a.submission_id, b.submission_id)

    body = APIClient().get(url, params).json()

    assert newer.pk != BoardEntry.objects.get(submission=a.submission).evaluation_id
    assert body["metrics"]["CVS_acc"]["value_a"] == a.metrics["CVS_acc"]


# --- compare: privacy ----------------------------------------------------------------------------


@pytest.fixture
def evaluate_only(interval_benchmark, scored_entry, board):
    owner = UserFactory()
    run = scored_entry("Private-Model", "noisy", 7, owner=owner, publish=False)
    return owner, run


def test_an_evaluate_only_entry_is_compared_for_its_owner_and_maintainers_only(
    interval_benchmark, board, evaluate_only
):
    owner, run = evaluate_only
    public = board["Noisy-1"]
    url, params = compare_url(interval_benchmark, run.submission_id, public.submission_id)
    nowhere, nowhere_params = compare_url(interval_benchmark, 999_999, public.submission_id)
    viewers = {
        "owner": signed_in(owner),
        "maintainer": signed_in(maintainer_user()),
        "superuser": signed_in(UserFactory(is_superuser=True, is_staff=True)),
        "other": signed_in(UserFactory()),
        "staff-only": signed_in(UserFactory(is_staff=True)),
        "anonymous": APIClient(),
    }

    answers = {name: client.get(url, params) for name, client in viewers.items()}

    assert {name: response.status_code for name, response in answers.items()} == {
        "owner": 200,
        "maintainer": 200,
        "superuser": 200,
        "other": 404,
        "staff-only": 404,
        "anonymous": 404,
    }
    body = answers["owner"].json()
    assert body["a"]["model"] == "Private-Model"
    assert body["metrics"]["CVS_acc"]["value_a"] == run.metrics["CVS_acc"]
    assert answers["owner"]["Cache-Control"] == "no-cache, private"
    # Refused exactly as an id that does not exist: nothing confirms the entry.
    missing = viewers["other"].get(nowhere, nowhere_params)
    for name in ("other", "staff-only", "anonymous"):
        assert (
            answers[name].json()
            == missing.json()
            == {
                "detail": f"No such entry for `a` on {interval_benchmark.name}.",
                "code": "not_found",
            }
        )
    # On either side.
    swapped = viewers["other"].get(url, {"a": public.submission_id, "b": run.submission_id})
    assert swapped.status_code == 404
    assert swapped.json()["detail"] == f"No such entry for `b` on {interval_benchmark.name}."


def test_an_evaluate_only_entry_never_appears_in_the_rankings(
    interval_benchmark, board, evaluate_only
):
    owner, _ = evaluate_only
    client = signed_in(owner)

    rows = rankings(client, interval_benchmark).json()["results"]
    text = rankings(client, interval_benchmark, format="csv").content.decode()

    assert "Private-Model" not in [row["model"] for row in rows]
    assert "Private-Model" not in text


def test_a_hidden_benchmarks_entries_are_compared_for_maintainers_only(interval_benchmark, board):
    interval_benchmark.is_public = False
    interval_benchmark.save(update_fields=["is_public"])
    a, b = board["Noisy-1"], board["Noisy-2"]
    url, params = compare_url(interval_benchmark, a.submission_id, b.submission_id)

    anonymous = APIClient().get(url, params)
    maintainer = signed_in(maintainer_user()).get(url, params)

    assert anonymous.status_code == 404
    assert maintainer.status_code == 200
    assert maintainer["Cache-Control"] == "no-cache, private"


# --- compare: errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({}, ["a", "b"]),
        ({"a": "1"}, ["b"]),
        ({"b": "1"}, ["a"]),
        ({"a": "x", "b": "1"}, ["a"]),
        ({"a": "1", "b": "1.5"}, ["b"]),
        ({"a": "0", "b": "1"}, ["a"]),
        ({"a": "-3", "b": "-3"}, ["a", "b"]),
    ],
)
def test_a_missing_or_invalid_id_is_refused_by_name(interval_benchmark, board, params, fields):
    url, _ = compare_url(interval_benchmark)

    response = APIClient().get(url, params)

    assert response.status_code == 400
    body = response.json()
    assert (body["code"], body["detail"]) == ("invalid", "The request is invalid; see `errors`.")
    assert sorted(body["errors"]) == fields


def test_an_entry_of_another_benchmark_is_not_found(
    interval_benchmark, board, private_dir, tmp_path
):
    other = BenchmarkFactory(is_public=True)
    import_testset(other, write_ground_truth(tmp_path / "other.json", small_ground_truth()))
    url, params = compare_url(other, board["Noisy-1"].submission_id, board["Noisy-2"].submission_id)

    response = APIClient().get(url, params)

    assert response.status_code == 404
    assert response.json() == {
        "detail": f"No such entry for `a` on {other.name}.",
        "code": "not_found",
    }


def test_an_unknown_benchmark_is_not_found(board):
    response = APIClient().get(reverse("api:compare", args=["nope"]), {"a": 1, "b": 2})

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_an_entry_without_scores_is_a_conflict_for_those_who_may_see_it(
    interval_benchmark, board, django_capture_on_commit_callbacks
):
    owner = UserFactory()
    with django_capture_on_commit_callbacks(execute=False):  # not scored: no worker runs
        pending = create_submission(
            interval_benchmark,
            owner=owner,
            details=SubmissionDetails(model_name="Not-Scored-Yet"),
            predictions=predictions_file("noisy", 5),
        )
    url, params = compare_url(interval_benchmark, pending.pk, board["Noisy-1"].submission_id)

    mine = signed_in(owner).get(url, params)
    theirs = signed_in(UserFactory()).get(url, params)

    assert mine.status_code == 409
    assert mine.json() == {
        "detail": f"Entry {pending.pk} (`a`) has no scores yet: it can be compared once its run "
        "is scored.",
        "code": "no_scores",
    }
    # Published but not on the board: another user is not told it exists.
    assert theirs.status_code == 404
    assert theirs.json()["code"] == "not_found"


def test_compare_is_throttled_as_the_rankings_are():
    assert [type(throttle) for throttle in CompareView().get_throttles()] == [
        type(throttle) for throttle in RankingsView().get_throttles()
    ]
    assert CompareView().get_throttles()  # not exempt


# --- no replicate value in any response ----------------------------------------------------------


def test_no_response_carries_a_replicate_value_or_a_per_sample_contribution(
    interval_benchmark, board, evaluate_only
):
    owner, private_run = evaluate_only
    runs = [*board.values(), private_run]
    compute_rank_intervals(interval_benchmark, force=True)
    import_row(interval_benchmark)
    clients = {
        "anonymous": APIClient(),
        "owner": signed_in(owner),
        "maintainer": signed_in(maintainer_user()),
        "superuser": signed_in(UserFactory(is_superuser=True, is_staff=True)),
    }
    slug = interval_benchmark.slug
    urls = [
        reverse("api:benchmark-list"),
        reverse("api:benchmark-detail", args=[slug]),
        reverse("api:rankings", args=[slug]) + "?board=all",
        reverse("api:rankings", args=[slug]) + "?board=all&format=csv",
        reverse("api:rankings-csv", args=[slug]) + "?board=official",
        reverse("api:submission-list"),
        *[reverse("api:submission-detail", args=[run.submission_id]) for run in runs],
        *[
            reverse("api:compare", args=[slug]) + f"?a={a.submission_id}&b={b.submission_id}"
            for a in runs
            for b in runs
        ],
        reverse("api:schema"),
    ]

    bodies, statuses = {}, {}
    for actor, client in clients.items():
        for url in urls:
            response = client.get(url)
            statuses[(actor, url)] = response.status_code
            bodies[f"{actor} {url}"] = response.content.decode()

    # The bodies hold what they should (so the check below looks at real answers): the owner
    # and maintainers compare the evaluate-only entry, every interval is on the board.
    private_compare = reverse("api:compare", args=[slug]) + (
        f"?a={private_run.submission_id}&b={board['Noisy-1'].submission_id}"
    )
    assert [statuses[(actor, private_compare)] for actor in clients] == [404, 200, 200, 200]
    assert (
        statuses[("owner", reverse("api:submission-detail", args=[private_run.submission_id]))]
        == 200
    )
    rows = APIClient().get(reverse("api:rankings", args=[slug]), {"board": "all"}).json()["results"]
    assert sum(m["interval"] is not None for row in rows for m in row["metrics"].values()) == 21
    # The public endpoints are found as numbers in the bodies (so the tokens are read right).
    low, high = RunReplicates.objects.get(evaluation=board["Noisy-1"]).intervals["STG_mIoU"]
    rankings_body = bodies[f"anonymous {reverse('api:rankings', args=[slug])}?board=all"]
    assert {repr(low), repr(high)} <= set(NUMBER.findall(rankings_body))
    # A paired interval's endpoint is public too, and it can equal a replicate value of a
    # (where b is 0 on that replicate, e.g. the prose model's NAP_acc): it is an order
    # statistic of the differences, as a metric's interval is of its replicates.
    paired_ends = [
        end
        for a in runs
        for b in runs
        for found in compare_runs(interval_benchmark, a, b).metrics.values()
        if found.interval is not None
        for end in found.interval
    ]
    assert replicate_leaks(bodies, runs, also_public=paired_ends) == []


def test_the_leak_check_finds_a_replicate_value_when_one_is_served(interval_benchmark, board):
    """The check above can fail: a body holding one replicate value is caught."""
    run = board["Noisy-1"]
    row = RunReplicates.objects.get(evaluation=run)
    served = float(replicate_values(row)["STG_mIoU"][17])
    assert repr(served) in private_numbers(row) - public_numbers([run])

    assert replicate_leaks({"a body": f'{{"x": {served!r}}}'}, [run]) == [(repr(served), "a body")]
    assert replicate_leaks({"a body": f'{{"x": {run.metrics["STG_mIoU"]!r}}}'}, [run]) == []


def test_run_replicates_are_not_in_the_admin_for_anyone(client):
    admin.autodiscover()  # as the URLconf does (config/admin_app.py): the registry is complete
    assert RunReplicates not in admin.site._registry
    superuser = UserFactory(is_superuser=True, is_staff=True)
    for user in (superuser, maintainer_user()):
        client.force_login(user)
        assert client.get("/admin/submissions/runreplicates/").status_code == 404
        index = client.get("/admin/submissions/")
        assert index.status_code == 200
        assert b"runreplicates" not in index.content.lower()
        assert b"run replicates" not in index.content.lower()
