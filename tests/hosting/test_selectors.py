"""The queue's words for each state of a request (factory rows, states set by the test): the
category a starting request asks first shows running, a finished category stays finished
while the request goes on, a failure's reason and a cancel show in every category (nothing
was published, also of a category whose questions were all answered), positions count only
requests waiting for their first run that the viewer may see, and the page stops polling once
every entry has its scores or its run has ended."""

import pytest

from hosting import selectors
from hosting.enums import Failure, ItemState, RequestStatus
from submissions.enums import EvaluationStatus, FailureCode
from tests.accounts.factories import UserFactory
from tests.submissions.factories import EvaluationFactory, SubmissionFactory

from .factories import HostedItemFactory, HostedRequestFactory

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def with_items(request, answered=(0, 0)):
    """40 close-ended and 16 open-ended items, the first `answered` of each done."""
    for index in range(56):
        category = "close_ended" if index < 40 else "open_ended"
        done = index < answered[0] if index < 40 else index - 40 < answered[1]
        HostedItemFactory(
            request=request,
            sample_index=index,
            category=category,
            state=ItemState.DONE if done else ItemState.PENDING,
        )
    return request


def texts(benchmark, request):
    row = next(
        r for r in selectors.queue_rows(benchmark, viewer=None) if r.request_id == request.pk
    )
    return row.position, [cell.text for cell in row.cells]


def test_each_state_in_the_queues_words(benchmark):
    waiting = with_items(HostedRequestFactory(benchmark=benchmark))
    starting = with_items(
        HostedRequestFactory(benchmark=benchmark, status=RequestStatus.RUNNING, runs=1)
    )
    halfway = with_items(
        HostedRequestFactory(benchmark=benchmark, status=RequestStatus.RUNNING, runs=1), (40, 3)
    )
    paused = with_items(
        HostedRequestFactory(benchmark=benchmark, status=RequestStatus.QUEUED, runs=1), (12, 0)
    )
    failed = with_items(
        HostedRequestFactory(
            benchmark=benchmark, status=RequestStatus.FAILED, failure=Failure.TOKEN_CAP
        ),
        (40, 2),
    )
    cancelled = with_items(
        HostedRequestFactory(benchmark=benchmark, status=RequestStatus.CANCELLED), (5, 0)
    )

    assert texts(benchmark, waiting) == (1, ["pending", "pending"])
    assert texts(benchmark, starting) == (None, ["running 0/40", "pending"])
    assert texts(benchmark, halfway) == (None, ["finished", "running 3/16"])
    assert texts(benchmark, paused) == (None, ["running 12/40", "pending"])
    assert texts(benchmark, failed) == (
        None,
        ["failed: the token cap was reached: nothing was published"] * 2,
    )
    assert texts(benchmark, cancelled) == (None, ["cancelled", "cancelled"])
    order = [row.request_id for row in selectors.queue_rows(benchmark, viewer=None)]
    # Running first, then queued in their order, then the ended ones.
    assert order[:2] == [starting.pk, halfway.pk]
    assert order[2:4] == [waiting.pk, paused.pk]
    assert set(order[4:]) == {failed.pk, cancelled.pk}


def test_a_request_failed_after_its_last_answer_says_failed_with_its_reason(benchmark):
    """Issue 31, point 3: every question answered, then the entry refused: it read "finished /
    finished"."""
    refused = with_items(
        HostedRequestFactory(
            benchmark=benchmark, status=RequestStatus.FAILED, failure=Failure.ENTRY_REFUSED
        ),
        (40, 16),
    )

    assert texts(benchmark, refused) == (
        None,
        ["failed: the answers were not accepted as an entry"] * 2,
    )


def test_positions_count_only_the_requests_the_viewer_sees(benchmark):
    """Issue 31, point 3: another's evaluate-only request waiting in between made a gap."""
    owner = UserFactory()
    first = HostedRequestFactory(benchmark=benchmark)
    hidden = HostedRequestFactory(benchmark=benchmark, owner=owner, publish=False)
    last = HostedRequestFactory(benchmark=benchmark)

    def positions(viewer):
        rows = selectors.queue_rows(benchmark, viewer=viewer)
        return [(row.request_id, row.position) for row in rows]

    assert positions(None) == [(first.pk, 1), (last.pk, 2)]
    assert positions(UserFactory()) == [(first.pk, 1), (last.pk, 2)]
    assert positions(owner) == [(first.pk, 1), (hidden.pk, 2), (last.pk, 3)]
    assert selectors.request_page(last, viewer=last.owner).row.position == 2


@pytest.mark.parametrize(
    ("run_status", "moving", "linked"),
    [
        (EvaluationStatus.QUEUED, True, False),
        (EvaluationStatus.COMPLETE, False, True),
        (EvaluationStatus.FAILED, False, False),
    ],
)
def test_the_queue_polls_until_every_entry_has_its_scores_or_its_run_ended(
    benchmark, run_status, moving, linked
):
    submission = SubmissionFactory(benchmark=benchmark)
    failed = run_status == EvaluationStatus.FAILED
    EvaluationFactory(
        submission=submission,
        status=run_status,
        error_code=FailureCode.INTERNAL_ERROR if failed else "",
        error_message="stopped" if failed else "",
    )
    with_items(
        HostedRequestFactory(benchmark=benchmark, status=RequestStatus.DONE, submission=submission),
        (40, 16),
    )

    rows = selectors.queue_rows(benchmark, viewer=None)

    assert [cell.text for cell in rows[0].cells] == ["finished", "finished"]
    assert selectors.queue_is_moving(rows) is moving
    assert bool(rows[0].entry_url) is linked
