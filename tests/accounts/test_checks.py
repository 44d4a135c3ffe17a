import pytest

from accounts.checks import check_someone_can_sign_in

pytestmark = pytest.mark.unit


@pytest.mark.usefixtures("local_accounts_off", "github_unconfigured")
def test_the_check_fails_when_nobody_could_sign_in():
    messages = check_someone_can_sign_in(None)

    assert [message.id for message in messages] == ["accounts.E001"]


@pytest.mark.parametrize(
    "fixtures",
    [
        ("local_accounts_on", "github_unconfigured"),
        ("local_accounts_off", "github_configured"),
        ("local_accounts_on", "github_configured"),
    ],
)
def test_the_check_passes_with_any_way_to_sign_in(request, fixtures):
    for fixture in fixtures:
        request.getfixturevalue(fixture)

    assert check_someone_can_sign_in(None) == []
