"""Production: every secret and host comes from the environment; a missing one stops the start.

``require`` raises ``ImproperlyConfigured`` naming the variable, so a misconfigured deploy fails
at import instead of running with a default.
"""

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_fernet_keys, env_int, require

from .base import *  # noqa: F403

SECRET_KEY = require("SECRET_KEY")
ALLOWED_HOSTS = [host.strip() for host in require("ALLOWED_HOSTS").split(",") if host.strip()]
# Production runs on PostgreSQL: the SQLite fallback in base is for development only.
require("DATABASE_URL")
# The keys model endpoints' API keys are encrypted with (base.py; docs/deployment.md).
require("PODIUM_FIELD_ENCRYPTION_KEYS")
PODIUM_FIELD_ENCRYPTION_KEYS = env_fernet_keys("PODIUM_FIELD_ENCRYPTION_KEYS")

DEBUG = env_bool("DEBUG", default=False)

# Sign-in is through GitHub unless local accounts are asked for explicitly (docs/accounts.md).
# The `accounts.E001` system check stops `migrate` and `check` when no way to sign in is left.
PODIUM_LOCAL_ACCOUNTS = env_bool("PODIUM_LOCAL_ACCOUNTS", default=False)
# GitHub over HTTPS only: an http:// PODIUM_GITHUB_URL is the local stand-in (`make run`), which
# signs anyone in as any login they type.
if PODIUM_GITHUB_URL.startswith("http://"):  # noqa: F405
    raise ImproperlyConfigured(
        "PODIUM_GITHUB_URL is an http:// address (the local stand-in?): production signs in "
        "with GitHub over https (docs/accounts.md)."
    )

# HTTPS: behind a TLS-terminating proxy that sets X-Forwarded-Proto.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 3600)
SECURE_CONTENT_TYPE_NOSNIFF = True
