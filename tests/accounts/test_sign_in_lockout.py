"""Password guessing: every sign-in path (the site's, through allauth, and /admin/login/) is locked
after 5 failures for one account from one address, or 30 from one address, counted in the database
(django-axes), with a page that says when to try again. The right password is refused too while
locked. In process here; across real gunicorn workers in test_sign_in_lockout_gunicorn.py."""

import re
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from tests.accounts.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ADMIN_LOGIN = "/admin/login/"
SITE_LOGIN = "/accounts/login/"
ADMIN_WRONG = "Please enter the correct username and password for a staff account."
SITE_WRONG = "The username and/or password you specified are not correct."
SITE_WRONG_EMAIL = "The email address and/or password you specified are not correct."
LOCKED_TITLE = "<h1>Too many failed sign-ins</h1>"
LIMIT = 5


@pytest.fixture(autouse=True)
def _local_accounts(local_accounts_on):
    """Password sign-in on the site needs local accounts on."""


@pytest.fixture
def maria():
    return UserFactory(username="Maria", email="maria@example.org", is_staff=True)


def sign_in(path: str, login: str, password: str, address: str = "192.0.2.10", **headers):
    """A fresh client (no cookie carries anything over) posting one sign-in form."""
    client = Client(REMOTE_ADDR=address, **headers)
    field = "username" if path == ADMIN_LOGIN else "login"
    response = client.post(path, {field: login, "password": password})
    return response, client


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def outcome(response) -> str:
    """ "wrong", "locked", or "signed in": what the person saw."""
    content = response.content.decode()
    if response.status_code == 429 and LOCKED_TITLE in content:
        return "locked"
    if response.status_code == 302:
        return "signed in"
    assert response.status_code == 200, response.status_code
    assert any(message in content for message in (ADMIN_WRONG, SITE_WRONG, SITE_WRONG_EMAIL))
    return "wrong"


@pytest.mark.parametrize("path", [ADMIN_LOGIN, SITE_LOGIN])
def test_after_five_wrong_passwords_even_the_right_one_is_refused(maria, path):
    outcomes = [outcome(sign_in(path, "Maria", f"guess-{n}")[0]) for n in range(LIMIT + 2)]
    response, client = sign_in(path, "Maria", PASSWORD)

    assert outcomes == ["wrong"] * (LIMIT - 1) + ["locked"] * 3
    assert outcome(response) == "locked"
    assert not signed_in(client)
    # Attempts while locked out are refused without being counted: the time to wait holds.
    assert AccessAttempt.objects.get().failures_since_start == LIMIT


def test_the_lockout_page_says_when_to_try_again(maria):
    for n in range(LIMIT):
        response, _ = sign_in(ADMIN_LOGIN, "Maria", f"guess-{n}")
    last_failure = AccessAttempt.objects.get().attempt_time
    ends_at = last_failure + timedelta(minutes=15)

    content = response.content.decode()
    assert response.status_code == 429
    assert int(response["Retry-After"]) in range(895, 901)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", content))
    assert (
        f"Password sign-in is paused for this account from your address after too many wrong "
        f"passwords. Try again after {ends_at:%H:%M} UTC (in about 15 minutes). Attempts before "
        f"then are refused without being checked, even with the right password."
    ) in text
    assert (
        "A sign-in is paused after 5 wrong passwords for one account from one address, or 30 "
        "from one address for any accounts, within 15 minutes."
    ) in text
    assert "Traceback" not in content


def test_the_site_and_the_admin_share_one_count_whatever_the_spelling(maria):
    """The admin's `username`, the site's username or email address, any letter case: one
    account, one count."""
    attempts = [
        (ADMIN_LOGIN, "Maria"),
        (SITE_LOGIN, "maria"),
        (SITE_LOGIN, "MARIA@example.org"),
        (ADMIN_LOGIN, "mAria"),
    ]
    outcomes = [outcome(sign_in(path, login, "wrong")[0]) for path, login in attempts]
    fifth = outcome(sign_in(SITE_LOGIN, "maria@example.org", "wrong")[0])

    assert outcomes == ["wrong"] * 4
    assert fifth == "locked"
    assert outcome(sign_in(ADMIN_LOGIN, "Maria", PASSWORD)[0]) == "locked"
    assert list(AccessAttempt.objects.values_list("username", flat=True).distinct()) == ["maria"]


def test_the_lock_is_for_the_account_at_that_address_only(maria):
    for n in range(LIMIT):
        sign_in(SITE_LOGIN, "Maria", f"guess-{n}")
    other = UserFactory(username="omar")

    from_elsewhere, client = sign_in(SITE_LOGIN, "Maria", PASSWORD, address="198.51.100.4")
    another_account, _ = sign_in(SITE_LOGIN, other.username, PASSWORD)

    assert outcome(from_elsewhere) == "signed in"
    assert signed_in(client)
    assert outcome(another_account) == "signed in"


def test_a_forged_x_forwarded_for_does_not_escape_the_lock(maria):
    for n in range(LIMIT):
        sign_in(ADMIN_LOGIN, "Maria", f"guess-{n}", HTTP_X_FORWARDED_FOR=f"203.0.113.{n}")

    response, _ = sign_in(ADMIN_LOGIN, "Maria", PASSWORD, HTTP_X_FORWARDED_FOR="203.0.113.99")

    assert outcome(response) == "locked"


def test_addresses_of_one_ipv6_64_network_share_one_count(maria):
    outcomes = [
        outcome(sign_in(SITE_LOGIN, "Maria", "guess", address=f"2001:db8:5:6::{n:x}")[0])
        for n in range(1, LIMIT + 1)
    ]

    assert outcomes == ["wrong"] * (LIMIT - 1) + ["locked"]
    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD, address="2001:db8:5:6:ffff::1")[0]) == (
        "locked"
    )
    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD, address="2001:db8:5:7::1")[0]) == (
        "signed in"
    )


def test_thirty_failures_from_one_address_lock_it_for_every_account(maria):
    """Password spraying: a few guesses at many accounts. The address limit is higher than the
    account's, so a few people behind one shared address mistyping do not lock each other out."""
    outcomes = [outcome(sign_in(SITE_LOGIN, f"user{n}", "password1")[0]) for n in range(30)]

    assert outcomes == ["wrong"] * 29 + ["locked"]
    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD)[0]) == "locked"
    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD, address="198.51.100.4")[0]) == (
        "signed in"
    )


def test_the_lock_ends_after_the_cool_off(maria):
    for n in range(LIMIT):
        sign_in(ADMIN_LOGIN, "Maria", f"guess-{n}")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))

    response, client = sign_in(ADMIN_LOGIN, "Maria", PASSWORD)

    assert outcome(response) == "signed in"
    assert signed_in(client)


@pytest.mark.parametrize(
    ("command", "argument"),
    [("axes_reset_username", "maria"), ("axes_reset_ip", "192.0.2.10"), ("axes_reset", None)],
)
def test_a_superuser_unlocks_with_axes_commands(maria, command, argument):
    for n in range(LIMIT):
        sign_in(SITE_LOGIN, "Maria", f"guess-{n}")

    call_command(command, *([argument] if argument else []), stdout=open("/dev/null", "w"))  # noqa: SIM115

    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD)[0]) == "signed in"


def test_a_superuser_unlocks_in_the_admin(maria):
    for n in range(LIMIT):
        sign_in(SITE_LOGIN, "Maria", f"guess-{n}")
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    attempt = AccessAttempt.objects.get()

    listing = admin.get("/admin/axes/accessattempt/")
    deleted = admin.post(
        f"/admin/axes/accessattempt/{attempt.pk}/delete/", {"post": "yes"}, follow=True
    )

    assert listing.status_code == 200
    assert "maria" in listing.content.decode()
    assert deleted.status_code == 200
    assert not AccessAttempt.objects.exists()
    assert outcome(sign_in(SITE_LOGIN, "Maria", PASSWORD)[0]) == "signed in"
