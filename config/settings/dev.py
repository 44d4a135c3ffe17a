"""Local development: DEBUG on, a throwaway secret key, localhost only."""

from config.env import (
    env_bool,
    env_fernet_keys,
    env_int,
    env_list,
    env_str,
    site_url_from_address,
)

from .base import *  # noqa: F403

SECRET_KEY = env_str("SECRET_KEY", "django-insecure-podium-dev-only-never-use-in-production")
DEBUG = env_bool("DEBUG", default=True)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
# Mail (notifications, allauth's password reset) is printed to the console unless EMAIL_BACKEND
# names another backend.
MAILERS = mailers_from_env("django.core.mail.backends.console.EmailBackend")  # noqa: F405
# The links in emails go to the address `make run` serves on (PODIUM_ADDRESS, which
# scripts/run.sh hands to runserver and to the worker that sends the mail); an explicit
# PODIUM_SITE_URL wins.
PODIUM_SITE_URL = env_str(
    "PODIUM_SITE_URL", site_url_from_address(env_str("PODIUM_ADDRESS", "127.0.0.1:8000"))
)
# Board tables are rendered afresh on every request, so template edits show at once.
PODIUM_BOARD_CACHE_SECONDS = env_int("PODIUM_BOARD_CACHE_SECONDS", 0)
# The stand-in model `make run` starts (scripts/run.sh, PODIUM_STANDIN_MODEL_PORT; 0: none),
# named beside the model endpoint form.
_standin_model_port = env_int("PODIUM_STANDIN_MODEL_PORT", 0)
PODIUM_DEMO_STANDIN_MODEL_URL = (
    f"http://127.0.0.1:{_standin_model_port}/v1" if _standin_model_port else ""
)
# The demo's stand-in model is on loopback (docs/hosted.md, "Security").
PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = env_bool("PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS", True)
# A fixed, public, dev-only key for the model endpoints' API keys (base.py), so a fresh
# checkout works without configuration; production requires its own.
PODIUM_FIELD_ENCRYPTION_KEYS = env_fernet_keys(
    "PODIUM_FIELD_ENCRYPTION_KEYS", ["LSVeZjgUryeYPpOFNMHtTsFYtBQHOao2O-Kq10jetAU="]
)
