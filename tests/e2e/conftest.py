"""The e2e tests reuse the submissions fixtures (a private folder per test, the small test set,
a well-formed upload for it), on MedVidBench as defined, so the status page and the board show
its real metrics and ranking."""

import pytest

from tests.e2e.browser import ACTIVE_WATCHES, csp_failure
from tests.submissions import conftest as submissions_fixtures

private_dir = submissions_fixtures.private_dir
records = submissions_fixtures.records
medvidbench = submissions_fixtures.medvidbench
predictions_for = submissions_fixtures.predictions_for
perfect_predictions = submissions_fixtures.perfect_predictions
cluster = submissions_fixtures.cluster


@pytest.fixture
def benchmark(medvidbench):
    """MedVidBench with the small test set active, public, so /b/<slug>/ is open to everyone."""
    if not medvidbench.is_public:
        medvidbench.is_public = True
        medvidbench.save(update_fields=["is_public"])
    return medvidbench


def _untaken_violations() -> list[str]:
    return [violation for watch in ACTIVE_WATCHES for violation in watch.take()]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail the test itself (not only its teardown) when a page it drove violated the
    Content-Security-Policy (tests/e2e/browser.py watches every page). A test that failed
    anyway gets the violations as a note on its error."""
    try:
        result = yield
    except BaseException as error:
        if violations := _untaken_violations():
            error.add_note(str(csp_failure(violations)))
        raise
    if violations := _untaken_violations():
        raise csp_failure(violations)
    return result
