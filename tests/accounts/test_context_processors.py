import pytest
from allauth.socialaccount.models import SocialApp
from django.test import RequestFactory

from accounts.context_processors import sign_in_options

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.usefixtures("local_accounts_off", "github_unconfigured")
def test_github_enabled_costs_no_query_until_a_template_reads_it(django_assert_num_queries):
    request = RequestFactory().get("/")

    with django_assert_num_queries(0):
        options = sign_in_options(request)
    with django_assert_num_queries(1):  # allauth looks for SocialApp rows too
        github_enabled = bool(options["github_enabled"])

    assert (github_enabled, options["local_accounts_enabled"]) == (False, False)


@pytest.mark.usefixtures("local_accounts_on", "github_configured")
def test_github_is_enabled_by_the_environment_settings():
    options = sign_in_options(RequestFactory().get("/"))

    assert (bool(options["github_enabled"]), options["local_accounts_enabled"]) == (True, True)


@pytest.mark.usefixtures("github_unconfigured")
def test_github_is_also_enabled_by_a_social_app_row():
    SocialApp.objects.create(provider="github", name="GitHub", client_id="id", secret="secret")

    options = sign_in_options(RequestFactory().get("/"))

    assert bool(options["github_enabled"]) is True
