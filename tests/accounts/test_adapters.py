"""Local accounts through allauth's real views: on by default, off with PODIUM_LOCAL_ACCOUNTS."""

import pytest

from accounts.adapters import LOCAL_ACCOUNTS_OFF_MESSAGE
from accounts.models import User
from tests.accounts.factories import PASSWORD, UserFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SIGNUP = {
    "username": "ada",
    "email": "ada@example.org",
    "password1": PASSWORD,
    "password2": PASSWORD,
}


def signed_in_user_id(client) -> int | None:
    user_id = client.session.get("_auth_user_id")
    return int(user_id) if user_id is not None else None


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
def test_local_signup_creates_the_user_and_signs_them_in(client):
    response = client.post("/accounts/signup/", SIGNUP)

    assert (response.status_code, response["Location"]) == (302, "/")
    user = User.objects.get()
    assert (user.username, user.email, user.check_password(PASSWORD)) == (
        "ada",
        "ada@example.org",
        True,
    )
    assert signed_in_user_id(client) == user.pk


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
@pytest.mark.parametrize("login", ["ada", "ada@example.org"])
def test_local_sign_in_accepts_the_username_or_the_email(client, login):
    user = UserFactory(username="ada", email="ada@example.org")

    response = client.post("/accounts/login/", {"login": login, "password": PASSWORD})

    assert (response.status_code, response["Location"]) == (302, "/")
    assert signed_in_user_id(client) == user.pk


@pytest.mark.usefixtures("local_accounts_off", "github_configured")
def test_with_local_accounts_off_the_signup_page_is_closed(client):
    response = client.get("/accounts/signup/")

    assert response.status_code == 200
    assert response.templates[0].name == "account/signup_closed.html"
    content = response.content.decode()
    assert "<h1>Sign-up closed</h1>" in content
    assert 'name="password1"' not in content


@pytest.mark.usefixtures("local_accounts_off", "github_configured")
def test_with_local_accounts_off_a_signup_post_creates_nobody(client):
    response = client.post("/accounts/signup/", SIGNUP)

    assert response.templates[0].name == "account/signup_closed.html"
    assert list(User.objects.all()) == []
    assert signed_in_user_id(client) is None


@pytest.mark.usefixtures("local_accounts_off", "github_configured")
def test_with_local_accounts_off_a_password_sign_in_is_refused(client):
    UserFactory(username="ada")

    response = client.post("/accounts/login/", {"login": "ada", "password": PASSWORD})

    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [LOCAL_ACCOUNTS_OFF_MESSAGE]
    assert LOCAL_ACCOUNTS_OFF_MESSAGE in response.content.decode()
    assert signed_in_user_id(client) is None


@pytest.mark.usefixtures("local_accounts_off", "github_configured")
def test_with_local_accounts_off_staff_still_sign_in_on_the_admin_login(client):
    # The admin's login is Django's own and deliberately not switched off (docs/accounts.md).
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)

    response = client.post(
        "/admin/login/", {"username": "root", "password": PASSWORD, "next": "/admin/"}
    )

    assert (response.status_code, response["Location"]) == (302, "/admin/")
    assert signed_in_user_id(client) == staff.pk
