"""The next step an entry's refusals and admin page name, in every verification state (the
re-run's steps are `verifying.steps`, tested in tests/verifying/test_admin.py)."""

import pytest

from submissions.enums import SubmissionSource
from submissions.enums import VerificationStatus as V
from submissions.next_step import next_step
from tests.submissions.factories import scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (V.COMMUNITY, "nominate it (the action “Nominate for the Official board”)"),
        (V.NOMINATED, "record the contact (the action “Record that the authors were contacted”)"),
        (V.CONTACTED, "record the access (the action “Record that model access was granted”)"),
        (V.REJECTED, "nominate it again (the action “Nominate for the Official board”)"),
        (V.WITHDRAWN, "nominate it again (the action “Nominate for the Official board”)"),
        (V.VERIFIED, None),
    ],
)
def test_the_early_steps_link_to_the_entry_in_the_list(medvidbench, state, text):
    entry = scored_entry(medvidbench, "Entry", {"CVS_acc": 0.5}, verification_status=state)
    step = next_step(entry)
    if text is None:
        assert step is None
    else:
        assert (step.text, step.url) == (
            text,
            f"/admin/submissions/submission/?id__exact={entry.pk}",
        )


def test_evaluate_only_entries_and_the_maintainers_results_have_none(medvidbench):
    private = scored_entry(medvidbench, "Private", {"CVS_acc": 0.5}, publish=False)
    imported = scored_entry(medvidbench, "Imported", {"CVS_acc": 0.5})
    imported.source = SubmissionSource.IMPORTED
    assert next_step(private) is None
    assert next_step(imported) is None
