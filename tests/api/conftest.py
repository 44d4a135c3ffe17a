"""Fixtures for the API tests: the submissions fixtures (private folder, benchmarks, uploads)
and the entries with intervals (issue 12)."""

from tests.submissions.conftest import *  # noqa: F403
from tests.submissions.intervals_data import interval_benchmark, scored_entry  # noqa: F401
