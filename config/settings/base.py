"""Settings shared by every environment.

Each value that varies between deployments comes from the environment; ``.env.example`` lists them.
``SECRET_KEY`` is deliberately absent here: ``dev`` and ``test`` supply a throwaway default and
``prod`` requires the variable.
"""

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config.env import (
    database_config,
    env_bool,
    env_fernet_keys,
    env_int,
    env_list,
    env_path,
    env_str,
)
from config.storage import private_storage

BASE_DIR = Path(__file__).resolve().parent.parent.parent

# Local state (the SQLite file, uploads, private test sets) lives under var/, which git ignores.
VAR_DIR = env_path("PODIUM_VAR_DIR", BASE_DIR / "var")

DEBUG = env_bool("DEBUG", default=False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # Django's admin, its ModelAdmins discovered by the URLconf rather than at start-up, so a
    # command that shows no admin page does not import every app's services (config/admin_app.py).
    "config.admin_app.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    # Sign-in (docs/accounts.md). No django.contrib.sites: allauth works without it, and a single
    # site needs no Site row to keep in sync with its domain.
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    # Password-guessing lockouts for every sign-in path, the admin's included (docs/accounts.md).
    "axes",
    # Ours, lowest layer first; imports only point down (tests/test_layering.py):
    # api -> verifying -> hosting -> arena -> judging -> submissions -> inference -> benchmark
    # -> accounts -> core.
    "core",
    "accounts",
    "benchmark",
    # Calling OpenAI-compatible endpoints at scale, for the judge, re-runs and hosted evaluation
    # (docs/inference.md).
    "inference",
    "submissions",
    "judging",
    # Pairwise-judged categories: battles and their ratings (docs/ratings.md).
    "arena",
    # Hosted evaluation: Podium asks a submitted model endpoint every question, with a public
    # request queue (docs/hosted.md).
    "hosting",
    # Verifying an entry by re-running the model through its API (docs/verification.md).
    "verifying",
    # The REST API: an interface over the apps' services, above them all (docs/api.md).
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A page's query parameter holding a NUL is a 400 naming it, before any view reads it
    # (core/request_text.py); the API's serializers refuse it themselves.
    "core.request_text.QueryTextMiddleware",
    # Content-Security-Policy on every response (SECURE_CSP below, docs/deployment.md).
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Last, as axes asks: it turns a request its backend flagged as locked out into the lockout
    # page (accounts/sign_in_lockout.py), whichever view handled the sign-in.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.sign_in_options",
                "submissions.context_processors.unread_notifications",
                "benchmark.context_processors.sign_in_benchmark",
            ],
        },
    },
]

# Database: PostgreSQL when DATABASE_URL is set, else an SQLite file under var/.
SQLITE_PATH = VAR_DIR / "podium.sqlite3"
DATABASES = {"default": database_config(env_str("DATABASE_URL"), sqlite_path=SQLITE_PATH)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite cannot create the folder of its file; a fresh clone has no var/ yet.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# The user model exists from the first migration: swapping it later is a painful migration.
AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Sign-in: django-allauth, GitHub plus optional local accounts (docs/accounts.md).
AUTHENTICATION_BACKENDS = [
    # First: refuses every password sign-in (site or admin) of a locked-out account and address
    # before any password is checked. It signs nobody in itself.
    "axes.backends.AxesStandaloneBackend",
    # The admin's password login (/admin/), which stays available to staff in every setup.
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "/"
ACCOUNT_ADAPTER = "accounts.adapters.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "accounts.adapters.SocialAccountAdapter"
# Local accounts (username + password, created on our signup page). On by default so a fresh
# machine can sign in without a GitHub OAuth app; prod turns them off unless asked. Read at request
# time by the adapters, so tests may flip it with the `settings` fixture.
PODIUM_LOCAL_ACCOUNTS = env_bool("PODIUM_LOCAL_ACCOUNTS", default=True)
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email*", "password1*", "password2*"]
# No verification mail: a local account needs none to submit, and GitHub addresses arrive
# verified by GitHub. (Podium does mail submitters their notifications; see "Email" below.)
ACCOUNT_EMAIL_VERIFICATION = "none"
# Starting the GitHub flow takes a POST (the sign-in button is a form): a GET-triggered OAuth
# redirect can be forced on a visitor by any page that links or embeds the URL.
SOCIALACCOUNT_LOGIN_ON_GET = False
# A first GitHub sign-in creates the user at once with GitHub's login as the username when it is
# free; a clash on the email address falls back to allauth's short signup form.
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_QUERY_EMAIL = True
# The GitHub OAuth app comes from the environment; no SocialApp row is needed. Without both
# variables there is no app and the sign-in pages say how to add one.
_github_client_id = env_str("GITHUB_CLIENT_ID").strip()
_github_client_secret = env_str("GITHUB_CLIENT_SECRET").strip()
if bool(_github_client_id) != bool(_github_client_secret):
    raise ImproperlyConfigured("Set both GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET, or neither.")
# Failed password sign-ins are counted by django-axes (below), in the database every process
# shares; allauth's own login limits count in the per-process "default" cache (allauth always
# uses that alias), so with N workers they allowed N times their limit. They are turned off in
# favour of axes, which also covers /admin/login/. A successful sign-in needs no limit.
# allauth's other limits (signup, password reset) stay on, per process.
ACCOUNT_RATE_LIMITS = {"login": None, "login_failed": None}
SOCIALACCOUNT_PROVIDERS = {
    "github": {
        # read:user for the profile, user:email for the (possibly private) verified addresses.
        "SCOPE": ["read:user", "user:email"],
        "APPS": (
            [{"client_id": _github_client_id, "secret": _github_client_secret}]
            if _github_client_id
            else []
        ),
    },
}
# Where GitHub is: github.com by default; a GitHub Enterprise server, or the local stand-in
# `make run` starts (accounts/github_standin.py, `manage.py standin_github`), by setting
# PODIUM_GITHUB_URL. allauth's GitHub provider then sends people to <url>/login/oauth/... and
# asks <url>/api/v3/ for the profile (allauth's GITHUB_URL setting, read when its views are
# imported). github.com itself must not be named there: its API is api.github.com.
PODIUM_GITHUB_URL = env_str("PODIUM_GITHUB_URL", "https://github.com").strip().rstrip("/")
if PODIUM_GITHUB_URL != "https://github.com":
    if not PODIUM_GITHUB_URL.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            f"PODIUM_GITHUB_URL must be an http(s) address, not {PODIUM_GITHUB_URL!r}."
        )
    SOCIALACCOUNT_PROVIDERS["github"]["GITHUB_URL"] = PODIUM_GITHUB_URL

# --- Content-Security-Policy (docs/deployment.md, "Content-Security-Policy"): Django's own CSP
# middleware, no third-party package. Everything the pages load comes from this origin: our
# stylesheets, vendored htmx, the admin's files, Swagger UI's (drf-spectacular-sidecar). No page
# of ours has an inline script, style block, style attribute or on* handler, and htmx is told
# not to eval or inject its indicator style, so there is no 'unsafe-inline', no 'unsafe-eval'
# and no nonce. Django's admin loads only files too (its one inline <style>, in
# change_list.html, is written only for a ModelAdmin with actions_on_top and actions_on_bottom
# both False; such an admin would need CSP.NONCE in style-src and the
# "django.template.context_processors.csp" context processor). GitHub is in form-action
# because "Sign in with GitHub" is a POST that redirects there, and browsers check a form's
# redirects against form-action too (PODIUM_GITHUB_URL, above).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    # data: for the SVG icons Swagger UI's and the admin's stylesheets embed.
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF, PODIUM_GITHUB_URL],
    "frame-ancestors": [CSP.NONE],
}

# --- The client's address (sign-in lockouts, API throttles, allauth's limits). Behind reverse
# proxies that append to X-Forwarded-For, the number of them in front of Podium: the address the
# outermost one saw is then the client's. 0 (the default): REMOTE_ADDR, and X-Forwarded-For is
# ignored, because any client can write it (docs/deployment.md, "Reverse proxy").
# One function reads it for all of them: core.client_address (an IPv6 client is its /64).
PODIUM_TRUSTED_PROXY_COUNT = env_int("PODIUM_TRUSTED_PROXY_COUNT", 0)
if PODIUM_TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("PODIUM_TRUSTED_PROXY_COUNT must be 0 or more.")

# --- Password-guessing lockouts: django-axes (docs/accounts.md, "Failed sign-ins"). Its
# database handler counts failures with an atomic UPDATE in our own database, which every web
# process shares and which needs no other service; a superuser unlocks in the admin ("Access
# attempts") or with `manage.py axes_reset_username NAME` / `axes_reset_ip ADDRESS`.
AXES_HANDLER = "accounts.sign_in_lockout.SignInLockoutHandler"
# Locked: an account at one address after 5 failures, or a whole address after 30 failures
# (any accounts: password spraying), each within the cool-off. Not an account everywhere: then
# anyone could lock a maintainer out of the admin by typing their name.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_FAILURE_LIMIT = env_int("PODIUM_SIGN_IN_FAILURE_LIMIT", 5)
PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT = env_int("PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT", 30)
if not 1 <= AXES_FAILURE_LIMIT <= PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT:
    raise ImproperlyConfigured(
        "PODIUM_SIGN_IN_FAILURE_LIMIT must be at least 1 and at most "
        "PODIUM_SIGN_IN_ADDRESS_FAILURE_LIMIT."
    )
# Failures count for 15 minutes after the last one; a lockout ends then. Attempts while locked
# out are refused without being counted, so the page's "try again at" time holds.
AXES_COOLOFF_TIME = timedelta(minutes=env_int("PODIUM_SIGN_IN_LOCKOUT_MINUTES", 15))
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
# A successful sign-in does not wipe the failures: it would let a guesser who knows one account's
# password reset the count of every other account at the same address.
AXES_RESET_ON_SUCCESS = False
AXES_USERNAME_CALLABLE = "accounts.sign_in_lockout.attempted_username"
AXES_CLIENT_IP_CALLABLE = "core.client_address.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.sign_in_lockout.lockout_response"
# No row per successful sign-in (axes' access log): Podium has no use for a login history.
AXES_DISABLE_ACCESS_LOG = True
# Lockouts are logged as warnings by axes; the routine "login failed" lines are not needed.
AXES_VERBOSE = False

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env_path("STATIC_ROOT", BASE_DIR / "staticfiles")
MEDIA_URL = "media/"
MEDIA_ROOT = env_path("MEDIA_ROOT", VAR_DIR / "media")

# --- Private files (docs/storage.md): predictions, test sets, re-run answers and the media a
# re-run sends; never served. Kept in Django's `storages["private"]`: the folder
# PODIUM_PRIVATE_DIR by default (outside MEDIA_ROOT, so no URL can reach it), an S3 bucket when
# PODIUM_S3_BUCKET is set (web and workers on many machines then share no disk). The
# credentials are boto3's own AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or an instance role),
# read from the environment by boto3 and never copied into the settings.
PODIUM_PRIVATE_DIR = env_path("PODIUM_PRIVATE_DIR", VAR_DIR / "private")
if PODIUM_PRIVATE_DIR.is_relative_to(MEDIA_ROOT):
    raise ImproperlyConfigured("PODIUM_PRIVATE_DIR must be outside MEDIA_ROOT.")
# Retired: test sets and frames are keys in the private store (testsets/..., frames/...), no
# longer folders of their own. A deployment that still points them elsewhere is stopped rather
# than silently reading another folder (docs/storage.md, "Moving from PODIUM_TESTSET_DIR").
for _retired, _where in (("PODIUM_TESTSET_DIR", "testsets"), ("PODIUM_FRAMES_DIR", "frames")):
    _value = env_str(_retired).strip()
    if _value and Path(_value).resolve() != (PODIUM_PRIVATE_DIR / _where).resolve():
        raise ImproperlyConfigured(
            f"{_retired} is retired: the files are under PODIUM_PRIVATE_DIR/{_where}/ (or the "
            f"S3 bucket's {_where}/). Move them there and unset {_retired} (docs/storage.md)."
        )
PODIUM_S3_BUCKET = env_str("PODIUM_S3_BUCKET").strip()
PODIUM_S3_ENDPOINT_URL = env_str("PODIUM_S3_ENDPOINT_URL").strip()
PODIUM_S3_REGION = env_str("PODIUM_S3_REGION").strip()
PODIUM_S3_PREFIX = env_str("PODIUM_S3_PREFIX", "private/")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "private": private_storage(
        bucket=PODIUM_S3_BUCKET,
        endpoint_url=PODIUM_S3_ENDPOINT_URL,
        region=PODIUM_S3_REGION,
        prefix=PODIUM_S3_PREFIX,
    ),
}
# This machine's verified copies of private files that code reads from a local path (test
# sets), named by their sha256 (core/private_files.py). Per machine, never shared; with the
# local store nothing is copied here.
PODIUM_PRIVATE_CACHE_DIR = env_path("PODIUM_PRIVATE_CACHE_DIR", VAR_DIR / "cache" / "private")

# A board page's table is cached until the board is next recomputed (docs/boards.md); this is
# only how long superseded copies may linger. 0 turns the cache off (dev: edited templates
# show at once).
PODIUM_BOARD_CACHE_SECONDS = env_int("PODIUM_BOARD_CACHE_SECONDS", 24 * 60 * 60)
# Rows per page of a board table (issue 13, point 11); the downloads hold the whole board.
PODIUM_BOARD_PAGE_SIZE = env_int("PODIUM_BOARD_PAGE_SIZE", 50)
if not 1 <= PODIUM_BOARD_PAGE_SIZE <= 1000:
    raise ImproperlyConfigured("PODIUM_BOARD_PAGE_SIZE must be between 1 and 1000.")

# Two caches: "default" is per process (rendered board tables, cheap to rebuild); "shared" is
# seen by every process. Shared is a database table unless PODIUM_SHARED_CACHE_URL names Redis.
# It also chooses where the API's throttles keep their logs (api/throttle_log.py): in Redis when
# it is Redis, else in their own table (api.ThrottleHistory), never with the cache's
# read-then-write.
_shared_cache_url = env_str("PODIUM_SHARED_CACHE_URL").strip()
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "shared": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _shared_cache_url}
        if _shared_cache_url
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "podium_shared_cache",
        }
    ),
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_VERSIONING_CLASS": None,
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.SharedAnonRateThrottle",
        "api.throttling.SharedUserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("PODIUM_API_ANON_RATE", "120/min"),
        "user": env_str("PODIUM_API_USER_RATE", "600/min"),
    },
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
    # Our throttles ask core.client_address; this is for anything else of DRF's that reads an
    # address. DRF's default (None) takes the whole X-Forwarded-For, which a client writes.
    "NUM_PROXIES": PODIUM_TRUSTED_PROXY_COUNT,
    "URL_FORMAT_OVERRIDE": "format",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Podium API",
    "DESCRIPTION": (
        "Verified leaderboards for medical AI benchmarks: rankings export (JSON, CSV), "
        "submissions by API token, results and the LLM judge step."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # What every operation answers (401, 429), empty query parameters and form fields, said
    # once (api/schema.py), after drf-spectacular's own enum hook.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.describe_what_every_operation_answers",
    ],
}

# django-q2 with the ORM broker: the queue is a table in our own database, so the worker
# (`manage.py qcluster`) needs nothing besides the database.
Q_CLUSTER = {
    # The queue's name: its keys in Redis, and the salt of its signed payloads. Two deployments
    # (or test runs) sharing one Redis need different names.
    "name": env_str("Q_NAME", "podium").strip() or "podium",
    "orm": "default",
    "workers": env_int("Q_WORKERS", 2),
    "timeout": env_int("Q_TIMEOUT", 600),
    # The broker re-delivers a task not acknowledged within `retry` seconds; it must exceed
    # `timeout`, or a slow task would run twice at once.
    "retry": env_int("Q_RETRY", 720),
    "max_attempts": env_int("Q_MAX_ATTEMPTS", 3),
    "catch_up": False,
    "sync": env_bool("Q_SYNC", default=False),
}
# Redis instead of the ORM broker, for deployments that have it: Q_REDIS_URL=redis://host:6379/0
_q_redis_url = env_str("Q_REDIS_URL").strip()
if _q_redis_url:
    del Q_CLUSTER["orm"]
    Q_CLUSTER["redis"] = _q_redis_url
    # Not django-q2's own Redis broker, which loses the tasks a killed cluster held: this one
    # hands them out again after `retry`, as the ORM broker does (core/task_broker.py).
    Q_CLUSTER["broker_class"] = "core.task_broker.RedeliveringRedis"
if Q_CLUSTER["retry"] <= Q_CLUSTER["timeout"]:
    raise ImproperlyConfigured("Q_RETRY must be greater than Q_TIMEOUT.")

# A judge job or re-run runs in time slices and may use at most this many (200 slices of 450 s
# are 25 hours); only a worker's death counts against PODIUM_JUDGE_MAX_RUNS (docs/judge.md).
PODIUM_JOB_MAX_SLICES = env_int("PODIUM_JOB_MAX_SLICES", 200)

# The LLM judge (docs/judge.md). A worker runs a judge job for a time slice well inside the
# cluster's timeout, then queues it again; a running job beats every HEARTBEAT seconds, and one
# silent for STALE seconds is handed out again by the reaper, at most MAX_RUNS times.
PODIUM_JUDGE_SLICE_SECONDS = env_int("PODIUM_JUDGE_SLICE_SECONDS", Q_CLUSTER["timeout"] * 3 // 4)
PODIUM_JUDGE_HEARTBEAT_SECONDS = env_int("PODIUM_JUDGE_HEARTBEAT_SECONDS", 5)
PODIUM_JUDGE_STALE_SECONDS = env_int("PODIUM_JUDGE_STALE_SECONDS", 60)
PODIUM_JUDGE_MAX_RUNS = env_int("PODIUM_JUDGE_MAX_RUNS", 20)
# Backoff before attempt n is up to BACKOFF x 2^(n-2) seconds (capped at 16), or Retry-After.
PODIUM_JUDGE_BACKOFF_SECONDS = float(env_str("PODIUM_JUDGE_BACKOFF_SECONDS", "1.0"))
# A judge that only fails transiently (refused, timeouts, 429, 5xx) is an outage, not failed items:
# the job probes it with waits growing up to PROBE seconds, and fails (metrics pending) once it
# has been unreachable for LIMIT seconds, across time slices (docs/judge.md).
PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS = env_int("PODIUM_JUDGE_OUTAGE_LIMIT_SECONDS", 1800)
PODIUM_JUDGE_OUTAGE_PROBE_SECONDS = env_int("PODIUM_JUDGE_OUTAGE_PROBE_SECONDS", 30)

# Hosted evaluation (docs/hosted.md). Its timing and retry settings are PODIUM_HOSTED_<NAME>
# where set, else the judge's (inference/settings.py). A submitted base URL must resolve to a
# public address: Podium's workers never call the server's own network (its database, a cloud
# metadata service) for a submitter, unless this says so (dev and test: the stand-in model on
# loopback).
PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS = env_bool("PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS", False)
# Questions in flight at once for one request.
PODIUM_HOSTED_CONCURRENCY = env_int("PODIUM_HOSTED_CONCURRENCY", 8)

# --- Secrets (docs/deployment.md, "Secrets and encryption keys").
# A model endpoint's API key is a credential its owner gives us: stored Fernet-encrypted under
# these keys (comma-separated; the first encrypts, every one decrypts, so a new key goes first
# and an old one stays until `manage.py rotate_endpoint_keys` has re-encrypted every row). Their
# own variable, never derived from SECRET_KEY. prod requires it; dev and test use a fixed
# throwaway key when it is unset.
PODIUM_FIELD_ENCRYPTION_KEYS = env_fernet_keys("PODIUM_FIELD_ENCRYPTION_KEYS")
# The judge's key is a server secret read from the environment: the only variables a judge
# endpoint may name (a blank name means "no key"). Anything else, SECRET_KEY above all, is
# refused when an endpoint is saved and never read when one is used.
PODIUM_JUDGE_KEY_ENV_ALLOWLIST = env_list("PODIUM_JUDGE_KEY_ENV_ALLOWLIST", ["OPENAI_API_KEY"])
# Never a judge key, whatever the allow-list says: the server's own secrets.
PODIUM_NEVER_A_JUDGE_KEY_ENV = frozenset(
    {
        "SECRET_KEY",
        "DATABASE_URL",
        "EMAIL_HOST_PASSWORD",
        "GITHUB_CLIENT_SECRET",
        "PODIUM_FIELD_ENCRYPTION_KEYS",
        "PODIUM_SHARED_CACHE_URL",
        "Q_REDIS_URL",
        # The private store's S3 credentials (docs/storage.md).
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
    }
)
if _refused := sorted(set(PODIUM_JUDGE_KEY_ENV_ALLOWLIST) & PODIUM_NEVER_A_JUDGE_KEY_ENV):
    raise ImproperlyConfigured(
        f"PODIUM_JUDGE_KEY_ENV_ALLOWLIST names server secrets: {', '.join(_refused)}."
    )

# Scoring runs (docs/workers.md): a run being scored beats every HEARTBEAT
# seconds; one silent for STALE seconds, or whose worker process on this host is gone, is handed
# out again by the reaper, which each worker process runs every WORKER_REAP seconds (and at once
# when the cluster replaces a killed worker). Scoring takes seconds, so these are seconds too.
PODIUM_SCORING_HEARTBEAT_SECONDS = env_int("PODIUM_SCORING_HEARTBEAT_SECONDS", 2)
PODIUM_SCORING_STALE_SECONDS = env_int("PODIUM_SCORING_STALE_SECONDS", 10)
PODIUM_WORKER_REAP_SECONDS = env_int("PODIUM_WORKER_REAP_SECONDS", 5)
# A queued run or job whose task has not reached the broker this long after it was queued (the
# process died between the commit and the broker, or the broker was down) is sent again by the
# backstop schedules, as is every one queued this long when the broker holds no task at all.
PODIUM_TASK_SEND_GRACE_SECONDS = env_int("PODIUM_TASK_SEND_GRACE_SECONDS", 60)
# A board whose inputs changed this long ago without the change in its rows is rebuilt by the
# board reaper (its refresh died with its process or failed; docs/boards.md). Longer than a
# large board's recompute (~6 s at 100,000 entries), so a refresh under way is not doubled.
PODIUM_BOARD_STALE_SECONDS = env_int("PODIUM_BOARD_STALE_SECONDS", 30)
if PODIUM_SCORING_STALE_SECONDS < 3 * PODIUM_SCORING_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "PODIUM_SCORING_STALE_SECONDS must be at least 3 heartbeats "
        "(PODIUM_SCORING_HEARTBEAT_SECONDS), or a busy worker would look dead."
    )

# --- Email: submitters' notifications (nominated, access requested, verified, rejected, failed
# runs; docs/deployment.md). Django 6.1's MAILERS: the old EMAIL_BACKEND / EMAIL_HOST settings
# are deprecated and refused beside it, so the same environment variables fill MAILERS instead.
# SMTP by default; dev prints mail to the console; pytest swaps every mailer for the in-memory
# one (django.core.mail.outbox).
_SMTP_EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"


def mailers_from_env(default_backend: str) -> dict[str, dict[str, Any]]:
    """MAILERS with a "default" mailer: the backend named by EMAIL_BACKEND (else
    `default_backend`); the SMTP backend takes its server from EMAIL_HOST, EMAIL_PORT,
    EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS and EMAIL_TIMEOUT. Other backends get
    no options: Django refuses options a backend does not know."""
    backend = env_str("EMAIL_BACKEND", default_backend)
    if backend != _SMTP_EMAIL_BACKEND:
        return {"default": {"BACKEND": backend}}
    options = {
        "host": env_str("EMAIL_HOST", "localhost"),
        "port": env_int("EMAIL_PORT", 25),
        "username": env_str("EMAIL_HOST_USER"),
        "password": env_str("EMAIL_HOST_PASSWORD"),
        "use_tls": env_bool("EMAIL_USE_TLS", default=False),
        # A stuck mail server must not hold a worker or a request for long; a failed send is
        # logged and kept on the notification.
        "timeout": env_int("EMAIL_TIMEOUT", 10),
    }
    return {"default": {"BACKEND": backend, "OPTIONS": options}}


MAILERS = mailers_from_env(_SMTP_EMAIL_BACKEND)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Podium <podium@localhost>")
# Where submitters reach the maintainers when a benchmark has no contact_url of its own.
PODIUM_CONTACT_EMAIL = env_str("PODIUM_CONTACT_EMAIL", "podium@localhost")
# The site's address as the submitter reaches it, for the links in emails (no trailing slash).
PODIUM_SITE_URL = env_str("PODIUM_SITE_URL", "http://127.0.0.1:8000")
# The demo's stand-in model's base URL, named beside the model endpoint form (issue 32): set by
# the development settings from the port `make run` starts it on; "" elsewhere.
PODIUM_DEMO_STANDIN_MODEL_URL = ""

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Replaces Django's default "django" handler, which would print every line a second time.
        "django": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        # SQL at DEBUG is noise unless asked for explicitly.
        "django.db.backends": {"level": env_str("DB_LOG_LEVEL", "WARNING").upper()},
        # The judge's HTTP client logs every request at INFO: thousands of lines per job.
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        # axes logs each failed sign-in at INFO and WARNING; lockouts are the WARNINGs that matter.
        "axes": {"level": "WARNING"},
    },
}
