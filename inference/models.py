"""The engine's abstract bases: what every endpoint, job and item table of its users has
(docs/inference.md). The tables are the users': `judging` (JudgeEndpoint, JudgeJob, JudgeItem),
`verifying` (ModelEndpoint, RerunJob, RerunItem) and hosted evaluation. A subclass overrides a
field where its kind differs (the judge's endpoint defaults to 10 requests in flight and a 30 s
timeout, a model's to 4 and 120 s) and adds its own.

`Job` and `Item` carry the fields the engine writes (`inference.lifecycle`: the status, its
times and the worker; the counters and each item's attempts, calls and tokens). A `KeyedEndpoint`
holds an API key its owner gives us: Fernet-encrypted (`core.encryption`), bound to the origin
of the base URL it was entered for, written only by `inference.keys`.
"""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.views.decorators.debug import sensitive_variables

from core import encryption

from . import guard
from .client import EndpointConfig, EndpointError
from .enums import ItemState, JobStatus


def url_origin(url: str) -> str:
    """ "scheme://host:port" of a URL, lower-cased, the port explicit (80/443 when omitted): what
    an endpoint's API key is bound to. "" for a URL without a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not host:
        return ""
    if port is None:
        port = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}:{port}"


def private_endpoints_allowed() -> bool:
    """Whether a base URL may point at a loopback, private or link-local address: in
    development and tests (the stand-in model on loopback), never in production unless
    PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS says so (docs/hosted.md, "Security"); the same for a
    re-run's model endpoint."""
    return bool(getattr(settings, "PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS", False))


def endpoint_address_problem(base_url: str) -> str:
    """Why Podium's workers must not call `base_url` (""): a host that does not resolve, or
    one whose address is loopback, private, link-local, multicast or reserved (the server's
    own network: its database, a cloud metadata service), unless private endpoints are
    allowed. What a form says; the client checks the same rule again at every connection
    (`inference.transport`), so a DNS answer that changes later is refused there."""
    host = urlsplit(base_url.strip()).hostname or ""
    if not host:
        return "Give a base URL with a host name."
    if private_endpoints_allowed():
        return ""
    try:
        infos = guard.resolve(host, 443)
    except (OSError, UnicodeError):
        return f"The host {host!r} of the base URL does not resolve."
    for info in infos:
        if guard.address_problem(info[4][0]):
            return (
                f"The base URL's host {host!r} is at {info[4][0]}, an address of a private "
                "network; Podium calls model endpoints on the public internet only."
            )
    return ""


class EndpointKeyError(EndpointError):
    """The endpoint's API key cannot be used: its address no longer matches the host the key
    was entered for, or no configured encryption key opens it. Nothing is sent
    (`KeyedEndpoint.config`); the key has to be entered again."""


class Endpoint(models.Model):
    """An OpenAI-compatible chat endpoint: where it is, which model it serves, how hard the
    engine may push it (requests in flight, attempts per item, seconds per call). One of a
    scope's endpoints is active (each subclass's constraint says which scope). `endpoint_name`
    names it in messages ("the model endpoint refused the request ...")."""

    endpoint_name: ClassVar[str] = "endpoint"

    base_url = models.CharField(
        max_length=300,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="e.g. https://models.example.org/v1",
    )
    model = models.CharField(max_length=200, help_text="The model name the endpoint expects.")
    concurrency = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(256)],
        help_text="Requests in flight at once.",
    )
    max_attempts = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    timeout_seconds = models.FloatField(
        default=120.0, validators=[MinValueValidator(0.1), MaxValueValidator(1800.0)]
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.model} at {self.base_url}"

    def allows_private_addresses(self) -> bool:
        """Whether the client may connect to this endpoint on a loopback, private or link-local
        address (`inference.transport` checks the address of every connection): a model
        endpoint someone else chose only where PODIUM_HOSTED_ALLOW_PRIVATE_ENDPOINTS says so
        (development and tests: the stand-ins on loopback; hosted evaluation and re-runs
        alike). A subclass configured only by superusers may allow them (the judge's)."""
        return private_endpoints_allowed()

    def endpoint_config(self, *, api_key: str, temperature: float = 0.0) -> EndpointConfig:
        """What `inference.client.ChatClient` needs, with the key the subclass found."""
        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key=api_key,
            temperature=temperature,
            timeout_seconds=self.timeout_seconds,
            concurrency=self.concurrency,
            max_attempts=self.max_attempts,
            allow_private=self.allows_private_addresses(),
        )

    def config(self) -> EndpointConfig:
        """The client's configuration; a subclass with a key overrides this to hand it over."""
        return self.endpoint_config(api_key="")


class KeyedEndpoint(Endpoint):
    """An endpoint whose API key is a credential its owner gives us: entered by its owner (or a
    superuser), stored Fernet-encrypted (`core.encryption`), never shown again, and bound to
    the origin (scheme, host, port) of the base URL it was entered for: `config()` refuses to
    hand it to any other. The key fields are written only by `inference.keys` (through the
    subclass's services); no form or serializer includes them. `api_key_needed` without a key
    means one must be entered before the endpoint is used (an endpoint whose address moved to
    another host). `key_holder` says in messages who may enter it."""

    key_holder: ClassVar[str] = "its owner or a superuser"

    api_key_encrypted = models.TextField(
        blank=True, editable=False, help_text="The API key as a Fernet token; never the key."
    )
    api_key_origin = models.CharField(
        max_length=300,
        blank=True,
        editable=False,
        help_text="scheme://host:port the key was entered for; it is sent nowhere else.",
    )
    api_key_set_at = models.DateTimeField(null=True, blank=True, editable=False)
    api_key_needed = models.BooleanField(
        default=False,
        editable=False,
        help_text="The endpoint wants an API key (set when one is entered).",
    )

    class Meta:
        abstract = True

    def clean(self) -> None:
        # A key belongs in the key field, where it is encrypted; a URL is shown and logged.
        parts = urlsplit(self.base_url.strip())
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ValidationError(
                {
                    "base_url": "Give the base URL without a user name, password, query or "
                    "fragment; an API key goes in the key field, where it is stored encrypted."
                }
            )
        # Said when the endpoint is entered; the client refuses the address at every
        # connection anyway (`inference.transport`), a row written around this check included.
        if not self.allows_private_addresses():
            problem = endpoint_address_problem(self.base_url)
            if problem:
                raise ValidationError({"base_url": problem})

    @property
    def origin(self) -> str:
        return url_origin(self.base_url)

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key_encrypted)

    @property
    def missing_key(self) -> bool:
        """It wants a key and has none (enter one before it is used)."""
        return self.api_key_needed and not self.has_api_key

    @property
    def key_moved(self) -> bool:
        """It has a key, entered for another address than today's (it is never sent there)."""
        return self.has_api_key and self.api_key_origin != self.origin

    @property
    def key_status(self) -> str:
        """What anyone may see about the key: never the key, nor a part of it."""
        if self.has_api_key:
            assert self.api_key_set_at is not None
            return f"set on {self.api_key_set_at:%Y-%m-%d %H:%M} UTC"
        return "needed, not entered" if self.api_key_needed else "not set"

    @sensitive_variables("api_key")  # error reports never show the decrypted key
    def config(self) -> EndpointConfig:
        """What the client needs to call the endpoint, the key decrypted. Refuses
        (`EndpointKeyError`) when the base URL's origin is not the one the key was
        entered for, so however the row was changed the key reaches only its own host."""
        api_key = ""
        if self.has_api_key:
            if not self.api_key_origin or self.origin != self.api_key_origin:
                raise EndpointKeyError(
                    f"the {self.endpoint_name}'s API key was entered for "
                    f"{self.api_key_origin or 'another address'} and is never sent to "
                    f"{self.origin or self.base_url}; {self.key_holder} has to enter the key "
                    "again for the new address"
                )
            try:
                api_key = encryption.decrypt(self.api_key_encrypted)
            except encryption.DecryptionError as error:
                raise EndpointKeyError(f"the {self.endpoint_name}'s API key: {error}") from None
        # temperature 0: a model's answers should be as reproducible as the model allows.
        return self.endpoint_config(api_key=api_key)


class Job(models.Model):
    """A job the engine runs in time slices (`inference.lifecycle`). `status` has one writer
    per kind (the subclass's docstring names it; each calls `inference.lifecycle.set_status`).
    The counters are progress for the status pages; the items are the truth they are
    recomputed from."""

    status = models.CharField(max_length=10, choices=JobStatus, default=JobStatus.QUEUED)
    message = models.TextField(blank=True)
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    items_failed = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)

    runs = models.PositiveSmallIntegerField(default=0, help_text="Times a worker picked it up.")
    interruptions = models.PositiveSmallIntegerField(
        default=0, help_text="Times its worker died while running it (it fails at the limit)."
    )
    worker = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the job was last handed back to the queue (`set_status`; None: queued since it was
    # created), and when its task last reached the broker (`lifecycle.record_sent`, called by
    # the kind's enqueue): a job queued after it was last sent was never handed to the broker,
    # and the minute's Schedule sends it (`lifecycle.requeue_lost`).
    queued_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def state(self) -> JobStatus:
        return JobStatus(self.status)

    @property
    def items_finished(self) -> int:
        return self.items_done + self.items_failed

    @property
    def percent(self) -> int:
        if not self.items_total:
            return 100 if self.state == JobStatus.DONE else 0
        return int(100 * self.items_finished / self.items_total)


class Item(models.Model):
    """One question of a job, persisted with its state so a job resumes where a dead worker
    left it: what it cost over every attempt, and the last error. A subclass labels `state` in
    its own words (overriding the field with its `ItemState`, the same values)."""

    state = models.CharField(max_length=10, choices=ItemState, default=ItemState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    calls = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
