"""The entry owner's "Model endpoint for verification": the box on the entry page, the form
that registers the endpoint with its key, and that the key is never rendered anywhere
afterwards (the pages, the form, the API)."""

import pytest
from django.contrib.auth.models import Group

from accounts.roles import MAINTAINERS_GROUP
from tests.accounts.factories import UserFactory
from tests.submissions.pages import required_marks
from verifying.models import ModelEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SECRET = "sk-model-owner-0123456789abcdef"


@pytest.fixture
def owner_client(client, access_granted):
    client.force_login(access_granted.owner)
    return client


def url(submission):
    return f"/submissions/{submission.pk}/model-endpoint/"


def test_the_owner_registers_the_endpoint_and_the_key_is_never_shown_again(
    owner_client, access_granted
):
    before = owner_client.get(access_granted.get_absolute_url()).content.decode()
    assert "No endpoint is registered yet." in before
    assert f'href="{url(access_granted)}">Register your model\'s endpoint</a>' in before

    response = owner_client.post(
        url(access_granted),
        {"base_url": "https://models.example.org/v1", "model": "surgvlm-7b", "api_key": SECRET},
        follow=True,
    )

    endpoint = ModelEndpoint.objects.get()
    assert (endpoint.submission, endpoint.model, endpoint.created_by) == (
        access_granted,
        "surgvlm-7b",
        access_granted.owner,
    )
    assert endpoint.config().api_key == SECRET
    assert endpoint.api_key_origin == "https://models.example.org:443"
    page = response.content.decode()
    assert "Its key is stored encrypted and will not be shown again." in page
    assert f"<dt>API key</dt><dd>{endpoint.key_status}</dd>" in page
    form = owner_client.get(url(access_granted)).content.decode()
    assert '<input type="password" name="api_key" autocomplete="new-password"' in form
    api = owner_client.get(f"/api/v1/submissions/{access_granted.pk}/").content.decode()
    for shown in (page, form, api):
        assert SECRET not in shown
        assert endpoint.api_key_encrypted not in shown


def test_the_required_fields_are_marked_and_the_mark_explained(owner_client, access_granted):
    # Issue 32, point 10: the key may be left blank, the rest may not.
    marked, required, legend = required_marks(
        owner_client.get(url(access_granted)).content.decode()
    )

    assert marked == required == ["id_base_url", "id_model"]
    assert legend


def test_a_refused_form_does_not_send_the_key_back(owner_client, access_granted):
    response = owner_client.post(
        url(access_granted),
        {"base_url": "https://user:pw@models.example.org/v1", "model": "m", "api_key": SECRET},
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert "Give the base URL without a user name, password, query or fragment" in page
    assert SECRET not in page
    assert ModelEndpoint.objects.count() == 0


def test_a_maintainer_sees_the_endpoint_but_may_not_use_the_owners_form(client, access_granted):
    ModelEndpoint.objects.create(
        submission=access_granted, base_url="http://127.0.0.1:9/v1", model="surgvlm-7b"
    )
    maintainer = UserFactory(is_staff=True)
    maintainer.groups.add(Group.objects.get(name=MAINTAINERS_GROUP))
    client.force_login(maintainer)

    page = client.get(access_granted.get_absolute_url()).content.decode()
    refused = client.post(
        url(access_granted), {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "k"}
    )

    assert "<dt>API key</dt><dd>not set</dd>" in page
    assert url(access_granted) not in page
    assert (client.get(url(access_granted)).status_code, refused.status_code) == (403, 403)
    assert ModelEndpoint.objects.count() == 1


def test_someone_elses_entry_is_not_found(client, access_granted):
    client.force_login(UserFactory())

    assert client.get(url(access_granted)).status_code == 404
    assert client.post(url(access_granted), {"base_url": "x", "model": "m"}).status_code == 404
    assert ModelEndpoint.objects.count() == 0


def test_the_form_is_pre_filled_only_from_the_owners_own_endpoint(owner_client, access_granted):
    ModelEndpoint.objects.create(
        submission=access_granted,
        base_url="https://chosen-by-someone-else.example.org/v1",
        model="surgvlm-7b",
        created_by=UserFactory(is_staff=True, is_superuser=True),
    )

    form = owner_client.get(url(access_granted)).content.decode()

    assert 'name="base_url" maxlength="300" required' in form
    assert 'value="https://chosen-by-someone-else.example.org/v1"' not in form
    assert "chosen-by-someone-else" in form  # named in the "Now:" line, not pre-filled


def test_an_address_without_its_scheme_is_refused_saying_what_a_base_url_looks_like(
    owner_client, access_granted
):
    response = owner_client.post(
        url(access_granted), {"base_url": "models.example.org/v1", "model": "m", "api_key": ""}
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert (
        '<ul class="errorlist" id="id_base_url_error"><li>Give the whole address, starting with '
        "https:// (or http://), e.g. https://models.example.org/v1.</li></ul>"
    ) in page
    assert ModelEndpoint.objects.count() == 0
