"""Who sees other people's entries (issue 11, point 9): one predicate,
`accounts.roles.can_view_all_entries`, asked by the site, the API and the admin alike.

The viewers: the entry's owner; maintainers and superusers (who see every entry); a staff user
without the Maintainers role, and one who was also handed the entries' view permissions one by
one, who both see what any signed-in stranger sees (404 on the site and the API, 403 in the
admin). The entry is evaluate-only, the case that must never leak. Hidden benchmarks follow the
same circle (`can_view_hidden_benchmarks`), in the page, the API's list, detail, rankings and
submit endpoint alike.
"""

import pytest
from django.contrib.auth.models import AnonymousUser, Permission
from django.urls import reverse
from rest_framework.test import APIClient

from accounts import roles
from accounts.services import create_api_token
from benchmark.services import update_benchmark
from core import audit
from tests.accounts.factories import UserFactory, maintainer_user

from .factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

# What a maintainer's role lets them read, handed to a staff user directly instead.
ENTRY_VIEW_PERMISSIONS = [
    "view_submission",
    "view_evaluation",
    "view_judgejob",
    "view_verdict",
    "view_auditevent",
]


def staff_with_view_permissions():
    user = UserFactory(is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=ENTRY_VIEW_PERMISSIONS))
    return user


VIEWERS = {
    "maintainer": maintainer_user,
    "superuser": lambda: UserFactory(is_staff=True, is_superuser=True),
    "staff-only": lambda: UserFactory(is_staff=True),
    "staff-with-view-permissions": staff_with_view_permissions,
    "stranger": UserFactory,
}
SEES_EVERY_ENTRY = {"maintainer", "superuser"}


@pytest.fixture
def secret(benchmark):
    """Someone's evaluate-only entry with a scored run and an audit row."""
    entry = scored_entry(benchmark, "Secret model", {}, publish=False)
    audit.record("submissions.test.recorded", actor=entry.owner, target=entry)
    return entry


def api_client(user):
    _, raw = create_api_token(user, name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


# --- the predicate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_user", "expected"),
    [
        (maintainer_user, True),
        (lambda: UserFactory(is_staff=True, is_superuser=True), True),
        # A superuser sees everything the admin shows, whether or not they may enter it.
        (lambda: UserFactory(is_superuser=True), True),
        (lambda: UserFactory(is_staff=True), False),
        (staff_with_view_permissions, False),
        # In the group but not staff: not a maintainer (roles.is_maintainer), so not here either.
        (lambda: maintainer_user(is_staff=False), False),
        (lambda: maintainer_user(is_active=False), False),
        (lambda: UserFactory(is_staff=True, is_superuser=True, is_active=False), False),
        (UserFactory, False),
        (AnonymousUser, False),
    ],
    ids=[
        "maintainer",
        "staff-superuser",
        "superuser",
        "staff-only",
        "staff-with-view-permissions",
        "group-not-staff",
        "inactive-maintainer",
        "inactive-superuser",
        "user",
        "anonymous",
    ],
)
def test_can_view_all_entries_means_maintainers_and_superusers(make_user, expected):
    user = make_user()

    assert roles.can_view_all_entries(user) is expected
    assert roles.can_view_hidden_benchmarks(user) is expected


# --- the site ----------------------------------------------------------------------------------


@pytest.mark.parametrize("viewer", list(VIEWERS))
def test_the_site_shows_an_evaluate_only_entry_to_its_owner_and_the_entry_viewers_only(
    client, secret, viewer
):
    pages = [
        f"/submissions/{secret.pk}/",
        f"/submissions/{secret.pk}/status/",
        f"/submissions/{secret.pk}/judge/",
    ]
    client.force_login(secret.owner)
    assert [client.get(url).status_code for url in pages] == [200, 200, 200]

    client.force_login(VIEWERS[viewer]())
    statuses = [client.get(url).status_code for url in pages]
    # The owner's endpoint form is found as the status page is, then refused to anyone else.
    endpoint_form = client.get(f"/submissions/{secret.pk}/model-endpoint/").status_code

    if viewer in SEES_EVERY_ENTRY:
        assert statuses == [200, 200, 200]
        assert endpoint_form in {200, 403}
    else:
        assert (statuses, endpoint_form) == ([404, 404, 404], 404)
    if viewer in SEES_EVERY_ENTRY:
        assert "Secret model" in client.get(pages[0]).content.decode()


# --- the API -----------------------------------------------------------------------------------


@pytest.mark.parametrize("viewer", list(VIEWERS))
def test_the_api_shows_an_evaluate_only_entry_to_its_owner_and_the_entry_viewers_only(
    secret, viewer
):
    detail = reverse("api:submission-detail", args=[secret.pk])
    judge = reverse("api:judge-start", args=[secret.pk])
    assert api_client(secret.owner).get(detail).status_code == 200

    client = api_client(VIEWERS[viewer]())
    response = client.get(detail)
    start = client.post(judge)

    if viewer in SEES_EVERY_ENTRY:
        assert (response.status_code, response.json()["model_name"]) == (200, "Secret model")
        assert start.status_code != 404
    else:
        assert (response.status_code, response.json()) == (
            404,
            {"detail": "No such submission.", "code": "not_found"},
        )
        assert (start.status_code, start.json()) == (
            404,
            {"detail": "No such submission.", "code": "not_found"},
        )
    # The list is the viewer's own entries, whoever they are.
    assert client.get(reverse("api:submission-list")).json() == []


# --- the admin ---------------------------------------------------------------------------------


ADMIN_LISTS = [
    "/admin/submissions/submission/",
    "/admin/submissions/evaluation/",
    "/admin/judging/judgejob/",
    "/admin/judging/verdict/",
    "/admin/core/auditevent/",
]


@pytest.mark.parametrize("viewer", list(VIEWERS))
def test_the_entry_admins_ask_the_same_predicate(client, secret, viewer):
    user = VIEWERS[viewer]()
    client.force_login(user)
    run = secret.evaluations.get()
    pages = [
        *ADMIN_LISTS,
        f"/admin/submissions/submission/{secret.pk}/change/",
        f"/admin/submissions/evaluation/{run.pk}/change/",
    ]

    statuses = [client.get(url).status_code for url in pages]
    index = client.get("/admin/")

    if viewer in SEES_EVERY_ENTRY:
        assert statuses == [200] * len(pages)
        assert "Secret model" in client.get(ADMIN_LISTS[0]).content.decode()
    elif user.is_staff:
        assert statuses == [403] * len(pages)
        # Not even named on the admin's index.
        assert index.status_code == 200
        for model in ("Submissions", "Evaluations", "Judge jobs", "Verdicts", "Audit events"):
            assert f">{model}<" not in index.content.decode()
    else:
        # Not staff: the admin's sign-in page.
        assert statuses == [302] * len(pages)


# --- hidden benchmarks -------------------------------------------------------------------------


@pytest.mark.parametrize("viewer", list(VIEWERS))
def test_a_hidden_benchmark_is_for_the_entry_viewers_on_every_channel(
    client, benchmark, perfect_predictions, viewer
):
    update_benchmark(benchmark, actor=None, is_public=False)
    user = VIEWERS[viewer]()
    client.force_login(user)
    api = api_client(user)
    site = [f"/b/{benchmark.slug}/", f"/b/{benchmark.slug}/about/", f"/b/{benchmark.slug}/submit/"]
    endpoints = [
        reverse("api:benchmark-detail", args=[benchmark.slug]),
        reverse("api:rankings", args=[benchmark.slug]),
    ]

    site_statuses = [client.get(url).status_code for url in site]
    api_statuses = [api.get(url).status_code for url in endpoints]
    listed = [row["slug"] for row in api.get(reverse("api:benchmark-list")).json()]
    submit = api.post(reverse("api:submit", args=[benchmark.slug]), {}, format="multipart")

    if viewer in SEES_EVERY_ENTRY:
        assert (site_statuses, api_statuses, listed) == ([200] * 3, [200] * 2, [benchmark.slug])
        assert submit.status_code == 400  # found; the empty form is refused field by field
    else:
        assert (site_statuses, api_statuses, listed) == ([404] * 3, [404] * 2, [])
        assert (submit.status_code, submit.json()["detail"]) == (404, "No such benchmark.")
