import factory

from submissions.models import Evaluation, Submission
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import BenchmarkFactory


class SubmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Submission

    benchmark = factory.SubFactory(BenchmarkFactory)
    owner = factory.SubFactory(UserFactory)
    model_name = factory.Sequence(lambda n: f"Model-{n}")
    institution = "Test University"
    contact_email = "author@example.org"


class EvaluationFactory(factory.django.DjangoModelFactory):
    """A run in `received`; tests set other states explicitly."""

    class Meta:
        model = Evaluation

    submission = factory.SubFactory(SubmissionFactory)
    requested_by = factory.LazyAttribute(lambda evaluation: evaluation.submission.owner)
