import factory
from django.utils import timezone

from core.text import confusable_key
from submissions.enums import BoardKind, EvaluationStatus
from submissions.models import BoardPlacement, Evaluation, Submission
from tests.accounts.factories import UserFactory
from tests.benchmark.factories import BenchmarkFactory


class SubmissionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Submission

    benchmark = factory.SubFactory(BenchmarkFactory)
    owner = factory.SubFactory(UserFactory)
    model_name = factory.Sequence(lambda n: f"Model-{n}")
    # As the writers set it (submissions.names): the unique index of published look-alikes.
    model_name_skeleton = factory.LazyAttribute(lambda entry: confusable_key(entry.model_name))
    institution = "Test University"
    contact_email = "author@example.org"


class EvaluationFactory(factory.django.DjangoModelFactory):
    """A run in `received`; tests set other states explicitly."""

    class Meta:
        model = Evaluation

    submission = factory.SubFactory(SubmissionFactory)
    requested_by = factory.LazyAttribute(lambda evaluation: evaluation.submission.owner)


class BoardPlacementFactory(factory.django.DjangoModelFactory):
    """A board row's placement (read as a `BoardEntry`). Boards are written by
    `recompute_board`; this is for tests of the reading side only."""

    class Meta:
        model = BoardPlacement

    submission = factory.SubFactory(SubmissionFactory, publish=True)
    benchmark = factory.SelfAttribute("submission.benchmark")
    evaluation = factory.SubFactory(
        EvaluationFactory,
        submission=factory.SelfAttribute("..submission"),
        status=EvaluationStatus.COMPLETE,
    )
    board = BoardKind.COMMUNITY
    rank = factory.Sequence(lambda n: n + 1)
    position = factory.SelfAttribute("rank")  # unique within a board, as the ranks are
    mean_rank = 1.0
    wins = 0


def scored_entry(
    benchmark,
    name,
    values,
    *,
    status=EvaluationStatus.COMPLETE,
    publish=True,
    owner=None,
    **submission_fields,
):
    """A submission with one run in `status` carrying `values` as its metrics (the state set
    by the test, as factories do). Missing metric keys are stored as None."""
    submission = SubmissionFactory(
        benchmark=benchmark,
        model_name=name,
        publish=publish,
        **({"owner": owner} if owner is not None else {}),
        **submission_fields,
    )
    keys = list(benchmark.metrics.values_list("key", flat=True))
    EvaluationFactory(
        submission=submission,
        status=status,
        metrics={key: values.get(key) for key in keys},
        scored_at=timezone.now(),
    )
    return submission
