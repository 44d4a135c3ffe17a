"""pytest's settings (see pyproject.toml). The database still follows DATABASE_URL, so the suite
runs on SQLite by default and on PostgreSQL in CI."""

from config.env import env_fernet_keys, env_str

from .base import *  # noqa: F403

SECRET_KEY = env_str("SECRET_KEY", "django-insecure-podium-test-only")
DEBUG = False
# Fast hashing: the suite creates many users, and hash strength is not under test.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# The judge's retries wait milliseconds, not seconds; its heartbeat is quick to observe.
PODIUM_JUDGE_BACKOFF_SECONDS = 0.01
PODIUM_JUDGE_HEARTBEAT_SECONDS = 1
# Scoring runs beat every second and are stale after 4; worker processes reap every second.
PODIUM_SCORING_HEARTBEAT_SECONDS = 1
PODIUM_SCORING_STALE_SECONDS = 4
PODIUM_WORKER_REAP_SECONDS = 1
# A board whose refresh died is rebuilt by the reaper once its change is 3 s old.
PODIUM_BOARD_STALE_SECONDS = 3
# An unreachable judge is probed at least every 0.2 s, so a test's outage ends quickly, and a
# job (or re-run) gives up on an endpoint unreachable for 5 s (the cluster test raises it).
PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = float(env_str("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", "5"))
PODIUM_JUDGE_OUTAGE_PROBE_SECONDS = 0.2
PODIUM_JUDGE_CLAIM_POLL_SECONDS = 0.1
# The API's throttle counts live in the shared store (the database: api.ThrottleHistory), whose
# rows outlive a test that commits (live servers, gunicorn): the suite would run into the
# production rates. tests/api/test_throttling.py sets its own; a gunicorn started by a test
# passes PODIUM_API_ANON_RATE / PODIUM_API_USER_RATE.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("PODIUM_API_ANON_RATE", "1000000/min"),
        "user": env_str("PODIUM_API_USER_RATE", "1000000/min"),
    },
}
# The stand-in models are on loopback; tests of the address check turn this off.
PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = True
# A fixed, public, test-only key for the model endpoints' API keys (base.py), so a fresh
# checkout works without configuration; production requires its own.
PODIUM_FIELD_ENCRYPTION_KEYS = env_fernet_keys(
    "PODIUM_FIELD_ENCRYPTION_KEYS", ["q4MerP_7X3DUW7ymd_npPTRmz2RstF_Tbz1ietQUYPs="]
)
