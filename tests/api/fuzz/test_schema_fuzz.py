"""Schemathesis against the API's own schema (issue 31, point 5): every operation, every
check, in process (WSGI, loopback only), on a world with a published hosted entry, its
categories and model facts, as a signed-in stranger to that entry. A request the schema
allows is answered 2xx, 401, 403, 404, 409 or 429; one it refuses is answered 4xx; every
answer matches the schema's description of its status, headers and body; nothing answers
5xx.

Bounded: a fixed number of examples per operation, derandomized (a failure is the same on
every run and every CPU), no deadline (a loaded machine is not a failure). The schema is
the one the site serves (drf-spectacular's generator, as /api/schema/ builds it), loaded when
the module is: one test per operation, spread over pytest-xdist's workers."""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from accounts.services import create_api_token
from tests.accounts.factories import UserFactory
from tests.hosting.conftest import MODEL, run, score_entry, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

EXAMPLES = int(os.environ.get("PODIUM_FUZZ_EXAMPLES", "30"))

# What a submission's body must hold beyond its shape cannot be said by one schema for every
# benchmark: a predictions file whose rows are the test set's, and the model facts the
# benchmark asks for (docs/api.md, "What the schema cannot say"). A schema-shaped body is
# answered 400 naming each field, which every other check still holds to the schema.
EXCLUDED = {
    "submissions_create": [positive_data_acceptance],
    "hosted_create": [positive_data_acceptance],
}

schema = schemathesis.openapi.from_dict(
    SchemaGenerator().get_schema(request=None, public=True),
    config=schemathesis.config.SchemathesisConfig.from_dict(
        {"parameters": {"path.slug": "clinicalqa"}}
    ),
)
schema.app = get_wsgi_application()


@pytest.fixture(autouse=True)
def wsgi_site(settings):
    """The site as WSGI under schemathesis's Host, its database connection kept across
    requests as Django's test client keeps it (the test's transaction holds the world)."""
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "localhost"]
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(benchmark, owner, standin, django_capture_on_commit_callbacks):
    """A published hosted entry of `owner`'s, scored and on the Community board."""
    request = submit(benchmark, owner, base_url=standin.base_url, model=MODEL["good"])
    run(request, django_capture_on_commit_callbacks)
    score_entry(request, django_capture_on_commit_callbacks)
    request.refresh_from_db()
    return request


@pytest.fixture
def stranger_token():
    """Another account's token: the fuzzer is a signed-in stranger to the world's request."""
    _, secret = create_api_token(UserFactory(), name="fuzzer")
    return secret


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_does_what_its_schema_says(case, world, stranger_token):
    if "id" in case.path_parameters:
        # The world's request, or its entry: an id drawn at random names nothing.
        hosted = "/hosted/" in case.operation.path
        case.path_parameters["id"] = world.pk if hosted else world.submission_id
    case.call_and_validate(
        headers={"Authorization": f"Bearer {stranger_token}"},
        excluded_checks=EXCLUDED.get(case.operation.definition.raw["operationId"], []),
    )
