"""A model endpoint's API key (issue 10, point 3): no server secret reaches a URL a maintainer
chose; the key the model's owner enters is stored encrypted, bound to the host it was entered
for, sent there and nowhere else, and never shown, logged or audited. Real stand-in model
servers on loopback see exactly which Authorization header arrives."""

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection

from accounts.roles import MAINTAINERS_GROUP
from core import encryption
from core.exceptions import DomainError
from core.models import AuditEvent
from inference import keys
from tests.accounts.factories import UserFactory
from verifying import endpoints, services
from verifying.enums import RerunStatus
from verifying.models import EndpointKeyError, ModelEndpoint, RerunJob
from verifying.standin import StandinModel

from .conftest import answer_table

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SECRET = "sk-model-owner-0123456789abcdef"
NO_KEY = ""  # an endpoint without a key is sent no Authorization header
SERVER_SECRETS = {
    "SECRET_KEY": "django-secret-key-from-the-environment-0123456789",
    "DATABASE_URL": "postgres://podium:db-password-0123@127.0.0.1:5432/podium",
    "EMAIL_HOST_PASSWORD": "smtp-password-0123456789",
    "GITHUB_CLIENT_SECRET": "github-client-secret-0123456789",
    "OPENAI_API_KEY": "sk-judge-key-0123456789abcdef",
}


@pytest.fixture
def server_secrets(monkeypatch):
    """The server's secrets in its environment, as production has them."""
    for name, value in SERVER_SECRETS.items():
        monkeypatch.setenv(name, value)
    return SERVER_SECRETS


@pytest.fixture
def group_maintainer():
    """A maintainer as the role defines one: staff in the Maintainers group, not superuser."""
    user = UserFactory(is_staff=True)
    user.groups.add(Group.objects.get(name=MAINTAINERS_GROUP))
    return user


@pytest.fixture
def owner(access_granted):
    return access_granted.owner


@pytest.fixture
def other_host(access_granted, frames_dir):
    """A second stand-in on another origin (same address, another port), answering the same."""
    with StandinModel(answer_table(access_granted, frames_dir)) as server:
        yield server


def rerun(submission, actor, capture):
    with capture(execute=True):
        job = services.start_rerun(submission, actor=actor, enqueue=False)
    with capture(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()
    return job


def keyed(submission, owner, server):
    return endpoints.register_endpoint(
        submission,
        actor=owner,
        base_url=server.base_url,
        model="surgvlm-7b",
        api_key=SECRET,
        concurrency=2,
        max_attempts=2,
        timeout_seconds=5.0,
    )


def everything_stored(table):
    """Every value of every row of `table`, as text: what a database dump would show."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")
        return "\n".join(str(value) for row in cursor.fetchall() for value in row)


# --- the attack: a maintainer points a server secret at a URL of their own ----------------------


@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY"])
def test_a_maintainer_cannot_send_a_server_secret_to_a_url_of_their_own(
    client,
    group_maintainer,
    access_granted,
    model,
    server_secrets,
    variable,
    django_capture_on_commit_callbacks,
):
    """The reproduction of issue 10, point 3, through the admin as a Maintainers member: the
    stand-in plays the maintainer's own server and records every Authorization header."""
    client.force_login(group_maintainer)
    response = client.post(
        "/admin/verifying/modelendpoint/add/",
        {
            "submission": access_granted.pk,
            "base_url": model.base_url,
            "model": "surgvlm-7b",
            "api_key_env": variable,
            "api_key": server_secrets[variable],
            "concurrency": 2,
            "max_attempts": 2,
            "timeout_seconds": 5,
        },
    )
    assert response.status_code == 302
    endpoint = ModelEndpoint.objects.get()
    assert (endpoint.has_api_key, endpoint.missing_key) == (False, False)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/verifying/modelendpoint/",
            {"action": "start_rerun_action", "_selected_action": [endpoint.pk]},
        )
    job = RerunJob.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()

    assert job.state == RerunStatus.DONE
    assert model.authorizations == [NO_KEY] * 5
    assert [
        name
        for name, value in server_secrets.items()
        if any(value in header for header in model.authorizations)
    ] == []


def test_no_path_names_an_environment_variable_for_a_model_endpoint(access_granted, owner):
    with pytest.raises(DomainError, match="never read from an environment variable"):
        endpoints.register_endpoint(
            access_granted,
            actor=None,
            base_url="http://127.0.0.1:9/v1",
            model="m",
            api_key_env="SECRET_KEY",
        )
    assert ModelEndpoint.objects.count() == 0
    assert not hasattr(ModelEndpoint(), "api_key_env")


def test_only_the_owner_or_a_superuser_enters_a_key(access_granted, owner, group_maintainer):
    def register(actor, **fields):
        return endpoints.register_endpoint(
            access_granted, actor=actor, base_url="http://127.0.0.1:9/v1", model="m", **fields
        )

    with pytest.raises(PermissionDenied, match="Only the entry's owner or a superuser"):
        register(group_maintainer, api_key=SECRET)
    with pytest.raises(PermissionDenied, match="may not register a model endpoint"):
        register(UserFactory(), api_key=SECRET)
    with pytest.raises(PermissionDenied, match="may not register a model endpoint"):
        register(UserFactory(is_staff=True))
    assert ModelEndpoint.objects.count() == 0

    keyless = register(group_maintainer)  # a public model: a maintainer may register it
    by_owner = register(owner, api_key=SECRET)
    by_superuser = register(UserFactory(is_staff=True, is_superuser=True), api_key=SECRET)

    for endpoint in (keyless, by_owner, by_superuser):
        endpoint.refresh_from_db()
    assert [(e.has_api_key, e.is_active) for e in (keyless, by_owner, by_superuser)] == [
        (False, False),
        (True, False),
        (True, True),
    ]


# --- at rest -------------------------------------------------------------------------------------


def test_the_key_is_stored_encrypted_under_the_configured_key(
    access_granted, owner, model, settings
):
    endpoint = keyed(access_granted, owner, model)

    stored = everything_stored(ModelEndpoint._meta.db_table)
    assert SECRET not in stored
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT api_key_encrypted FROM {ModelEndpoint._meta.db_table} WHERE id = %s",
            [endpoint.pk],
        )
        (token,) = cursor.fetchone()
    (key,) = settings.PODIUM_FIELD_ENCRYPTION_KEYS
    assert Fernet(key).decrypt(token.encode()).decode() == SECRET
    assert token != encryption.encrypt(SECRET)  # a fresh IV each time: equal keys look different


def test_rotation_re_encrypts_every_key_under_the_new_first_key(
    access_granted, owner, model, settings
):
    endpoint = keyed(access_granted, owner, model)
    (old,) = settings.PODIUM_FIELD_ENCRYPTION_KEYS
    new = Fernet.generate_key().decode()
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [new, old]

    assert keys.rotate_keys() == 1

    endpoint.refresh_from_db()
    assert Fernet(new).decrypt(endpoint.api_key_encrypted.encode()).decode() == SECRET
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [new]  # the old key can go now
    assert endpoint.config().api_key == SECRET
    assert AuditEvent.objects.filter(action="verifying.endpoint.keys_rotated").count() == 1


def test_a_key_no_configured_key_opens_fails_the_rerun_and_sends_nothing(
    access_granted, owner, model, settings, django_capture_on_commit_callbacks
):
    keyed(access_granted, owner, model)
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]

    job = rerun(access_granted, owner, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.FAILED
    assert job.message == (
        "the model endpoint's API key: A stored secret cannot be decrypted with the keys in "
        "PODIUM_FIELD_ENCRYPTION_KEYS; it was encrypted with a key that is no longer "
        "configured. Enter it again."
    )
    assert model.authorizations == []


# --- in use: its own host only, never logged or audited -----------------------------------------


def test_the_key_reaches_its_own_host_and_no_log_line_or_audit_row(
    access_granted, owner, model, caplog, django_capture_on_commit_callbacks
):
    keyed(access_granted, owner, model)
    caplog.set_level(logging.DEBUG)  # every logger, the HTTP client's included

    job = rerun(access_granted, owner, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.DONE
    assert model.authorizations == [f"Bearer {SECRET}"] * 5
    assert caplog.records  # something was logged, and none of it is the key
    assert SECRET not in caplog.text
    events = list(AuditEvent.objects.values_list("action", "data", "target_repr"))
    assert SECRET not in json.dumps(events)
    assert ("verifying.endpoint.created", "entered") in [
        (action, data.get("api_key")) for action, data, _ in events
    ]
    assert SECRET not in repr(ModelEndpoint.objects.get()) + str(ModelEndpoint.objects.get())
    assert SECRET not in json.dumps([job.message, job.report, job.metrics])


def test_moving_the_endpoint_to_another_host_drops_the_key(
    access_granted, owner, model, other_host, django_capture_on_commit_callbacks
):
    superuser = UserFactory(is_staff=True, is_superuser=True)
    endpoint = keyed(access_granted, owner, model)

    # Another path on the same origin keeps it.
    same_origin = model.base_url.removesuffix("/v1") + "/v1/"
    endpoint = endpoints.change_endpoint(endpoint, actor=superuser, base_url=same_origin)
    assert endpoint.has_api_key

    endpoint = endpoints.change_endpoint(endpoint, actor=superuser, base_url=other_host.base_url)

    assert (endpoint.has_api_key, endpoint.missing_key, endpoint.api_key_origin) == (
        False,
        True,
        "",
    )
    assert endpoint.key_status == "needed, not entered"
    with pytest.raises(DomainError, match="needs an API key that has not been entered"):
        services.start_rerun(access_granted, actor=superuser, enqueue=False)
    assert [
        event.data["api_key"]
        for event in AuditEvent.objects.filter(action="verifying.endpoint.updated").order_by("pk")
    ] == ["kept", "dropped: the address moved to another host"]
    assert (model.authorizations, other_host.authorizations) == ([], [])

    # Entered again for the new host, it goes there.
    endpoints.change_endpoint(endpoint, actor=owner, api_key=SECRET)
    job = rerun(access_granted, owner, django_capture_on_commit_callbacks)
    assert job.state == RerunStatus.DONE
    assert (model.authorizations, other_host.authorizations) == ([], [f"Bearer {SECRET}"] * 5)


def test_a_key_is_never_sent_to_another_host_however_the_row_was_changed(
    access_granted, owner, model, other_host, django_capture_on_commit_callbacks
):
    """Around the services (a shell, raw SQL): `config()` itself refuses."""
    endpoint = keyed(access_granted, owner, model)
    with django_capture_on_commit_callbacks(execute=True):
        job = services.start_rerun(access_granted, actor=owner, enqueue=False)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(base_url=other_host.base_url)
    endpoint.refresh_from_db()

    with pytest.raises(EndpointKeyError, match=r"is never sent to http://127\.0\.0\.1:"):
        endpoint.config()
    with django_capture_on_commit_callbacks(execute=True):
        services.run_job(job.pk)
    job.refresh_from_db()

    assert job.state == RerunStatus.FAILED
    assert job.message.startswith(
        f"the model endpoint's API key was entered for {model.base_url[:-3]}"
    )
    assert (model.authorizations, other_host.authorizations) == ([], [])


class _Redirect(BaseHTTPRequestHandler):
    target = ""
    seen: list[str]

    def do_POST(self) -> None:
        self.seen.append(self.headers.get("Authorization", ""))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(307)
        self.send_header("Location", self.target + self.path.removeprefix("/v1"))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_redirect_to_another_host_does_not_carry_the_key(
    access_granted, owner, model, django_capture_on_commit_callbacks
):
    """The endpoint's own server answers 307 to another origin: Podium follows no redirect
    (issue 31), so the other origin gets nothing at all, and the re-run fails saying where the
    redirect pointed."""
    handler = type("Redirect", (_Redirect,), {"target": model.base_url, "seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoints.register_endpoint(
            access_granted,
            actor=owner,
            base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
            model="surgvlm-7b",
            api_key=SECRET,
            concurrency=1,
            max_attempts=1,
            timeout_seconds=5.0,
        )
        job = rerun(access_granted, owner, django_capture_on_commit_callbacks)
    finally:
        server.shutdown()
        server.server_close()

    assert job.state == RerunStatus.FAILED
    assert "answered with a redirect (HTTP 307) to " + model.base_url in job.message
    assert "give its final URL" in job.message
    assert handler.seen == [f"Bearer {SECRET}"]  # its own host got it, once: the run stopped
    assert model.authorizations == []  # the other origin was never called


# --- who may change what -------------------------------------------------------------------------


def test_a_maintainer_may_not_move_a_keyed_endpoint_nor_touch_its_key(
    access_granted, owner, model, other_host, group_maintainer
):
    endpoint = keyed(access_granted, owner, model)

    for change in (
        {"base_url": other_host.base_url},
        {"api_key": "sk-maintainer"},
        {"forget_key": True},
    ):
        with pytest.raises(PermissionDenied, match="Only the entry's owner or a superuser"):
            endpoints.change_endpoint(endpoint, actor=group_maintainer, **change)
    endpoint = endpoints.change_endpoint(endpoint, actor=group_maintainer, concurrency=3)

    assert (endpoint.base_url, endpoint.concurrency) == (model.base_url, 3)
    assert endpoint.config().api_key == SECRET
    keyless = endpoints.register_endpoint(
        access_granted, actor=group_maintainer, base_url=model.base_url, model="m"
    )
    moved = endpoints.change_endpoint(keyless, actor=group_maintainer, base_url=other_host.base_url)
    assert moved.base_url == other_host.base_url


def test_the_maintainers_admin_form_has_no_key_and_a_keyed_address_is_read_only(
    client, access_granted, owner, model, other_host, group_maintainer
):
    endpoint = keyed(access_granted, owner, model)
    client.force_login(group_maintainer)
    url = f"/admin/verifying/modelendpoint/{endpoint.pk}/change/"

    page = client.get(url).content.decode()
    response = client.post(
        url,
        {
            "base_url": other_host.base_url,
            "model": "surgvlm-7b",
            "api_key": "sk-maintainer",
            "concurrency": 3,
            "max_attempts": 2,
            "timeout_seconds": 5,
        },
    )

    assert 'name="api_key"' not in page
    assert 'name="base_url"' not in page
    assert f'<div class="readonly">{model.base_url}</div>' in page
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert (endpoint.base_url, endpoint.concurrency) == (model.base_url, 3)
    assert endpoint.config().api_key == SECRET


def test_a_superuser_forgets_a_key(access_granted, owner, model):
    endpoint = keyed(access_granted, owner, model)

    endpoint = endpoints.change_endpoint(
        endpoint, actor=UserFactory(is_staff=True, is_superuser=True), forget_key=True
    )

    assert (endpoint.has_api_key, endpoint.missing_key, endpoint.key_status) == (
        False,
        False,
        "not set",
    )
    assert endpoint.config().api_key == ""


@pytest.mark.parametrize(
    "base_url",
    [
        "http://user:sk-in-the-url@127.0.0.1:9/v1",
        "http://127.0.0.1:9/v1?key=sk-in-the-url",
        "http://127.0.0.1:9/v1#sk-in-the-url",
    ],
)
def test_a_key_in_the_base_url_is_refused(access_granted, owner, base_url):
    with pytest.raises(ValidationError) as refused:
        endpoints.register_endpoint(access_granted, actor=owner, base_url=base_url, model="m")

    assert refused.value.message_dict == {
        "base_url": [
            "Give the base URL without a user name, password, query or fragment; an API key "
            "goes in the key field, where it is stored encrypted."
        ]
    }
    assert ModelEndpoint.objects.count() == 0


def test_a_model_endpoint_on_the_servers_own_network_is_refused_when_registered_and_called(
    access_granted, owner, model, settings, django_capture_on_commit_callbacks
):
    """Re-runs follow the address rule of hosted evaluation (issue 31): in production a base
    URL on a loopback or private address is refused when it is entered, and a row that points
    there anyway (written around the check) is refused by the client at connect time."""
    settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = False
    with pytest.raises(ValidationError) as refused:
        endpoints.register_endpoint(
            access_granted, actor=owner, base_url=model.base_url, model="surgvlm-7b"
        )
    assert "an address of a private network" in str(refused.value.message_dict["base_url"])

    settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = True
    endpoints.register_endpoint(
        access_granted, actor=owner, base_url=model.base_url, model="surgvlm-7b", max_attempts=1
    )
    settings.PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = False
    job = rerun(access_granted, owner, django_capture_on_commit_callbacks)

    assert job.state == RerunStatus.FAILED
    assert "is at 127.0.0.1, an address of a private network" in job.message
    assert model.authorizations == []  # nothing reached it
