"""What the sign-in pages and the header offer, per configuration and per viewer."""

import re

import pytest
from allauth.account.forms import default_token_generator
from allauth.account.utils import user_pk_to_url_str

from tests.benchmark.factories import BenchmarkFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

OPERATOR_HINT = (
    "GitHub sign-in is not configured: set <code>GITHUB_CLIENT_ID</code> and "
    "<code>GITHUB_CLIENT_SECRET</code> (see <code>docs/accounts.md</code>)"
)
GITHUB_FORM = '<form method="post" action="/accounts/github/login/">'
GITHUB_BUTTON = "<span>Sign in with GitHub</span>"
LOCAL_LOGIN_FORM = '<form method="post" action="/accounts/login/" class="account-form">'
TABS = '<nav class="tabs" aria-label="MedVidBench">'


@pytest.fixture
def medvidbench_public():
    """The only public benchmark: its tabs are the sign-in pages' tabs."""
    return BenchmarkFactory(slug="medvidbench", name="MedVidBench", is_public=True)


@pytest.fixture
def two_hidden_and_public():
    return [
        BenchmarkFactory(slug="medvidbench", name="MedVidBench", is_public=False),
        BenchmarkFactory(slug="other", name="Other", is_public=True),
        BenchmarkFactory(slug="third", name="Third", is_public=True),
    ]


def page(client, url: str, *, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status
    return response.content.decode()


def squash(content: str) -> str:
    """The page with the whitespace allauth's templates put around text inside tags removed."""
    return re.sub(r"\s*(<[^>]+>)\s*", r"\1", re.sub(r"\s+", " ", content))


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/"])
def test_without_github_credentials_visitors_see_no_operator_text_and_no_button(client, url):
    content = page(client, url)

    assert "GITHUB_CLIENT_ID" not in content
    assert "docs/accounts.md" not in content
    assert GITHUB_FORM not in content


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
def test_without_github_credentials_a_superuser_reads_how_to_turn_github_on(
    client, django_user_model
):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.org", "pw"))

    content = page(client, "/accounts/3rdparty/")

    assert OPERATOR_HINT in content
    assert GITHUB_FORM not in content


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
def test_on_a_debug_machine_everyone_reads_how_to_turn_github_on(client, settings):
    settings.DEBUG = True

    assert OPERATOR_HINT in page(client, "/accounts/login/")


@pytest.mark.usefixtures("local_accounts_on", "github_unconfigured")
def test_a_signed_in_person_who_is_not_a_superuser_sees_no_operator_text(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="ada", is_staff=True))

    content = page(client, "/accounts/3rdparty/")

    assert "GITHUB_CLIENT_ID" not in content
    assert "No GitHub account is linked to this Podium account yet." in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_forgot_your_password_follows_the_password_input_not_its_label(client):
    content = page(client, "/accounts/login/")

    label = content.index('<label for="id_password">Password</label>')
    field = content.index('<input type="password" name="password"')
    forgot = content.index('<a href="/accounts/password/reset/">Forgot your password?</a>')
    assert label < field < forgot


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/"])
def test_with_github_credentials_the_pages_show_the_github_button(client, url):
    content = page(client, url)

    assert GITHUB_FORM in content
    assert GITHUB_BUTTON in content
    assert "GITHUB_CLIENT_ID" not in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_the_github_button_carries_the_next_page(client):
    content = page(client, "/accounts/login/?next=/boards/")

    assert '<input type="hidden" name="next" value="/boards/">' in content
    # The local form carries it too (allauth's redirect_field).
    assert content.count('name="next" value="/boards/"') == 2


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


def _layout_parts(content: str) -> dict[str, bool]:
    return {
        "site header": '<header class="site-header">' in content,
        "benchmark tabs": TABS in content,
        "site stylesheet": 'href="/static/css/podium.css"' in content,
        "no inline style": 'style="' not in content and "<style" not in content,
    }


LAYOUT = {
    "site header": True,
    "benchmark tabs": True,
    "site stylesheet": True,
    "no inline style": True,
}


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
@pytest.mark.parametrize(
    ("url", "heading", "status"),
    [
        ("/accounts/login/", "<h1>Sign in</h1>", 200),
        ("/accounts/signup/", "<h1>Create an account</h1>", 200),
        ("/accounts/password/reset/", "<h1>Password Reset</h1>", 200),
        ("/accounts/password/reset/done/", "<h1>Password Reset</h1>", 200),
        ("/accounts/password/reset/key/1-bad-key/", "<h1>Bad Token</h1>", 200),
        ("/accounts/password/reset/key/done/", "<h1>Change Password</h1>", 200),
        ("/accounts/confirm-email/not-a-key/", "<h1>Confirm Email Address</h1>", 200),
        ("/accounts/github/login/", "<h1>Sign In Via GitHub</h1>", 200),
        ("/accounts/3rdparty/login/cancelled/", "<h1>Login Cancelled</h1>", 200),
        ("/accounts/3rdparty/login/error/", "<h1>Third-Party Login Failure</h1>", 401),
    ],
)
def test_every_page_a_visitor_can_reach_is_in_the_site_layout_with_the_tabs(
    client, medvidbench_public, url, heading, status
):
    content = page(client, url, status=status)

    assert _layout_parts(content) == LAYOUT
    assert heading in squash(content)


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
@pytest.mark.parametrize(
    ("url", "heading"),
    [
        ("/accounts/logout/", "<h1>Sign Out</h1>"),
        ("/accounts/3rdparty/", "<h1>Connected accounts</h1>"),
        ("/accounts/email/", "<h1>Email Addresses</h1>"),
        ("/accounts/password/change/", "<h1>Change Password</h1>"),
    ],
)
def test_every_page_a_signed_in_person_can_reach_is_in_the_site_layout_with_the_tabs(
    client, django_user_model, medvidbench_public, url, heading
):
    user = django_user_model.objects.create_user(username="ada", email="ada@example.org")
    user.set_password("a-long-password-for-ada")
    user.save()
    client.force_login(user)

    content = page(client, url)

    assert _layout_parts(content) == LAYOUT
    assert heading in squash(content)


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_allauths_own_forms_get_the_site_form_and_primary_button(client, medvidbench_public):
    content = page(client, "/accounts/password/reset/")

    assert '<form method="post" action="/accounts/password/reset/" class="account-form">' in content
    assert '<label for="id_email">Email</label>' in content
    assert '<button type="submit" class="primary">Reset My Password</button>' in squash(content)


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_a_password_reset_from_a_real_key_offers_the_new_password_form(
    client, django_user_model, medvidbench_public
):
    user = django_user_model.objects.create_user(username="ada", email="ada@example.org")
    key = default_token_generator.make_token(user)
    url = f"/accounts/password/reset/key/{user_pk_to_url_str(user)}-{key}/"

    # allauth keeps the key in the session and redirects to a key-less address.
    response = client.get(url, follow=True)
    content = response.content.decode()

    assert response.status_code == 200
    assert _layout_parts(content) == LAYOUT
    assert "<h1>Change Password</h1>" in squash(content)
    assert '<label for="id_password1">New Password</label>' in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_the_tabs_follow_the_benchmark_the_next_page_is_in(client, medvidbench_public):
    content = page(client, "/accounts/login/?next=/b/medvidbench/submit/")

    assert TABS in content
    assert '<a href="/b/medvidbench/submit/">Submit</a>' in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_a_hidden_benchmark_in_next_gives_no_tabs_and_several_public_ones_none_either(
    client, two_hidden_and_public
):
    content = page(client, "/accounts/login/?next=/b/medvidbench/")

    assert '<nav class="tabs"' not in content
    assert "MedVidBench" not in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_with_several_public_benchmarks_next_chooses_the_tabs(client, two_hidden_and_public):
    content = page(client, "/accounts/signup/?next=/b/third/about/")

    assert '<nav class="tabs" aria-label="Third">' in content


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_the_sign_in_page_costs_two_queries_the_github_app_and_the_benchmark(
    client, medvidbench_public, django_assert_num_queries
):
    with django_assert_num_queries(2):
        client.get("/accounts/login/")


@pytest.mark.usefixtures("github_unconfigured")
def test_podiums_own_pages_get_no_benchmark_from_the_sign_in_context(client, two_hidden_and_public):
    # The benchmark list (several public benchmarks) shows no tabs: the context processor
    # gives `benchmark` only to allauth's pages.
    assert '<nav class="tabs"' not in page(client, "/")
