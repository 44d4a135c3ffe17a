import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from accounts.models import User


@pytest.mark.unit
def test_the_custom_user_model_is_active():
    assert settings.AUTH_USER_MODEL == "accounts.User"
    assert get_user_model() is User


@pytest.mark.integration
@pytest.mark.django_db
def test_a_user_is_saved_with_a_hashed_password():
    user = User.objects.create_user(username="ada", email="ada@example.org", password="s3cret-pw")

    assert User.objects.get(pk=user.pk).username == "ada"
    assert user.check_password("s3cret-pw") is True
    assert user.password != "s3cret-pw"
