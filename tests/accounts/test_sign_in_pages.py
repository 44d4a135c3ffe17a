"""What the sign-in pages and the header offer, per configuration."""

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

GITHUB_NOTICE = (
    "GitHub sign-in is not configured on this server: set <code>GITHUB_CLIENT_ID</code> and "
    "<code>GITHUB_CLIENT_SECRET</code> (see <code>docs/accounts.md</code>)."
)
GITHUB_FORM = '<form method="post" action="/accounts/github/login/">'
GITHUB_BUTTON = '<button type="submit">Sign in with GitHub</button>'
LOCAL_LOGIN_FORM = '<form method="post" action="/accounts/login/">'


def page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/"])
def test_without_github_credentials_the_pages_say_how_to_turn_github_on(client, url):
    content = page(client, url)

    assert GITHUB_NOTICE in content
    assert GITHUB_FORM not in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/"])
def test_with_github_credentials_the_pages_show_the_github_button(client, url):
    content = page(client, url)

    assert GITHUB_FORM in content
    assert GITHUB_BUTTON in content
    assert GITHUB_NOTICE not in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_the_github_button_carries_the_next_page(client):
    content = page(client, "/accounts/login/?next=/boards/")

    assert '<input type="hidden" name="next" value="/boards/">' in content


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
def test_with_local_accounts_on_the_login_page_has_the_local_form(client):
    content = page(client, "/accounts/login/")

    assert LOCAL_LOGIN_FORM in content
    assert 'name="login"' in content
    assert 'name="password"' in content
    assert '<a href="/accounts/signup/">Create one</a>' in content


@pytest.mark.usefixtures("local_accounts_off", "github_configured")
def test_with_local_accounts_off_the_login_page_offers_only_github(client):
    content = page(client, "/accounts/login/")

    assert GITHUB_BUTTON in content
    assert LOCAL_LOGIN_FORM not in content
    assert 'name="password"' not in content
    assert "/accounts/signup/" not in content


@pytest.mark.usefixtures("github_unconfigured")
def test_the_header_offers_sign_in_to_visitors(client):
    content = page(client, "/")

    assert '<a href="/accounts/login/">Sign in</a>' in content
    assert "Sign out" not in content


@pytest.mark.usefixtures("github_unconfigured")
def test_the_header_names_the_signed_in_user_and_offers_sign_out(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="ada"))

    content = page(client, "/")

    assert "<span>Signed in as ada</span>" in content
    assert '<form method="post" action="/accounts/logout/">' in content
    assert '<a href="/accounts/login/">Sign in</a>' not in content


def test_signing_out_is_a_post_that_ends_the_session(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="ada"))

    response = client.post("/accounts/logout/")

    assert (response.status_code, response["Location"]) == (302, "/")
    assert "_auth_user_id" not in client.session
