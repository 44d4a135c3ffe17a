"""The e2e tests reuse the submissions fixtures (a private folder per test, the small test set,
a well-formed upload for it), on MedVidBench as defined, so the status page and the board show
its real metrics and ranking."""

import pytest

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
