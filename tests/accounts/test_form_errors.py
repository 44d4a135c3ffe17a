"""A sign-up field's error is the one its input names (issue 32, point 10): Django describes
an input with errors by `<id>_error` (`aria-describedby`), and allauth's field template gave
the list another id, so a screen reader never read the error when the field was focused."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_a_refused_sign_up_field_is_described_by_its_error(client, local_accounts_on):
    response = client.post(
        "/accounts/signup/",
        {"email": "not-an-address", "username": "maria", "password1": "x", "password2": "y"},
    )

    content = response.content.decode()
    email = re.search(r"<input[^>]*name=\"email\"[^>]*>", content).group(0)
    described_by = re.search(r'aria-describedby="([^"]*)"', email).group(1).split()
    assert re.search(r'aria-invalid="true"', email)
    error_ids = re.findall(r'<ul class="errorlist" id="([^"]*)"', content)
    assert "id_email_error" in error_ids
    assert "id_email_error" in described_by
