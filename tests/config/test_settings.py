import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    SQLITE_OPTIONS,
    database_config,
    env_bool,
    env_list,
    require,
    site_url_from_address,
)

SQLITE_PATH = Path("/srv/podium/var/podium.sqlite3")


@pytest.mark.unit
def test_database_url_selects_postgresql():
    config = database_config(
        "postgres://podium:pw@db.internal:5433/podium_prod", sqlite_path=SQLITE_PATH
    )

    assert (config["ENGINE"], config["NAME"], config["USER"], config["HOST"], config["PORT"]) == (
        "django.db.backends.postgresql",
        "podium_prod",
        "podium",
        "db.internal",
        5433,
    )


@pytest.mark.unit
@pytest.mark.parametrize("database_url", [None, "", "   "])
def test_without_database_url_the_default_is_an_sqlite_file(database_url):
    config = database_config(database_url, sqlite_path=SQLITE_PATH)

    assert (config["ENGINE"], config["NAME"]) == ("django.db.backends.sqlite3", str(SQLITE_PATH))
    # Several processes write at once (web server, worker): WAL, IMMEDIATE, a 30 s wait.
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in config["OPTIONS"]["init_command"]
    assert config["OPTIONS"]["timeout"] == 30


@pytest.mark.unit
def test_an_sqlite_database_url_gets_the_same_options():
    config = database_config("sqlite:////srv/other/podium.sqlite3", sqlite_path=SQLITE_PATH)

    assert (config["ENGINE"], config["NAME"], config["OPTIONS"]) == (
        "django.db.backends.sqlite3",
        "/srv/other/podium.sqlite3",
        SQLITE_OPTIONS,
    )


@pytest.mark.unit
def test_options_in_an_sqlite_database_url_win():
    config = database_config("sqlite:////srv/podium.sqlite3?timeout=60", sqlite_path=SQLITE_PATH)

    assert config["OPTIONS"] == {**SQLITE_OPTIONS, "timeout": 60}


@pytest.mark.unit
@pytest.mark.parametrize(
    ("raw", "expected"), [("1", True), ("True", True), ("on", True), ("0", False), ("no", False)]
)
def test_env_bool_reads_the_usual_spellings(monkeypatch, raw, expected):
    monkeypatch.setenv("PODIUM_TEST_FLAG", raw)

    assert env_bool("PODIUM_TEST_FLAG") is expected


@pytest.mark.unit
def test_env_bool_rejects_anything_else(monkeypatch):
    monkeypatch.setenv("PODIUM_TEST_FLAG", "maybe")

    with pytest.raises(ImproperlyConfigured, match="PODIUM_TEST_FLAG"):
        env_bool("PODIUM_TEST_FLAG")


@pytest.mark.unit
def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("PODIUM_TEST_HOSTS", "podium.example.org, www.podium.example.org,")

    assert env_list("PODIUM_TEST_HOSTS") == ["podium.example.org", "www.podium.example.org"]


@pytest.mark.unit
def test_require_names_the_missing_variable(monkeypatch):
    monkeypatch.delenv("PODIUM_TEST_REQUIRED", raising=False)

    with pytest.raises(ImproperlyConfigured, match="PODIUM_TEST_REQUIRED"):
        require("PODIUM_TEST_REQUIRED")


def _load_prod_settings(repo_root: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Import config.settings.prod through django.setup() in a fresh interpreter with ``env``."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            "SECRET_KEY",
            "ALLOWED_HOSTS",
            "DATABASE_URL",
            "DEBUG",
            "PODIUM_FIELD_ENCRYPTION_KEYS",
            "PODIUM_JUDGE_KEY_ENV_ALLOWLIST",
            # `make run` exports the GitHub stand-in's (scripts/run.sh).
            "PODIUM_GITHUB_URL",
            "GITHUB_CLIENT_ID",
            "GITHUB_CLIENT_SECRET",
        }
    }
    clean |= {"DJANGO_SETTINGS_MODULE": "config.settings.prod", **env}
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo_root,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


PROD_ENV = {
    "SECRET_KEY": "a-long-random-production-secret",
    "ALLOWED_HOSTS": "podium.example.org",
    "DATABASE_URL": "postgres://podium@127.0.0.1:5432/podium",
    "PODIUM_FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
}


@pytest.mark.integration
def test_prod_settings_fail_fast_without_secret_key(repo_root):
    env = {key: value for key, value in PROD_ENV.items() if key != "SECRET_KEY"}

    result = _load_prod_settings(repo_root, **env)

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: The environment variable SECRET_KEY is required in production."
        in result.stderr
    )


@pytest.mark.integration
def test_prod_settings_load_when_everything_is_set(repo_root):
    result = _load_prod_settings(repo_root, **PROD_ENV)

    assert (result.returncode, result.stdout, result.stderr) == (0, "False\n", "")


@pytest.mark.integration
def test_prod_settings_fail_fast_without_field_encryption_keys(repo_root):
    env = {key: value for key, value in PROD_ENV.items() if key != "PODIUM_FIELD_ENCRYPTION_KEYS"}

    result = _load_prod_settings(repo_root, **env)

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: The environment variable PODIUM_FIELD_ENCRYPTION_KEYS is required "
        "in production." in result.stderr
    )


@pytest.mark.integration
def test_a_malformed_encryption_key_stops_the_start_naming_its_position_not_its_value(repo_root):
    good = PROD_ENV["PODIUM_FIELD_ENCRYPTION_KEYS"]
    env = {**PROD_ENV, "PODIUM_FIELD_ENCRYPTION_KEYS": f"{good},not-a-key-s3cr3t"}

    result = _load_prod_settings(repo_root, **env)

    assert result.returncode == 1
    assert "PODIUM_FIELD_ENCRYPTION_KEYS: key 2 is not a Fernet key" in result.stderr
    assert "not-a-key-s3cr3t" not in result.stderr


@pytest.mark.integration
def test_the_judge_key_allow_list_may_not_name_a_server_secret(repo_root):
    env = {**PROD_ENV, "PODIUM_JUDGE_KEY_ENV_ALLOWLIST": "OPENAI_API_KEY,SECRET_KEY"}

    result = _load_prod_settings(repo_root, **env)

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: PODIUM_JUDGE_KEY_ENV_ALLOWLIST names server secrets: SECRET_KEY."
        in result.stderr
    )


@pytest.mark.integration
def test_a_scoring_stale_period_shorter_than_three_heartbeats_is_refused(repo_root):
    result = _load_prod_settings(
        repo_root,
        **PROD_ENV,
        PODIUM_SCORING_HEARTBEAT_SECONDS="5",
        PODIUM_SCORING_STALE_SECONDS="10",
    )

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: PODIUM_SCORING_STALE_SECONDS must be at least 3 heartbeats "
        "(PODIUM_SCORING_HEARTBEAT_SECONDS), or a busy worker would look dead." in result.stderr
    )


def _github_settings(repo_root: Path, module: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Where allauth's GitHub provider and the CSP's form-action send people, as `module`
    computes them in a fresh interpreter with ``env``."""
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PODIUM_GITHUB_URL", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"}
    }
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "from allauth.socialaccount.providers.github.views import GitHubOAuth2Adapter as A; "
        "print(A.authorize_url, A.profile_url, settings.SECURE_CSP['form-action'][1])"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo_root,
        env=clean | {"DJANGO_SETTINGS_MODULE": module, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.integration
def test_github_is_github_com_unless_told_otherwise(repo_root):
    result = _github_settings(repo_root, "config.settings.dev")

    assert (result.returncode, result.stdout) == (
        0,
        "https://github.com/login/oauth/authorize https://api.github.com/user https://github.com\n",
    )


@pytest.mark.integration
def test_podium_github_url_points_sign_in_at_the_stand_in_or_an_enterprise_server(repo_root):
    result = _github_settings(
        repo_root, "config.settings.dev", PODIUM_GITHUB_URL="http://127.0.0.1:8767/"
    )

    assert (result.returncode, result.stdout) == (
        0,
        "http://127.0.0.1:8767/login/oauth/authorize http://127.0.0.1:8767/api/v3/user "
        "http://127.0.0.1:8767\n",
    )


@pytest.mark.integration
def test_a_podium_github_url_that_is_not_an_address_stops_the_start(repo_root):
    result = _github_settings(repo_root, "config.settings.dev", PODIUM_GITHUB_URL="github.com")

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: PODIUM_GITHUB_URL must be an http(s) address, not 'github.com'."
        in result.stderr
    )


@pytest.mark.integration
def test_production_refuses_an_http_github_such_as_the_stand_in(repo_root):
    result = _load_prod_settings(repo_root, **PROD_ENV, PODIUM_GITHUB_URL="http://127.0.0.1:8767")

    assert result.returncode == 1
    assert (
        "ImproperlyConfigured: PODIUM_GITHUB_URL is an http:// address (the local stand-in?): "
        "production signs in with GitHub over https (docs/accounts.md)." in result.stderr
    )


@pytest.mark.integration
def test_production_accepts_a_github_enterprise_server_over_https(repo_root):
    result = _load_prod_settings(
        repo_root, **PROD_ENV, PODIUM_GITHUB_URL="https://github.example.org"
    )

    assert (result.returncode, result.stdout, result.stderr) == (0, "False\n", "")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("address", "site_url"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("podium-dev.lan:9001", "http://podium-dev.lan:9001"),
        ("8001", "http://127.0.0.1:8001"),
        ("[::1]:8002", "http://[::1]:8002"),
        # A wildcard is no address to open: the loopback, on the port served.
        ("0.0.0.0:9000", "http://127.0.0.1:9000"),
        ("[::]:9000", "http://127.0.0.1:9000"),
    ],
)
def test_site_url_from_the_address_runserver_is_given(address, site_url):
    assert site_url_from_address(address) == site_url


# An email's links as the dev settings build them (`make run`'s web server and worker): an unsaved
# rejected entry, so no database is needed.
_DEV_EMAIL_LINKS = """
import django
django.setup()
from django.conf import settings
from accounts.models import User
from benchmark.models import Benchmark
from submissions.models import Notification, NotificationKind, Submission
from submissions.notifications import _email_context
submission = Submission(pk=7, benchmark=Benchmark(slug="medvidbench"), verification_reason="x")
notice = Notification(kind=NotificationKind.REJECTED, submission=submission,
                      recipient=User(username="ada"))
context = _email_context(notice)
print(context["url"], context["board_url"])
"""


def _dev_email_links(repo_root: Path, **env: str) -> str:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DJANGO_SETTINGS_MODULE", "PODIUM_SITE_URL", "PODIUM_ADDRESS"}
    }
    clean |= {"DJANGO_SETTINGS_MODULE": "config.settings.dev", **env}
    result = subprocess.run(
        [sys.executable, "-c", _DEV_EMAIL_LINKS],
        cwd=repo_root,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.integration
def test_dev_emails_link_to_the_address_make_run_serves_on(repo_root):
    # scripts/run.sh exports the address it hands runserver as PODIUM_ADDRESS (issue 32, 10).
    links = _dev_email_links(repo_root, PODIUM_ADDRESS="192.0.2.7:9001")

    assert links == "http://192.0.2.7:9001/submissions/7/ http://192.0.2.7:9001/b/medvidbench/"


@pytest.mark.integration
def test_dev_emails_link_to_the_default_address_when_none_is_given(repo_root):
    links = _dev_email_links(repo_root)

    assert links == "http://127.0.0.1:8000/submissions/7/ http://127.0.0.1:8000/b/medvidbench/"


@pytest.mark.integration
def test_an_explicit_site_url_wins_over_the_served_address(repo_root):
    links = _dev_email_links(
        repo_root, PODIUM_ADDRESS="0.0.0.0:9001", PODIUM_SITE_URL="https://podium.example.org/"
    )

    assert links == (
        "https://podium.example.org/submissions/7/ https://podium.example.org/b/medvidbench/"
    )
