"""The API tokens page (/account/tokens/): listing, creating (the raw token shown once), revoking,
a token authenticating the API, and the read-only admin."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import ApiToken
from accounts.services import MAX_ACTIVE_TOKENS, create_api_token, hash_token, revoke_api_token
from tests.accounts.factories import UserFactory
from tests.submissions.pages import required_marks

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

URL = "/account/tokens/"
# "pod_" and secrets.token_urlsafe(32): 43 characters of the URL-safe base64 alphabet.
RAW_TOKEN = re.compile(r"pod_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
SHOWN_ONCE = "Copy it now; it will not be shown again."


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


def test_the_url_is_named_and_distinct_from_allauths_pages():
    assert reverse("accounts:tokens") == URL
    assert reverse("accounts:revoke-token", args=[7]) == "/account/tokens/7/revoke/"


def test_the_page_requires_sign_in(client):
    response = client.get(URL)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/account/tokens/"


def test_revoking_requires_sign_in(client, user):
    token, _ = create_api_token(user, name="laptop")

    response = client.post(f"/account/tokens/{token.pk}/revoke/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    token.refresh_from_db()
    assert token.revoked_at is None


def test_without_tokens_the_page_says_so(signed_in):
    response = signed_in.get(URL)

    assert response.status_code == 200
    assert [template.name for template in response.templates[:2]] == [
        "accounts/tokens.html",
        "base.html",
    ]
    assert "You have no API tokens yet." in response.content.decode()


def test_creating_shows_the_raw_token_once_and_stores_only_its_hash(signed_in, user):
    created = signed_in.post(URL, {"name": "  nightly eval script  "})
    # Answered with a redirect: a refresh of the page that follows creates nothing.
    assert (created.status_code, created["Location"]) == (302, URL)
    assert RAW_TOKEN.findall(created.content.decode()) == []
    response = signed_in.get(URL)

    assert response.status_code == 200
    content = response.content.decode()
    raw_tokens = RAW_TOKEN.findall(content)
    assert len(raw_tokens) == 1
    raw = raw_tokens[0]
    assert len(raw) == 47
    assert SHOWN_ONCE in content
    assert "no-store" in response["Cache-Control"]

    token = ApiToken.objects.get()
    assert (token.user, token.name, token.prefix) == (user, "nightly eval script", raw[:10])
    assert token.key_hash == hash_token(raw)
    assert raw not in {token.name, token.prefix, token.key_hash}

    again = signed_in.get(URL).content.decode()
    assert raw not in again
    assert RAW_TOKEN.findall(again) == []
    assert SHOWN_ONCE not in again
    assert f"<code>{token.prefix}…</code>" in again
    assert token.key_hash not in again


def test_the_list_shows_names_prefixes_and_states_but_never_a_hash(signed_in, user):
    used, _ = create_api_token(user, name="workstation")
    ApiToken.objects.filter(pk=used.pk).update(last_used_at=datetime(2025, 3, 4, 5, 6, tzinfo=UTC))
    revoked, _ = create_api_token(user, name="old laptop")
    revoke_api_token(revoked, actor=user)
    others, _ = create_api_token(UserFactory(), name="someone else's")

    content = signed_in.get(URL).content.decode()

    assert '<th scope="row">workstation</th>' in content
    assert '<th scope="row">old laptop</th>' in content
    assert "someone else&#x27;s" not in content
    assert others.prefix not in content
    assert "2025-03-04 05:06" in content
    assert "<td>never</td>" in content
    assert content.count("Revoked ") == 1
    assert content.count(">Active</span>") == 1
    # Only the active token has a revoke button.
    assert f'action="/account/tokens/{used.pk}/revoke/"' in content
    assert f'action="/account/tokens/{revoked.pk}/revoke/"' not in content
    for token in ApiToken.objects.all():
        assert token.key_hash not in content


@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_name_is_an_error_and_creates_nothing(signed_in, name):
    response = signed_in.post(URL, {"name": name})

    assert response.status_code == 200
    content = response.content.decode()
    assert "This field is required." in content
    assert RAW_TOKEN.findall(content) == []
    assert ApiToken.objects.count() == 0


def test_a_refusal_from_the_service_is_shown_on_the_form(signed_in, user):
    for number in range(MAX_ACTIVE_TOKENS):
        create_api_token(user, name=f"script {number}")

    response = signed_in.post(URL, {"name": "one too many"})

    assert response.status_code == 200
    content = response.content.decode()
    assert f"You have {MAX_ACTIVE_TOKENS} active tokens; revoke one you no longer use." in content
    assert RAW_TOKEN.findall(content) == []
    assert ApiToken.objects.count() == MAX_ACTIVE_TOKENS


def test_revoking_an_own_token(signed_in, user):
    token, _ = create_api_token(user, name="laptop")

    response = signed_in.post(f"/account/tokens/{token.pk}/revoke/", follow=True)

    assert response.redirect_chain == [(URL, 302)]
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert "Token “laptop” revoked; scripts using it are now refused." in (
        response.content.decode()
    )


def test_revoking_is_post_only(signed_in, user):
    token, _ = create_api_token(user, name="laptop")

    response = signed_in.get(f"/account/tokens/{token.pk}/revoke/")

    assert response.status_code == 405
    token.refresh_from_db()
    assert token.revoked_at is None


def test_someone_elses_token_is_not_found(signed_in):
    token, _ = create_api_token(UserFactory(), name="theirs")

    response = signed_in.post(f"/account/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def _page_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL)
    assert response.status_code == 200
    return len(queries)


def test_the_list_costs_the_same_queries_for_one_token_and_three(signed_in, user):
    create_api_token(user, name="first")
    with_one = _page_queries(signed_in)
    create_api_token(user, name="second")
    create_api_token(user, name="third")

    assert _page_queries(signed_in) == with_one


# --- the token on the API ------------------------------------------------------------------------


def test_a_new_token_authenticates_the_api_and_records_its_use(signed_in, client, user):
    raw = RAW_TOKEN.findall(signed_in.post(URL, {"name": "script"}, follow=True).content.decode())[
        0
    ]
    client.logout()  # the token alone, not the session

    response = client.get(reverse("api:submission-list"), HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert response.status_code == 200
    assert response.json() == []
    assert ApiToken.objects.get().last_used_at is not None


def test_the_token_authenticates_the_benchmark_list(client, user):
    _, raw = create_api_token(user, name="script")

    response = client.get(reverse("api:benchmark-list"), HTTP_AUTHORIZATION=f"Bearer {raw}")

    assert response.status_code == 200
    assert ApiToken.objects.get().last_used_at is not None


def test_a_token_revoked_on_the_page_is_refused(signed_in, client, user):
    token, raw = create_api_token(user, name="script")
    signed_in.post(f"/account/tokens/{token.pk}/revoke/")
    client.logout()

    for url in (reverse("api:submission-list"), reverse("api:benchmark-list")):
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {raw}")

        assert response.status_code == 401
        assert response.json()["detail"] == "Invalid or revoked token."


# --- the admin ---------------------------------------------------------------------------------


def test_the_admin_lists_tokens_read_only(client, user):
    token, _ = create_api_token(user, name="laptop")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))

    changelist = client.get("/admin/accounts/apitoken/")
    change = client.get(f"/admin/accounts/apitoken/{token.pk}/change/")
    add = client.get("/admin/accounts/apitoken/add/")

    assert changelist.status_code == 200
    content = changelist.content.decode()
    assert "laptop" in content
    assert token.prefix in content
    assert token.key_hash not in content
    assert change.status_code == 200
    assert token.key_hash not in change.content.decode()
    assert 'name="_save"' not in change.content.decode()
    assert add.status_code == 403


def test_refreshing_after_creating_creates_no_second_token_and_shows_nothing_again(signed_in, user):
    signed_in.post(URL, {"name": "laptop"}, follow=True)
    again = signed_in.get(URL).content.decode()

    assert ApiToken.objects.count() == 1
    assert RAW_TOKEN.findall(again) == []
    assert SHOWN_ONCE not in again


def test_the_raw_token_travels_encrypted_and_a_stale_one_is_never_shown(signed_in, user):
    from accounts.views import NEW_TOKEN_SESSION_KEY

    signed_in.post(URL, {"name": "laptop"})
    carried = signed_in.session[NEW_TOKEN_SESSION_KEY]
    token = ApiToken.objects.get()
    assert token.prefix not in carried["value"]  # Fernet ciphertext, not the token
    ApiToken.objects.filter(pk=token.pk).update(created_at=token.created_at - timedelta(hours=1))

    content = signed_in.get(URL).content.decode()

    assert RAW_TOKEN.findall(content) == []
    assert NEW_TOKEN_SESSION_KEY not in signed_in.session


def test_the_token_name_is_marked_required(signed_in):
    # Issue 32, point 10.
    marked, required, legend = required_marks(signed_in.get(URL).content.decode())

    assert marked == required == ["id_name"]
    assert legend
