"""factory_boy factories for hosted evaluation's tables: boring valid defaults; a test sets any
state explicitly (the services are tested on their own)."""

import factory

from benchmark.selectors import active_testset
from hosting.models import HostedEndpoint, HostedItem, HostedRequest
from tests.accounts.factories import UserFactory


class HostedEndpointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = HostedEndpoint

    owner = factory.SubFactory(UserFactory)
    base_url = "https://models.example.org/v1"
    model = "hosted-7b"


class HostedRequestFactory(factory.django.DjangoModelFactory):
    """A queued request on `benchmark` (which the test passes), without items."""

    class Meta:
        model = HostedRequest

    owner = factory.SubFactory(UserFactory)
    requested_by = factory.SelfAttribute("owner")
    endpoint = factory.SubFactory(HostedEndpointFactory, owner=factory.SelfAttribute("..owner"))
    test_set = factory.LazyAttribute(lambda request: active_testset(request.benchmark))
    model_name = factory.Sequence(lambda n: f"Queued model {n}")
    max_tokens = 2_000_000
    requests_per_minute = 600
    max_frames = 8


class HostedItemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = HostedItem

    request = factory.SubFactory(HostedRequestFactory)
    sample_index = factory.Sequence(lambda n: n)
