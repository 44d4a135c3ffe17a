"""The judge's key is a server secret (issue 10, point 3): a judge endpoint names only a
variable on PODIUM_JUDGE_KEY_ENV_ALLOWLIST, through every path (the service, the command, the
admin), never reads another, is seen and edited by superusers only, and submitters are told
only that no key is configured. A loopback server records what Authorization header the judge
sends."""

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from accounts.roles import MAINTAINERS_GROUP
from core.exceptions import JudgeUnavailable
from core.models import AuditEvent
from judging import services
from judging.models import JudgeEndpoint
from tests.accounts.factories import UserFactory
from verifying.standin import StandinModel

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SERVER_SECRETS = {
    "SECRET_KEY": "django-secret-key-from-the-environment-0123456789",
    "DATABASE_URL": "postgres://podium:db-password-0123@127.0.0.1:5432/podium",
    "EMAIL_HOST_PASSWORD": "smtp-password-0123456789",
    "GITHUB_CLIENT_SECRET": "github-client-secret-0123456789",
    "PODIUM_FIELD_ENCRYPTION_KEYS": "q4MerP_7X3DUW7ymd_npPTRmz2RstF_Tbz1ietQUYPs=",
}
JUDGE_KEY = "sk-judge-key-0123456789abcdef"


@pytest.fixture
def server_secrets(monkeypatch):
    for name, value in SERVER_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", JUDGE_KEY)
    return SERVER_SECRETS


def refusal(name):
    return (
        f"{name} is not a variable a judge key may be read from. Allowed "
        "(PODIUM_JUDGE_KEY_ENV_ALLOWLIST): OPENAI_API_KEY; or leave it blank for a server that "
        "needs no key."
    )


def endpoint_rows():
    return list(JudgeEndpoint.objects.values_list("name", "api_key_env", "is_active"))


@pytest.mark.parametrize("name", sorted(SERVER_SECRETS))
def test_the_service_refuses_a_variable_off_the_allow_list(judged_benchmark, name):
    before = endpoint_rows()
    audited = AuditEvent.objects.count()

    with pytest.raises(ValidationError) as refused:
        services.configure_endpoint(
            judged_benchmark,
            name="mine",
            base_url="http://127.0.0.1:9/v1",
            model="gpt-4.1",
            api_key_env=name,
        )

    assert refused.value.message_dict == {"api_key_env": [refusal(name)]}
    assert endpoint_rows() == before
    assert AuditEvent.objects.count() == audited


def test_an_allow_list_that_names_a_server_secret_is_not_honoured(judged_benchmark, settings):
    # The settings refuse to start with such a list; this is the check at the model as well.
    settings.PODIUM_JUDGE_KEY_ENV_ALLOWLIST = ["SECRET_KEY", "OPENAI_API_KEY"]

    with pytest.raises(ValidationError, match="SECRET_KEY is not a variable"):
        services.configure_endpoint(
            judged_benchmark, name="mine", base_url="http://127.0.0.1:9/v1", model="m",
            api_key_env="SECRET_KEY",
        )  # fmt: skip
    assert JudgeEndpoint(api_key_env="SECRET_KEY").api_key == ""


def test_the_command_refuses_a_variable_off_the_allow_list(judged_benchmark):
    before = endpoint_rows()

    with pytest.raises(CommandError) as refused:
        call_command(
            "configure_judge",
            "--name", "mine",
            "--base-url", "http://127.0.0.1:9/v1",
            "--model", "gpt-4.1",
            "--api-key-env", "SECRET_KEY",
        )  # fmt: skip

    assert str(refused.value) == refusal("SECRET_KEY")
    assert endpoint_rows() == before


def test_the_admin_refuses_a_variable_off_the_allow_list_even_to_a_superuser(
    client, judged_benchmark
):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    before = endpoint_rows()

    response = client.post(
        "/admin/judging/judgeendpoint/add/",
        {
            "benchmark": judged_benchmark.pk,
            "name": "mine",
            "is_active": "on",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "gpt-4.1",
            "api_key_env": "DATABASE_URL",
            "temperature": "0",
            "concurrency": "10",
            "max_attempts": "5",
            "timeout_seconds": "30",
        },
    )

    assert response.status_code == 200
    assert refusal("DATABASE_URL") in response.content.decode()
    assert endpoint_rows() == before


def test_only_the_allowed_key_reaches_the_judge_and_a_forced_row_reads_nothing(
    scored_run, server_secrets, settings
):
    """The judge's server is a loopback stand-in recording every Authorization header (its
    answers are not verdicts, which does not matter here)."""
    with StandinModel() as server:
        services.configure_endpoint(
            scored_run.submission.benchmark,
            name="stand-in",
            base_url=server.base_url,
            model="gpt-4.1",
            api_key_env="OPENAI_API_KEY",
            concurrency=1,
            max_attempts=1,
        )
        services.run_job(services.start_judge(scored_run, enqueue=False).pk)
        sent = server.authorizations

        # A row written around the validation (a shell, raw SQL) still reads nothing.
        JudgeEndpoint.objects.update(api_key_env="SECRET_KEY")
        scored_run.refresh_from_db()
        with pytest.raises(JudgeUnavailable) as refused:
            services.start_judge(scored_run, enqueue=False)

        assert server.authorizations == sent
    assert sent
    assert set(sent) == {f"Bearer {JUDGE_KEY}"}
    assert "SECRET_KEY" not in str(refused.value)
    assert str(refused.value) == (
        "The judge endpoint 'stand-in' has no API key configured, so the caption metrics stay "
        "pending until a superuser configures one."
    )


def test_the_submitter_is_told_no_key_is_configured_not_which_variable(
    client, scored_run, settings, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    JudgeEndpoint.objects.update(api_key_env="OPENAI_API_KEY")
    client.force_login(scored_run.submission.owner)

    page = client.get(f"/submissions/{scored_run.submission.pk}/").content.decode()

    assert "has no API key configured" in page
    assert "OPENAI_API_KEY" not in page
    assert "environment variable" not in page


def test_staff_who_are_not_superusers_never_see_a_judge_endpoint(client, judged_benchmark):
    maintainer = UserFactory(is_staff=True)
    maintainer.groups.add(Group.objects.get(name=MAINTAINERS_GROUP))
    client.force_login(maintainer)
    endpoint = JudgeEndpoint.objects.get()

    statuses = [
        client.get(url).status_code
        for url in (
            "/admin/judging/judgeendpoint/",
            "/admin/judging/judgeendpoint/add/",
            f"/admin/judging/judgeendpoint/{endpoint.pk}/change/",
        )
    ]
    index = client.get("/admin/").content.decode()

    assert statuses == [403, 403, 403]
    assert "/admin/judging/judgeendpoint/" not in index
    assert "/admin/judging/judgejob/" in index  # the judge's records stay theirs to read
    assert client.get("/admin/judging/judgejob/").status_code == 200


def test_the_superusers_admin_flags_a_row_that_names_a_refused_variable(
    client, judged_benchmark, server_secrets
):
    JudgeEndpoint.objects.update(api_key_env="SECRET_KEY")
    client.force_login(UserFactory(is_staff=True, is_superuser=True))

    listing = client.get("/admin/judging/judgeendpoint/").content.decode()

    assert (
        '<td class="field-api_key_status">refused: SECRET_KEY is not on '
        "PODIUM_JUDGE_KEY_ENV_ALLOWLIST</td>" in listing
    )
    assert server_secrets["SECRET_KEY"] not in listing
